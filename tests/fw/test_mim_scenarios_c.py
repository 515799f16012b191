# The variant C scenario file through the shell stand-in of test_mim_scenarios (one variant a file: a
# 96 KB heap holds one variant's code at a time).
import maus.games.mim.chips  # noqa: F401  (compiled first, while the heap is in one piece)
from test_mim_scenarios import check


def test_variant_c_four_players():
    sh = check("mim-c-4p", 1)
    e = sh.game.e
    assert e.box == 2 and sum(e.chips[p] + e.placed[p] for p in e.ids) == 28 and "c_round" in sh.t.said
