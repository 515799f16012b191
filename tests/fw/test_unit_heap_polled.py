# A host on the line all through each game's largest scenario (status twice a second, a pull's listing and
# read every other second), in the board's heap as test_unit_heap_*.py: the game ends as it does alone, every
# request is answered, and the pull is told to wait for the game's end (issue 27: a pull during a big game
# crashed it). The line is maus.sim.uart; tests/fw/unitheap.py check_polled.
from unitheap import check_polled

HEAP_BUDGET = "board"


def test_mausgeflippt_six_players_polled():
    check_polled("mg-6p-ties", "mg")


def test_mim_b_five_players_polled():
    check_polled("mim-b-5p", "mim")


def test_mim_c_five_players_polled():
    check_polled("mim-c-5p", "mim")


def test_mms_four_players_polled():
    check_polled("mms-4p-full", "mms")
