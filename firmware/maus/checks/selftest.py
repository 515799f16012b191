# Boot self-test and the capture latency self-test.
#
# Latency: a jumper wires an output pin to player 1's button input. The jumper's peripheral (the RMT on an
# ESP32) pulls it low at a set moment while the unit runs its race loop, and the capture times the edge as
# in a game: the difference is the capture error of docs/capture.md, the figure `make bench` models.
from maus.capture.irq import EV_PRESS
from maus.ticks import ticks_add, ticks_diff


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
        _rfid(reader, hw.board, st, problems)
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


def pins(board, part, keys=None):
    """The pins of a part as the board file names them: "SCK 18, MOSI 23, ..." (a hint that says where to look)."""
    cfg = board.get("parts", {}).get(part) or {}
    if part == "buttons":
        return ", ".join("P%d GPIO %s" % (i + 1, p) for i, p in enumerate(board.get("buttons", [])))
    out = []
    for k in keys or sorted(cfg):
        v = cfg.get(k)
        if isinstance(v, int) and k not in ("baud", "freq", "addr", "player", "width", "height", "count"):
            out.append("%s %d" % (k.upper(), v))
    return ", ".join(out)


_RFID_PINS = ("sck", "mosi", "miso", "cs", "rst")


def _rfid(reader, board, st, problems):
    # The chip's version and name in status.json and on the console; a reader that did not start is a
    # failure with its pins on the display (st["alert"]: the menu shows it until a click).
    from maus.drivers.mfrc522_setup import chip_name

    try:
        v = reader.version()
    except Exception:  # noqa: BLE001 - a self-test reports, never crashes the boot
        v = 0
    name = chip_name(v)
    st["rfid_version"] = v
    st["rfid_chip"] = name
    st["rfid_ok"] = bool(reader.ok)
    where = pins(board, "rfid", _RFID_PINS)
    if reader.ok:
        print("RFID 0x%02X %s%s" % (v, name, ": tried, it took its configuration" if name == "unknown chip" else ""))
        return
    if v in (0, 0xFF):
        msg = "RFID reader not found: check SPI wiring, pins " + where
    else:
        msg = "RFID reader 0x%02X (%s) answers but refuses its configuration: check SPI wiring, pins %s" % (
            v, name, where)
    problems.append("rfid: " + msg)
    st["alert"] = msg


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
