# Runtime benchmarks on the MicroPython unix port: the capture handler's cost (capture errors in races:
# bench/mpy/capture.py, under the ESP32 timing model).
import gc
import sys

import micropython
from maus.capture.irq import Capture
from maus.sim.world import SimPin, World


def handler_cost(n=20000):
    w = World(0)
    pins = [SimPin(w, i) for i in range(6)]
    cap = Capture(pins, w.ticks_us)
    cap.start()
    h = cap._handlers[0]
    st = cap._state
    gc.collect()
    a0 = gc.mem_alloc()
    for _ in range(n):
        st[0] = 0  # armed again, so every call takes the full path
        h(pins[0])
    allocs = gc.mem_alloc() - a0
    micropython.heap_lock()
    try:
        st[0] = 0
        h(pins[0])
        locked_ok = 1
    except MemoryError:
        locked_ok = 0
    micropython.heap_unlock()
    # (its cost per call, beside a minimal handler: bench/mpy/capture.py, capture.handler_cost*)
    print("capture.handler_allocated: %d bytes" % allocs)
    print("capture.handler_under_heap_lock: %s ok" % ("1" if locked_ok else "0"))


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    if which in ("all", "handler"):
        handler_cost()


main()
