# The simulated chips' own share of the heap, measured part by part (run under MicroPython; printed as
# `SHARE <part> <bytes>`). Each figure is the live heap a part adds: its modules' bytecode, loaded from
# .mpy as in the tests, plus its objects in the largest set-up a firmware test uses. A board has none of
# this, so the harness adds these figures on top of the board's heap (host/mausbox/heapbudget.py).
import gc


def live():
    gc.collect()
    return gc.mem_alloc()


def measure():
    import maus  # noqa: F401 - the firmware package is the board's: loaded before any part is measured

    keep = []
    out = []
    b = live()
    from maus.sim.mfrc522_emu import MFRC522Emu

    emu = MFRC522Emu()
    for i in range(6):  # the most tags a test puts on the pad at once (six-card anticollision)
        emu.put(emu.make_tag("mg/mouse/%02d" % i, 216))
    keep.append(emu)
    a = live()
    out.append(("rfid", a - b))
    b = a
    from maus.sim.piezo import Piezo

    keep.append(Piezo(1))
    a = live()
    out.append(("piezo", a - b))
    b = a
    from maus.sim.world import SimPin, World

    w = World()
    keep.append([SimPin(w, i) for i in range(6)])
    a = live()
    out.append(("world", a - b))
    b = a
    from maus.hw import sim as hwsim

    # The virtual unit's Hardware beyond the chips above: its module, six button pins, the LED, buzzer and
    # OLED stand-ins and the output channel. A board holds an LED buffer and the OLED's framebuffer
    # too (the SSD1306 driver's), so those stay the board's: taken out here.
    board = {"buttons": [0, 1, 2, 3, 4, 5], "parts": {"leds": {}, "buzzer": {}, "oled": {}}}
    hw = hwsim.Hardware(board, world=w)
    keep.append(hw)
    a = live()
    out.append(("hw", a - b - len(hw.display.buffer) - 3 * len(hw.leds)))
    b = a
    import logfs

    fs = logfs.Fs()  # the RAM flash of a log test: 32 blocks of 512 bytes, mounted as littlefs
    keep.append(fs)
    a = live()
    out.append(("flash", a - b))
    fs.close()
    return out


for name, n in measure():
    print("SHARE", name, n)
