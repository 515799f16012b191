# The simulated chips' own share of the heap, measured part by part (run under MicroPython; printed as
# `SHARE <part> <bytes>`). Each figure is the live heap a part adds: its modules' bytecode, loaded from
# .mpy as in the tests, plus its objects in the largest set-up a firmware test uses. A board has none of
# this, so the harness adds these figures on top of the board's heap (host/mausbox/heapbudget.py).
# `simshare.py PART` measures that part alone, in a fresh interpreter: measured one after another the
# parts share the interned-name (qstr) pools, which grow in chunks, so a figure would depend on the order.
import gc
import sys


def live():
    gc.collect()
    return gc.mem_alloc()


def rfid():
    from maus.sim.mfrc522_emu import MFRC522Emu

    emu = MFRC522Emu()
    for i in range(6):  # the most tags a test puts on the pad at once (six-card anticollision)
        emu.put(emu.make_tag("mg/mouse/%02d" % i, 216))
    return emu


def piezo():
    from maus.sim.piezo import Piezo

    return Piezo(1)


def world():
    from maus.sim.world import SimPin, World

    w = World()
    return [SimPin(w, i) for i in range(6)]


def _board_modules():
    # The emulated modules in place (the simulator's), then what a board loads too: its hardware layer
    # (maus.hw.esp32, on the emulated machine) and the SSD1306 driver. -> the heap those two took, which is the
    # firmware's (the board's) share, not the simulator's.
    from maus.sim import emulate

    emulate.install_modules()
    b = live()
    import maus.drivers.ssd1306  # noqa: F401
    import maus.hw.esp32  # noqa: F401

    return live() - b


def hw():
    # The virtual unit's Hardware beyond the chips above (built with no RFID reader and no piezo, and on a
    # world measured apart): maus.sim.hw and the world's wiring, the emulated machine, time, esp32 and
    # neopixel, six button pins, the LEDs, buzzer and the OLED's controller, and the output channel. What a
    # board holds too is taken out: its hardware layer and display driver, the LED buffer and the OLED's
    # framebuffer (the driver's).
    from maus.sim.world import World

    w = World()
    before = live()
    board_too = _board_modules()
    from maus.sim import hw as hwsim

    board = {"buttons": [13, 14, 27, 33, 32, 35], "pull": "external",
             "parts": {"leds": {"pin": 4}, "buzzer": {"pin": 25}, "oled": {"sda": 21, "scl": 22}}}
    h = hwsim.Hardware(board, world=w)
    return h, live() - before - board_too - _loops(h) - len(h.display.buffer) - 3 * len(h.leds)


def _loops(h):
    # The board's register loops, which the virtual unit keeps as a board does (maus.sim.wiring standin), and what
    # they hold of their module (maus.hw.esp32_loops, let go by the Hardware): the board's too.
    # (Dropped once measured: the figure is all this Hardware is made for.)
    a = live()
    h.wiring.board_loops = None
    return a - live()


def flash():
    import logfs

    return logfs.Fs()  # the RAM flash of a log test: 32 blocks of 512 bytes, mounted as littlefs


def unit():
    # The virtual unit's simulated hardware as `mausbox sim` builds it: boards/sim.json through
    # maus.hw.open_hardware (every part, and the qstr pool made for the firmware's names), four tags on the
    # pad (the most the reader tracks at once). The firmware the simulated Hardware imports (the MFRC522
    # driver, the unit loads it anyway) is loaded before; what a board holds too (its hardware layer and
    # display driver, the framebuffer, the LED buffer) is taken out.
    import json
    import os

    import maus.drivers.mfrc522  # noqa: F401
    from maus.hw import open_hardware

    with open(os.getenv("MAUSBOX_REPO") + "/boards/sim.json") as f:
        board = json.load(f)
    before = live()
    board_too = _board_modules()
    h = open_hardware(board)
    for i in range(1, 5):
        h.tap("mg/mouse/%02d" % i)
    return h, live() - before - board_too - _loops(h) - len(h.display.buffer) - 3 * len(h.leds)


PARTS = (("rfid", rfid), ("piezo", piezo), ("world", world), ("hw", hw), ("flash", flash), ("unit", unit))


def measure(names):
    import maus  # noqa: F401 - the firmware package is the board's: loaded before any part is measured

    keep = []
    out = []
    b = live()
    for name, make in PARTS:
        if names and name not in names:
            continue
        got = make()
        a = live()
        if isinstance(got, tuple):  # (object, its own share): the part measured itself
            got, n = got
        else:
            n = a - b
        keep.append(got)
        out.append((name, n))
        b = a
    for k in keep:
        if hasattr(k, "close"):
            k.close()
    return out


for name, n in measure(sys.argv[1:]):
    print("SHARE", name, n)
