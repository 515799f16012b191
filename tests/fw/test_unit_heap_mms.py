# Mucks Maeuschen Still, four players: a whole game in the board's heap (one process a game, as a board boots once a game; tests/fw/unitheap.py).
from unitheap import check

HEAP_BUDGET = "game"  # capped at the 80 KB game budget with its margin (tests/conftest.py, host/mausbox/heapbudget.py budget_cap)


def test_mms_four_players_in_the_board_heap():
    check("mms-4p-full")
