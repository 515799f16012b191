# Mausgeflippt, six players: a whole game in the board's heap (one process a game, as a board boots once a game; tests/fw/unitheap.py).
from unitheap import check


def test_mausgeflippt_six_players_in_the_board_heap():
    check("mg-6p-ties")
