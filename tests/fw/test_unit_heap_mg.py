# Mausgeflippt, six players: a whole game in the board's heap (one process a game, as a board boots once a game; tests/fw/unitheap.py).
from unitheap import check

HEAP_BUDGET = "board"  # capped at the board's heap; the 80 KB game budget is a bench figure until it fits (tests/conftest.py, host/mausbox/heapbudget.py budget_cap)


def test_mausgeflippt_six_players_in_the_board_heap():
    check("mg-6p-ties")
