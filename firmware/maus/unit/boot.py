# The boot steps that run before and after the main loop is loaded, each unloaded again after use (main()).
import json

from maus import moment

BOARD_OK = "board.ok"


def prepare(hw, root=""):
    """-> (problems of the board file and the logs folder, reports of the logs recovered). The board file is
    checked against the ESP32 pin rules, and a game cut short by a power loss gets its log closed."""
    problems = board_problems(hw.board, root)
    return problems, recover(root, getattr(hw, "wdt_feed", None), problems)


def board_problems(board, root=""):
    """The board's problems (maus.hw.board.validate), each "board: ...". A board file found good is not
    checked again while it and the checker stay the same: board.ok holds their checksums (board_stamp),
    written by the unit after a check and by `mausbox deploy`, which checks the board on the host. The
    checker and the names it interns then stay out of the unit's RAM (docs/build.md section 7)."""
    import binascii

    stamp = None
    try:
        with open(root + "board.json", "rb") as f:
            data = f.read()
        if json.loads(data) == board:  # the board in use is the file's
            stamp = board_stamp(binascii.crc32(data), _checker_crc())
    except (OSError, ValueError):
        pass
    if stamp is not None:
        try:
            with open(root + BOARD_OK, "rb") as f:
                if f.read() == stamp:
                    return []
        except OSError:
            pass
    with moment():
        import maus.hw.board

        errs = maus.hw.board.validate(board)
    if not errs and stamp is not None:
        from maus import write_atomic

        try:
            write_atomic(root + BOARD_OK, stamp)
        except OSError:
            pass  # a full flash: checked again at the next boot
    return ["board: " + e for e in errs]


def board_stamp(board_crc, checker_crc):
    """What board.ok holds: the crc32 of the board file's bytes and of the checker's (maus/hw/board.mpy)."""
    return b"%08x %08x\n" % (board_crc & 0xFFFFFFFF, checker_crc & 0xFFFFFFFF)


def _checker_crc():
    import binascii

    import maus

    here = maus.__file__.rsplit("/", 1)[0] if "/" in maus.__file__ else "."
    for ext in (".py", ".mpy"):  # the order in which MicroPython looks for a module
        try:
            f = open(here + "/hw/board" + ext, "rb")
        except OSError:
            continue
        with f:
            buf = bytearray(256)
            k = 0
            while True:
                n = f.readinto(buf)
                if not n:
                    return k
                k = binascii.crc32(memoryview(buf)[:n], k)
    raise OSError(2)  # ENOENT: no checker, no stamp


def recover(root="", feed=None, problems=None):
    """Repair the logs a power cut left open; -> the reports of those that needed it (maus.log.repair). Files in
    logs/ that are none of the unit's logs are named in `problems` (status.json, `mausbox doctor`)."""
    from maus.log.repair import recover
    from maus.log.store import LogStore

    store = LogStore(root)
    out = recover(store, feed)
    k, first = store.stray
    if k and problems is not None:
        problems.append("logs: %d file(s) in logs/ are not logs of this unit, left alone and not pulled: %s%s"
                        % (k, ", ".join(first), ", ..." if k > len(first) else ""))
    return out


def selftest(unit):
    """The boot self-test (maus.checks.selftest), then status.json for the host, naming this boot (main.py's id)."""
    unit.status["boot"] = boot_id(unit.hw)
    with moment():
        import maus.checks.selftest

        maus.checks.selftest.boot(unit)
    write_status(unit.status)


def boot_id(hw):
    """This boot's id (hex) as main.py drew it into RTC memory, or None (no boot stub ran)."""
    data = hw.rtc_load()
    return "".join("%02x" % x for x in data[3:7]) if data and len(data) >= 7 and data[1] == 0xA5 else None


def write_status(status):
    import os

    from maus import write_atomic

    data = json.dumps(status)
    try:
        write_atomic("status.json", data)
        return
    except OSError:
        pass
    # A full flash: the earlier boot's status.json is the room for this one's, else the host reads a stale status
    # (its boot id says so) for as long as the flash is full. Not atomic: a cut in between leaves none, which the
    # host reports, and the next boot writes it again.
    for p in ("status.json.tmp", "status.json"):
        try:
            os.remove(p)
        except OSError:
            pass
    try:
        with open("status.json", "wb") as f:
            f.write(data)
    except OSError:
        try:
            os.remove("status.json")  # a part of it: unreadable for the host
        except OSError:
            pass
