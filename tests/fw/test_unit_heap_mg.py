# Mausgeflippt, six players: a whole game in the board's heap (one process a game, as a board boots once a game; tests/fw/unitheap.py).
from unitheap import check

HEAP_BUDGET = "board"  # capped at the board's heap; the 80 KB game budget is a bench figure until it fits (tests/conftest.py, host/mausbox/heapbudget.py budget_cap)

# Known and open (issue 15): six players of Mausgeflippt peak at ~90.5 KB board share (bench/bench_heap.py) and
# run out at the game's start (its game_start record) in the board's 111,936 bytes. Remove this line when it fits.
OVER_BUDGET = "issue 15: Mausgeflippt with six players does not yet fit the board heap"


def test_mausgeflippt_six_players_in_the_board_heap():
    check("mg-6p-ties")
