# The unit's garbage collections hold the buttons' soft IRQs off for ~5.8 ms on the board (maus.sim.world
# Esp32Timing.gc_pause_us): a press whose edge comes in one gets its first edge that late. The idle loop collected
# every 500 ms, and ~1 % of the presses outside race windows met one (issue 27: the season bench's capture p99,
# 0.4-2 ms with a host polling against 0.1-0.2 ms). It now collects right after it has taken an input or a timer's, and
# in the idle loop once each 2 s at most, never while a press is being taken or may come (maus.unit.core
# Unit._collect); race windows and phase changes collect where no press is timed. Whole games in the board's heap, as
# test_unit_heap_*.py (tests/fw/unitheap.py).
from unitheap import ON_MPY, _expected, _run

HEAP_BUDGET = "board"


def _watched(name, logs):
    """Play scenario `name` (None: a quiet minute at the menu); -> (unit, collections: for each, the virtual µs,
    whether a race window was open, and what of a player's input was in progress then)."""
    from maus.sim import hw as sim

    seen = []
    unit = [None]
    orig_collect = sim.Hardware.collect
    orig_fin = sim.Hardware.finished_and_idle

    def collect(hw):
        u = unit[0]
        busy = ""
        if u is not None:
            cap = u.capture
            now = hw.ticks_ms()
            if cap.pending:
                busy += "an edge not yet served; "
            if cap.busy():
                busy += "a press settling or a release's debounce; "
            if u.gest.next_due(now) >= 0:
                busy += "a button down or a click a second press would make a double; "
        seen.append((hw.world.now, u is not None and u.race, busy))
        orig_collect(hw)

    def finished_and_idle(hw, u):
        unit[0] = u
        return orig_fin(hw, u)

    sim.Hardware.collect = collect
    sim.Hardware.finished_and_idle = finished_and_idle
    try:
        u, ends = _run(name, logs=logs)
    finally:
        sim.Hardware.collect = orig_collect
        sim.Hardware.finished_and_idle = orig_fin
    return u, ends, seen


def _check_game(name):
    u, ends, seen = _watched(name, 1)
    assert u.mode == "end" and len(ends) == 1, u.mode
    assert {str(k): v for k, v in u.last_summary["scores"].items()} == _expected(name)["scores"]
    bad = [(t // 1000, why) for t, race, why in seen if why and not race]
    assert not bad, "%d of %d collections came while a player's input was being taken: %s" % (
        len(bad), len(seen), bad[:5])
    return seen


def test_no_collection_while_a_players_input_is_being_taken_mms():
    if ON_MPY:  # (CPython has no heap of the board's to collect)
        _check_game("mms-4p-full")  # clicks, double presses, long presses through a whole game


def test_no_collection_while_a_players_input_is_being_taken_mim():
    if ON_MPY:
        _check_game("mim-a-3p")  # joins, claims in race windows, passes


def test_an_idle_unit_that_makes_little_garbage_collects_seldom():
    if not ON_MPY:
        return
    u, _, seen = _watched(None, 0)  # a quiet minute at the menu
    assert u.mode == "menu"
    # every 500 ms before: ~120 collections in the minute, ~1.2 % of the time with the buttons' IRQs held off; now
    # one each 2 s (maus.unit.core _GC_IDLE_MS) at most
    assert len(seen) <= 32, len(seen)
