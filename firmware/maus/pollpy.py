# The poll capture's loop in Python, for a board that says "capture": "poll" but has no register loop
# (hw.scan: viper, ESP32 only). maus.capture.RaceWindow loads it there, once; the ESP32 and the
# simulator never do, so its code is not in their heap.
from micropython import const

from maus.ticks import ticks_diff

_ARMED = const(0)  # maus.capture's button states
_SETTLING = const(1)


def install(cap):
    """Give `cap` (a maus.capture.Capture) a poll(max_us) that samples levels() and ticks_us() in a Python
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
