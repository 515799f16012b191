# Mausgeflippt property tests: random legal play on a simulated table (test_mausgeflippt_sim), judged by
# an independent oracle. Always: mice caught + mice left = 32, scores = the breakdown formula, the unit's
# counts = the table's, the winners follow the tie-break, and the game ends.
import maus.games.mausgeflippt.rules  # noqa: F401 - the game first: a small heap compiles it best
from test_mausgeflippt_sim import _play


def test_random_legal_play_keeps_the_books_and_always_ends():
    ends = {"last_mouse": 0, "last_cheese": 0}
    for seed in range(1, 13):  # seed 2 ends on the last mouse, the others on the last cheese
        sim = _play(seed)
        ends[sim.g.reason] += 1
    assert ends["last_mouse"] and ends["last_cheese"]  # both endings are reached

