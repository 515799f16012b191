# The web page's bridge to the firmware (MicroPython's WebAssembly port, in a Web Worker).
#
# The firmware is the one `mausbox sim` runs: maus/ in the unit's flash folder (here /unit in the port's
# filesystem), with the simulated hardware of maus.sim.hw and maus.sim. Where the terminal sim has a control
# FIFO and an out stream, the page calls act() and reads the out lines through the `mausjs` module the worker
# registers. The page plays in virtual time paced by real time: the worker calls advance(ms) each frame and
# the unit runs its main loop (maus.unit.core Unit.step) until its clock has moved on that much, so where the
# firmware waits no time is spent, and a press lands at the virtual time it was made. A scenario runs as
# `mausbox sim --scenario` runs it: maus.unit.main() in virtual time, to its end.
import gc
import json
import sys

import mausjs  # the worker's side: out(line), the page's console lines

_CLICK_MS = 80  # as the terminal UI's gestures (host/mausbox/sim/tui.py)


class _Out:
    """maus.sim.hw.Out's file: lines to the page, whole or in pieces (the OLED frame comes in 64-byte parts)."""

    def write(self, s):
        mausjs.out(s)
        return len(s)


hw = None
unit = None


def follow_lang(lang):
    """A unit with no settings yet speaks the browser's language, saved as the unit's own menu would."""
    from maus.settings import values as settings

    try:
        open(settings.FILE).close()
        return None
    except OSError:
        pass
    if lang not in ("de", "en"):
        lang = "en"
    if lang != settings.defaults()["lang"]:
        settings.Settings("").set("lang", lang)
    del sys.modules["maus.settings.values"]
    return lang


def _hardware(**kw):
    from maus.hw import load_board, open_hardware

    h = open_hardware(load_board(), **kw)
    h.out.f = _Out()
    return h


def start():
    """Power on and boot as maus.unit.main() does, then leave the main loop to advance()."""
    global hw
    hw = _hardware()
    _boot()
    return now_ms()


def _boot():
    # maus.unit.main() to its main loop, and Unit.run()'s first lines
    global unit
    from maus.unit import WDT_MS, boot_steps

    hw.wdt_start(WDT_MS)
    unit = boot_steps(hw)
    # No host link: the page has no USB console (its logs go out by download).
    unit.capture.start()
    unit.switch("menu")
    unit._switch()


def now_ms():
    w = hw.world
    return (w.now + w.shifted) // 1000


def advance(ms):
    """Run the unit's main loop until its clock has moved `ms` on (or it stopped). -> virtual time, ms."""
    w = hw.world
    end = w.now + w.shifted + ms * 1000
    while w.now + w.shifted < end and not unit.stop:
        unit.step()
    return now_ms()


def act(line):
    """One action from the page (JSON, as the terminal UI's control lines), at this virtual instant; the
    gestures (click, double, long) are timed in virtual time as the terminal UI times them."""
    a = json.loads(line)
    w = hw.world
    t = w.now
    if "click" in a or "double" in a:
        p = a.get("click") or a.get("double")
        hw.press(p)
        w.at(t + _CLICK_MS * 1000, hw.release, p)
        if "double" in a:
            w.at(t + 200000, hw.press, p)
            w.at(t + (200 + _CLICK_MS) * 1000, hw.release, p)
    else:
        hw.apply(a)


def frame():
    """The OLED's framebuffer as the firmware drew it (hex, 1,024 bytes MONO_VLSB)."""
    import binascii

    return binascii.hexlify(hw.display.buffer).decode()


def heap():
    """The heap in use: called first thing in a call from the worker, right after the port's collection
    (it collects between calls: gc.collect() inside a call only asks for one)."""
    return gc.mem_alloc()


def scenario(path):
    """`mausbox sim --scenario`: boot as maus.unit.main() does with the scenario's actions; the worker then
    calls scenario_run() until it says the end (the port collects garbage only between the worker's calls)."""
    global hw
    hw = _hardware(scenario=path)
    _boot()
    return now_ms()


def scenario_run(steps):
    """Up to `steps` passes of main()'s loop (Unit.run with until=hw.finished_and_idle); at the end, what
    main() does after it. -> True when the scenario has ended."""
    w = hw.world
    n = 0
    while n < steps or w.window:  # a race window runs through: the port's collection at the call's end
        n += 1  # would be one inside it (maus.sim.hw _gc_check charges it), which the terminal's has not
        unit.step()
        if unit.stop or hw.finished_and_idle(unit):
            from maus.unit import _crash_count

            if unit.log is not None:
                unit.abort("scenario ended")
            _crash_count(hw, 0)
            return True
    return False
