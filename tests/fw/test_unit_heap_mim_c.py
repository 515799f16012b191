# M is for Mouse variant C, five players: a whole game in the board's heap (one process a game, as a board boots once a game; tests/fw/unitheap.py).
from unitheap import check

HEAP_BUDGET = "board"  # the board's heap plus the measured simulator share, as issue 15 item 3 asks (tests/conftest.py); the 80 KB game budget is a bench figure (esp32.heap_peak.*)


def test_mim_variant_c_five_players_in_the_board_heap():
    check("mim-c-5p")
