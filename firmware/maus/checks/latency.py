# The capture latency self-test (`mausbox` bring-up and the unit's tools menu; docs/capture.md).
#
# A jumper wires an output pin to player 1's button input. The jumper's peripheral (the RMT on an ESP32) pulls
# it low at a set moment while the unit runs its race loop, and the capture times the edge as in a game: the
# difference is the capture error of docs/capture.md, the figure `make bench` models.
from maus.capture.irq import EV_PRESS
from maus.ticks import ticks_add, ticks_diff


def latency(hw, unit, n=200):
    """The capture error of first edges in a race window, measured through the jumper (an output wired to a
    button input): n presses, each edge coming at a random moment of the race loop, timed as the game
    times them (the board's capture mode, poll or irq). -> {"n", "min", "med", "p99", "max"} in µs (the
    figures `make bench` prints as capture.esp32.<mode>.*_error_us), "mode", "offset" (the pulse's own
    start delay, measured and taken off), "gc_us" (one garbage collection), or None without a jumper."""
    import gc

    out = hw.jumper
    if out is None:
        return None
    cap = unit.capture
    win = unit.window
    loop_us = unit.loop_us  # a main-loop pass (maus.unit.core.LOOP_US)
    idx = hw.board.get("parts", {}).get("jumper", {}).get("player", 1) - 1
    pulse = getattr(hw, "pulse", None)  # the edge from a peripheral (RMT) at a set time, else written here
    got = []
    mark = [0]

    def on_event(kind, i, t):
        if kind == EV_PRESS and i == idx:
            got.append(ticks_diff(t, mark[0]))

    offset = 0
    if pulse is not None and cap.scan is not None:
        offset = _pulse_offset(hw, cap, pulse, idx)
    t0 = hw.ticks_us()
    getattr(hw, "collect", gc.collect)()  # the simulator charges the modelled pause
    gc_us = ticks_diff(hw.ticks_us(), t0)
    saved = cap.emit
    cap.emit = on_event
    r = 4321
    try:
        for _ in range(n):
            hw.wdt_feed()  # the test takes up to 22 s: longer than the watchdog's timeout
            before = len(got)
            r = (r * 75 + 74) % 65537
            win.open()
            if pulse is not None:
                d = 1000 + r % 8000  # so the edge meets the loop at any point of a pass
                mark[0] = ticks_add(hw.ticks_us(), d + offset)
                pulse(d, _LOW_US)
            else:
                mark[0] = hw.ticks_us()  # timed just before the write: the loop is where it always is
                out.value(0)
            for _ in range(3000):  # the race loop (maus.unit.step in a window) until the press is confirmed
                hw.spend(loop_us)
                cap.service()
                if len(got) > before:
                    break
                win.step()
            win.close()
            if pulse is None:
                out.value(1)
            for _ in range(200):  # the release and the debounce hold-off
                hw.idle(1)
                cap.service()
                if out.value() and not cap.busy() and not cap.is_down(idx):
                    break
    finally:
        cap.emit = saved
    if not got:
        return None
    got.sort()
    k = len(got)
    return {"n": k, "min": got[0], "med": got[k // 2], "p99": got[min(k - 1, k * 99 // 100)], "max": got[-1],
            "mode": "poll" if win.poll else "irq", "offset": offset, "gc_us": gc_us}


_LOW_US = 32000  # one press from the jumper: longer than the 30 ms debounce window


def _pulse_offset(hw, cap, pulse, idx):
    # How late the pulse's edge comes after its set time (the peripheral's start), against the register
    # loop alone (~1 µs a pass, nothing else running): the median of 9.
    cap.stop()
    offs = []
    for _ in range(9):
        m = ticks_add(hw.ticks_us(), 2000)
        pulse(2000, _LOW_US)
        t0 = hw.ticks_us()
        if cap.scan(1 << idx, 20000, cap._dt):
            offs.append(ticks_diff(ticks_add(t0, cap._dt[idx]), m))
        for _ in range(80):
            hw.idle(1)
            if hw.jumper.value():
                break
    cap.start()
    offs.sort()
    return offs[len(offs) // 2] if offs else 0
