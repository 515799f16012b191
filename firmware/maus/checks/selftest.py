# The boot self-test (maus.unit.boot loads it for its moment; the latency self-test is maus.checks.latency's).
from maus import LOG_DIR, free_bytes, moment


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
        st["free_bytes"] = free_bytes(unit.root + LOG_DIR)  # not unit.store: maus.log.store stays out of the boot's peak
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
    try:
        v = reader.version()
    except Exception:  # noqa: BLE001 - a self-test reports, never crashes the boot
        v = 0
    with moment():  # the chip's table of names is wanted here only
        import maus.drivers.mfrc522_setup

        name = maus.drivers.mfrc522_setup.chip_name(v)
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
