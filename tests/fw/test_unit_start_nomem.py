# A game's start that runs out of memory (issue 27: a 300-game season lost one unit to a MemoryError building M is
# for Mouse A's catalog at a game's start, the heap fragmented past use): the unit does not crash. The start tries
# once more after a collect; when that fails too, the players are told and join again. Made to happen here: the
# start's catalog step (maus.unit.start game_catalog) raises MemoryError, once or every time. A whole game in the
# board's heap, as test_unit_heap_*.py (tests/fw/unitheap.py).
import maus
from unitheap import ON_MPY, _expected, _run

HEAP_BUDGET = "board"


def _failing(times):
    orig = maus.call_unloaded
    left = [times]

    def call_unloaded(modname, fn, *args):
        if fn == "game_catalog" and left[0]:
            left[0] -= 1
            raise MemoryError("memory allocation failed, allocating 296 bytes")
        return orig(modname, fn, *args)

    return orig, call_unloaded, left


def test_a_start_out_of_memory_once_is_tried_again_and_the_game_is_played():
    if not ON_MPY:
        return
    orig, fake, left = _failing(1)
    maus.call_unloaded = fake  # (maus.unit.begin, loaded at each start, takes it)
    try:
        unit, ends = _run("mim-a-3p", logs=1)
    finally:
        maus.call_unloaded = orig
    assert left[0] == 0  # it did fail once
    assert unit.mode == "end" and len(ends) == 1, unit.mode
    assert {str(k): v for k, v in unit.last_summary["scores"].items()} == _expected("mim-a-3p")["scores"]


def test_a_start_out_of_memory_twice_sends_the_players_back_to_joining():
    if not ON_MPY:
        return
    orig, fake, left = _failing(1000)
    maus.call_unloaded = fake
    try:
        unit, ends = _run("mim-a-3p", logs=0)  # no game began: no log
    finally:
        maus.call_unloaded = orig
    assert left[0] < 1000
    assert unit.mode == "join", unit.mode  # alive, the players joining again (the game's presses join them)
