# The unit: boot stub. main() boots in steps that each load what they need and let it go again (the
# board check, log recovery, the self-test: maus.unit.boot), then hands over to the main loop
# (maus.unit.core), which loads one phase at a time: menu, setup, play. Safe mode after repeated crashes
# (maus.unit.safe).
from maus import moment
from maus.unit.shared import crash_count as _crash_count  # also maus.unit._crash_count (main.py's layout)

CRASH_LIMIT = 3
WDT_MS = 8000


def __getattr__(name):
    # maus.unit.Unit: the main loop, loaded when first asked for (main() asks after the boot steps);
    # safe_mode(hw, crashes, boot=None), called by main.py after CRASH_LIMIT crashes in a row (hw None:
    # it opens the hardware if it can), and clear_safe_mode(): maus.unit.safe's, loaded when asked for.
    if name == "Unit":
        from maus.unit.core import Unit

        return Unit
    if name in ("safe_mode", "clear_safe_mode"):
        import maus.unit.safe  # not `from maus.unit import safe`: that would ask this function for it

        return getattr(maus.unit.safe, name)
    raise AttributeError(name)


def _kbd_intr(c):
    import micropython

    fn = getattr(micropython, "kbd_intr", None)  # CPython's test stand-in has none
    if fn is not None:
        fn(c)


def boot_steps(hw):
    """Power-on to the main loop's door (main(), and the web page's unit, which runs the loop itself): the board
    check and the logs' recovery, the main loop's Unit, the self-test. -> the Unit. Each step runs with little
    else in RAM, and its modules go again before the next."""
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
    return unit


def main(hw=None, **kw):
    # main.py (the boot stub) has counted this boot as a crash and started the watchdog: it is cleared when the
    # unit stops cleanly or has run healthy (maus.unit.core _HEALTHY_MS).
    from maus.hw import load_board, open_hardware

    if hw is None:
        hw = open_hardware(load_board(), **kw)
    hw.wdt_start(WDT_MS)  # the stub's watchdog, now fed by the app (boot steps feed it too)
    unit = None
    try:
        unit = boot_steps(hw)
        from maus.unit.core import HostWake

        # The host's link (docs/protocol.md), served by the main loop: the service loads when a frame comes.
        con = getattr(hw, "console", None)  # a scenario's simulated line (maus.sim.hw); a board: stdin
        unit.host = HostWake(unit, *con()) if con is not None else HostWake(unit)
        _kbd_intr(-1)  # the app reads Ctrl-C itself: a lone one is a stray byte (HostWake.intr)
        try:
            unit.run(until=getattr(hw, "finished_and_idle", None) and (lambda: hw.finished_and_idle(unit)))
        finally:
            _kbd_intr(3)
            if getattr(hw, "baud", 115200) != 115200:  # a host session's rate ends with the app (Ctrl-C, a crash)
                with moment():
                    import maus.hw.console

                    maus.hw.console.switch(hw, 115200)
    except KeyboardInterrupt:  # Ctrl-C over USB is not a crash, even during the boot
        hw.wdt_release()  # the REPL has the unit now: its watchdog is kept fed
        if unit is not None and unit.log is not None:
            unit.abort("interrupted (Ctrl-C)")
        _crash_count(hw, 0)
        raise
    if unit.log is not None:
        unit.abort("scenario ended")
    _crash_count(hw, 0)
    return unit
