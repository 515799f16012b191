# The emulated modules in place of the built-in ones, and a wiring (maus.sim.wiring) attached to them: what the
# virtual unit's hardware (maus.sim.hw) and the tests do before the board's own layer loads.
#
#   install(w)          sys.modules: machine, esp32, neopixel, time (and ssd1306 when none is installed), acting on w
#   install_modules()   the same modules in place, acting on no wiring yet; attach(w) then wires them
#   uninstall()         the built-in names back
# It stands above both: the emulated modules (maus.sim.machine, etime, esp32) get their wiring through attach() and
# import no wiring, and the wiring imports none of them. Not deployed to real units (firmware/manifest.py).
import sys


def install(wiring):
    """The emulated modules take the built-ins' names, for every import from now on, and act on `wiring`."""
    install_modules(True)
    attach(wiring)


def attach(wiring):
    """The emulated modules act on `wiring` (a maus.sim.wiring.Wiring) from now on (install_modules put them in
    place)."""
    from maus.sim import esp32, etime, machine

    machine.attach(wiring)
    etime.attach(wiring)
    esp32.attach(wiring)


def uninstall():
    for name in ("machine", "time", "esp32", "neopixel", "ssd1306", "micropython"):
        m = sys.modules.get(name)
        if m is not None and getattr(m, "__name__", "").startswith("maus.sim."):
            del sys.modules[name]


def install_modules(display_driver=False):
    """sys.modules: the emulated micropython, machine, time, esp32 and neopixel (and with display_driver an
    SSD1306 driver where micropython-lib's is not installed); they act once a Wiring is attached."""
    from maus.sim import emicropython, esp32, etime, machine

    sys.modules["micropython"] = emicropython
    sys.modules["machine"] = machine
    sys.modules["time"] = etime
    sys.modules["esp32"] = esp32
    from maus.sim import neopixel  # its `from machine import bitstream` is the emulated one

    sys.modules["neopixel"] = neopixel
    if display_driver:
        try:
            import ssd1306  # noqa: F401 - micropython-lib's driver, as `mausbox deploy` installs it
        except ImportError:
            from maus.sim import ssd1306 as drv

            sys.modules["ssd1306"] = drv
