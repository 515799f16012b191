# mypy: ignore-errors
# Run UNDER MicroPython by replserver.py (_load_parts), from the parts' folder (unitproc.parts_dir, mounted at
# /.simparts), at the first use of one of machine's emulated parts (Pin, SPI, I2C, ...; UART(1) and UART(2)), esp32 or
# neopixel. A board's are there from power-on whatever main.py does, also in the raw REPL after a soft reset (mpremote,
# run-tests.py), where main.py does not run. firmware/maus/sim/vuparts.py wires them to a live world of the board file.
# Where the app's hardware layer has loaded its own (maus.sim.hw: boot.py's watchdog keeper loads it), they are already
# in machine (and esp32, neopixel in sys.modules) and only UART comes from here, the app's copy of it; else the modules
# come from the parts' folder, imported in a sys.modules of their own, so that the app's `maus` package on the unit's
# flash stays the app's. Each part is loaded when first used: they are Python here (about 34 KB of heap with machine's
# parts, 6 KB more with UART), where a board's are C. This module is garbage once a call has ended.
import sys


def _ours(k):
    return k == "maus" or k[:5] == "maus."


def load(what, parts, mdict, path, at):
    """Load `what` and -> for "machine": (the parts' names, the module they are in, or None: machine's dict `mdict`
    holds them), the parts put into `mdict`; for "uart": maus.sim.vuart, its UART machine's; for "esp32" and
    "neopixel": the module, put into sys.modules. `parts` keeps them (and "own", "mods": see the module's comment);
    `path` is the import path list, `at` the parts' folder."""
    got = parts.get(what)
    if got is not None:
        return got
    if what == "neopixel":
        load("machine", parts, mdict, path, at)  # its `from machine import bitstream`
    mods = sys.modules
    own = parts.get("own")
    if own is None:
        if "maus.sim.machine" not in mods:
            # The app's simulator layer on the unit's flash (boot.py's keeper loads it; a boot.py of its own may not,
            # and main.py asks for machine.WDT before the app's hardware is made): its parts are machine's, as they
            # will be once the app runs, not a second copy in the app's heap. Its WDT, with no wiring yet, raises
            # AttributeError: the boot then starts the simulator's watchdog model (firmware/main.py).
            try:
                __import__("maus.sim.hw")
            except Exception:  # noqa: BLE001 - no app on the flash (or a broken one): the parts' folder's
                pass
        own = parts["own"] = "maus.sim.machine" not in mods
        parts["mods"] = {}  # the parts' own maus.* modules, kept out of sys.modules between loads
    if what == "machine":
        # from now on a name machine lacks is looked up as on a board: `from machine import I2S` an ImportError
        mdict.pop("__getattr__", None)
        if not own:
            parts[what] = (mdict, None)  # the app's parts are in machine now
            return parts[what]
    saved = {}
    keep = path[:]
    if own:
        for k in list(mods):
            if _ours(k):
                saved[k] = mods.pop(k)
        mods.update(parts["mods"])
        path[:] = [at]
    try:
        from maus.sim import machine, vuparts

        if what == "uart":
            from maus.sim import vuart

            if vuart.console is None:
                vuart.console = mdict["UART"]  # UART(0): the console's line (vumachine.py)
            mdict["UART"] = vuart.UART
            got = vuart
        elif what == "esp32":
            from maus.sim import esp32 as got

            got.attach(vuparts.wiring(machine))
            mods["esp32"] = got
        elif what == "neopixel":
            from maus.sim import neopixel as got

            mods["neopixel"] = got
        else:
            vuparts.wiring(machine)
            for k in vuparts.MACHINE:
                mdict[k] = getattr(machine, k)
            got = (vuparts.MACHINE, machine)
    finally:
        if own:
            for k in list(mods):
                if _ours(k):
                    parts["mods"][k] = mods.pop(k)
            mods.update(saved)
            path[:] = keep
    parts[what] = got
    import gc

    gc.collect()  # the import's garbage goes now, not in the first timed call of a part (a UART's write and flush)
    return got
