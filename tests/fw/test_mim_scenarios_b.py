# The variant B scenario file through the shell stand-in of test_mim_scenarios (one variant a file: a
# 96 KB heap holds one variant's code at a time).
import maus.games.mim.leader  # noqa: F401  (compiled first, while the heap is in one piece)
from test_mim_scenarios import check


def test_variant_b_three_players():
    sh = check("mim-b-3p", 1)
    assert sh.game.e.leader == 3 and sh.game.e.laid == 23
