# Runtime benchmarks on the MicroPython unix port: capture handler cost, arbitration error, heap.
import gc
import sys
import time

import micropython
from fwtest import Rand  # tests/fw: the same xorshift the firmware tests use
from maus.arbiter import Arbiter
from maus.capture import EV_PRESS, Capture
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
    t0 = time.ticks_us()
    for _ in range(n):
        st[0] = 0  # armed again, so every call takes the full path
        h(pins[0])
    t1 = time.ticks_us()
    allocs = gc.mem_alloc() - a0
    micropython.heap_lock()
    try:
        st[0] = 0
        h(pins[0])
        locked_ok = 1
    except MemoryError:
        locked_ok = 0
    micropython.heap_unlock()
    print("capture.handler_cost: %.2f us" % ((t1 - t0) / n))
    print("capture.handler_allocated: %d bytes" % allocs)
    print("capture.handler_under_heap_lock: %s ok" % ("1" if locked_ok else "0"))


def races(n, busy, seed=7):
    """n races with 2-6 players, random reaction times and contact bounce. busy: the main loop does
    a 23 ms display refresh every pass (what race windows avoid). -> errors of the captured first
    edges against the injected ones, and wrong winners."""
    r = Rand(seed)
    w = World(0x3FFFFFFF - 5000000)  # start near the wrap: races cross it
    pins = [SimPin(w, i) for i in range(6)]
    got = {}
    cap = Capture(pins, w.ticks_us, emit=lambda k, i, t: got.__setitem__(i, t) if k == EV_PRESS else None)
    cap.start()
    arb = Arbiter(tie_us=2000)
    max_err = 0
    sum_err = 0
    count = 0
    wrong = 0
    dropped0 = w.dropped
    for _ in range(n):
        got.clear()
        reveal = w.now + 100000
        k = r.randint(2, 6)
        truth = {}
        for p in range(k):
            t = reveal + r.randint(150000, 450000)
            truth[p] = t
            w.at(t, pins[p].set_level, 0)
            b = r.randint(0, 20)
            tt = t
            for _j in range(b):
                tt += r.randint(20, 400)
                w.at(tt, pins[p].set_level, 1)
                tt += r.randint(20, 400)
                w.at(tt, pins[p].set_level, 0)
            w.at(tt + 80000, pins[p].set_level, 1)
        end = reveal + 700000
        arb.reveal(reveal & 0x3FFFFFFF)
        while w.now < end:
            cap.service()
            if busy:
                w.spend(23000)
            else:
                w.sleep_until(min(end, w.now + (1000 if cap.busy() or cap.pending else 20000)))
        cap.service()
        for p, t in got.items():
            arb.press(p, t)
        res = arb.decide()
        arb.close()
        first = min(truth.values())
        ok = [p for p, t in truth.items() if t - first <= 2000]
        if not res or sorted(x[0] for x in res) != sorted(ok):
            wrong += 1
        for p, t in truth.items():
            if p in got:
                e = (got[p] - (t & 0x3FFFFFFF)) & 0x3FFFFFFF
                if e > 0x20000000:
                    e -= 0x40000000
                e = abs(e)
                max_err = max(max_err, e)
                sum_err += e
                count += 1
        w.sleep_until(w.now + 200000)
        cap.service()
    name = "busy" if busy else "idle"
    print("arbitration.%s.races: %d races" % (name, n))
    print("arbitration.%s.mean_error: %.1f us" % (name, sum_err / max(count, 1)))
    print("arbitration.%s.max_error: %d us" % (name, max_err))
    print("arbitration.%s.wrong_winner: %d races" % (name, wrong))
    print("arbitration.%s.irqs_dropped: %d irqs" % (name, w.dropped - dropped0))


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    if which in ("all", "handler"):
        handler_cost()
    if which in ("all", "races"):
        races(int(sys.argv[2]) if len(sys.argv) > 2 else 10000, False)
        races(int(sys.argv[3]) if len(sys.argv) > 3 else 2000, True)


main()
