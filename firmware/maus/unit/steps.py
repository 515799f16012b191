# The boot from power-on to the main loop's door (maus.unit.boot_steps, which loads this module for it and lets it go
# again): its code need not stay in RAM while the unit runs (maus.unit does: main() is on the stack). Each step runs
# with little else in RAM, and its modules go again before the next (maus.unit.boot, loaded for each).
from maus import moment


def steps(hw, host):
    """The board check and the logs' recovery, the main loop's Unit, the self-test; with `host` the host's link
    (maus.unit.main). -> the Unit."""
    with moment():
        import maus.unit.boot

        board_problems, recovered = maus.unit.boot.prepare(hw)
    hw.wdt_feed()
    from maus.unit.core import Unit

    unit = Unit(hw, recovered=recovered)
    hw.wdt_feed()
    unit.status["problems"] = list(hw.problems) + board_problems
    with moment():
        import maus.unit.boot

        maus.unit.boot.selftest(unit)
    print("MAUSBOX READY", unit.status["version"])
    hw.wdt_feed()
    if host:
        from maus.unit.core import HostWake

        # The host's link (docs/protocol.md), served by the main loop: the service loads when a frame comes.
        con = getattr(hw, "console", None)  # a scenario's simulated line (maus.sim.hw); a board: stdin
        unit.host = HostWake(unit, *con()) if con is not None else HostWake(unit)
        import micropython

        fn = getattr(micropython, "kbd_intr", None)  # CPython's test stand-in has none (as maus.unit._kbd_intr)
        if fn is not None:
            fn(-1)  # the app reads Ctrl-C itself: a lone one is a stray byte (HostWake.intr)
    return unit
