# Boot self-test and the capture latency self-test.
#
# Latency: a jumper wires an output pin to player 1's button input. The test drives the output low and
# high N times, each edge timed just before the write, and takes the capture's first-edge time from
# the IRQ path: the difference is the capture delay (IRQ dispatch + scheduler + handler entry).
from maus.capture import EV_PRESS
from maus.ticks import ticks_diff


def boot(unit):
    hw = unit.hw
    st = unit.status
    problems = st.setdefault("problems", [])
    st["stuck"] = []
    for i, pin in enumerate(hw.buttons):
        if not pin.value():
            st["stuck"].append(i + 1)
    if st["stuck"]:
        problems.append("buttons held at boot (stuck, ignored until released): %s" % st["stuck"])
    st["rfid_version"] = None
    reader = getattr(unit, "reader", None)
    if reader is not None:
        try:
            v = reader.version()
        except Exception as e:  # noqa: BLE001 - a self-test reports, never crashes the boot
            v = None
            problems.append("rfid: %s" % e)
        st["rfid_version"] = v
        if v in (None, 0, 0xFF):
            problems.append("rfid: no MFRC522 answer (check SPI wiring, 3V3, RST)")
    elif "rfid" in hw.board.get("parts", {}):
        problems.append("rfid: reader not started")
    st["piezo_baseline"] = None
    if hw.adc is not None:
        total = 0
        lo = 65535
        hi = 0
        for _ in range(64):
            v = hw.adc.read_u16()
            total += v
            lo = min(lo, v)
            hi = max(hi, v)
        st["piezo_baseline"] = total // 64
        if hi - lo > 20000:
            problems.append("piezo: noisy baseline (%d..%d): check the bleed resistor" % (lo, hi))
    st["recovered_logs"] = len(unit.recovered)
    try:
        st["free_bytes"] = unit.store.free()
    except OSError:
        st["free_bytes"] = None
    for p in problems:
        print("SELFTEST", p)
    return problems


def latency(hw, unit, n=200):
    """Toggle the jumper n times; -> {"min","med","p99","max","n"} in µs, or None without a jumper."""
    out = hw.jumper
    if out is None:
        return None
    cap = unit.capture
    got = []
    mark = [0]

    def on_event(kind, i, t):
        if kind == EV_PRESS and i == 0:
            got.append(ticks_diff(t, mark[0]))

    saved = cap.emit
    cap.emit = on_event
    try:
        for _ in range(n):
            hw.wdt_feed()  # the test takes up to 22 s: longer than the watchdog's timeout
            before = len(got)
            mark[0] = hw.ticks_us()
            out.value(0)
            for _ in range(50):  # until the press is confirmed (settle time), nothing else runs
                hw.idle(1)
                cap.service()
                if len(got) > before:
                    break
            out.value(1)
            for _ in range(60):  # release and debounce hold-off
                hw.idle(1)
                cap.service()
    finally:
        cap.emit = saved
    if not got:
        return None
    got.sort()
    k = len(got)
    return {"n": k, "min": got[0], "med": got[k // 2], "p99": got[min(k - 1, k * 99 // 100)], "max": got[-1]}
