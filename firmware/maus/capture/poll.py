# maus.capture.irq's pure-Python parts for a board without the ESP32's register loops (maus.hw.esp32_setup,
# viper): the buttons' levels read pin by pin (no hw.levels), and the poll capture's loop (no hw.scan, on
# a board that says "capture": "poll"). Loaded only there: the ESP32 and the simulator have both loops,
# so this code is not in their heap.
from maus.ticks import ticks_diff
from micropython import const

_ARMED = const(0)  # maus.capture.irq's button states
_SETTLING = const(1)


def pin_levels(pins):
    """levels() for maus.capture.irq.Capture: the bitmask of buttons low now (bit k = pins[k]), one read a pin.
    Runs in the IRQ handler: allocates nothing."""
    n = len(pins)

    def levels():
        v = 0
        for k in range(n):
            if not pins[k].value():
                v |= 1 << k
        return v

    return levels


def install(cap):
    """Give `cap` (a maus.capture.irq.Capture) a poll(max_us) that samples levels() and ticks_us() in a Python
    loop until an armed button reads low (True) or max_us pass (False), timing each first edge by the
    pass that saw it. Allocates nothing a call."""

    def poll(max_us):
        ticks = cap._ticks
        levels = cap._levels
        state = cap._state
        n = cap.n
        t0 = ticks()
        while True:
            t = ticks()
            low = levels()
            if low:
                for i in range(n):
                    if low & (1 << i) and state[i] == _ARMED:
                        cap._t[i] = t
                        cap._snap[i] = low
                        state[i] = _SETTLING
                        cap._pins[i].irq(handler=None)
                        cap.pending = True
                if cap.pending:
                    return True
            if ticks_diff(t, t0) >= max_us:
                return False

    cap.poll = poll
