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


def hw():
    # The virtual unit's Hardware beyond the chips above (built with no RFID reader and no piezo, and on a
    # world measured apart): its module, six button pins, the LED, buzzer and OLED stand-ins and the output
    # channel. A board holds an LED buffer and the OLED's framebuffer too (the SSD1306 driver's), so those
    # stay the board's: taken out here.
    from maus.sim.world import World

    w = World()
    before = live()
    from maus.hw import sim as hwsim

    board = {"buttons": [0, 1, 2, 3, 4, 5], "parts": {"leds": {}, "buzzer": {}, "oled": {}}}
    h = hwsim.Hardware(board, world=w)
    return h, live() - before - len(h.display.buffer) - 3 * len(h.leds)


def flash():
    import logfs

    return logfs.Fs()  # the RAM flash of a log test: 32 blocks of 512 bytes, mounted as littlefs


PARTS = (("rfid", rfid), ("piezo", piezo), ("world", world), ("hw", hw), ("flash", flash))


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
