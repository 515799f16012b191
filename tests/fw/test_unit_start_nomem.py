# A game's start that runs out of memory (issue 27: a 300-game season lost one unit to a MemoryError building M is
# for Mouse A's catalog at a game's start, the heap fragmented past use): the unit does not crash. The start tries
# once more after a collect; when that fails too, the players are told and join again. Made to happen here: the
# start's catalog step (maus.unit.start game_catalog) raises MemoryError, once or every time. A whole game in the
# board's heap, as test_unit_heap_*.py (tests/fw/unitheap.py).
from unitheap import ON_MPY, _expected, _run

HEAP_BUDGET = "board"


class _Failing:
    """A `host` for unitheap._run with no requests: its arm(), called after the unit's hardware is made and before
    the unit boots, loads maus.unit.start and makes its game_catalog fail `times` times. Loaded before the unit's
    marks, the module stays through its moments, and each start's game_catalog is the failing one."""

    def __init__(self, times):
        self.left = times

    def __call__(self, end_ms):
        return []

    def arm(self, hw):
        import sys

        import maus.unit.start  # noqa: F401

        start = sys.modules["maus.unit.start"]
        orig = start.game_catalog

        def game_catalog(*args):
            if self.left:
                self.left -= 1
                raise MemoryError("memory allocation failed, allocating 296 bytes")
            return orig(*args)

        start.game_catalog = game_catalog


def test_a_start_out_of_memory_once_is_tried_again_and_the_game_is_played():
    if not ON_MPY:
        return
    f = _Failing(1)
    unit, ends = _run("mim-a-3p", logs=1, host=f)
    assert f.left == 0  # it did fail once
    assert unit.mode == "end" and len(ends) == 1, unit.mode
    assert {str(k): v for k, v in unit.last_summary["scores"].items()} == _expected("mim-a-3p")["scores"]


def test_a_start_out_of_memory_twice_sends_the_players_back_to_joining():
    if not ON_MPY:
        return
    f = _Failing(1000)
    unit, ends = _run("mim-a-3p", logs=0, host=f)  # no game began: no log
    assert f.left < 1000
    assert unit.mode == "join", unit.mode  # alive, the players joining again (the game's presses join them)
