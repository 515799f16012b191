# The boot stub: every boot counts as a crash from this file's first lines until the app runs healthy or stops
# cleanly (maus.unit clears the count), so anything that fails on the way (a broken or missing module, a
# corrupt board.json, a MemoryError, a hang the watchdog ends) counts. CRASH_LIMIT boots in a row that never
# got there start safe mode: no game, the REPL free. Nothing of the app is imported before the count is
# saved; the app is imported inside the guard. Tested on its own: tests/host/test_bootstub.py.
#
# RTC memory (kept through soft, watchdog and EN resets, lost at power-on): byte 0 the count, byte 1 0xA5,
# byte 2 the watchdog's seconds (maus.hw.esp32), bytes 3-6 this boot's id (status.json names it).
import os

CRASH_LIMIT = 3  # as maus.unit.CRASH_LIMIT
WDT_MS = 8000  # as maus.unit.WDT_MS


def rtc_load():
    try:
        import machine

        return bytes(machine.RTC().memory())
    except (ImportError, AttributeError):  # the virtual unit: RTC memory is ROOT/.rtcmem (maus.sim.hw)
        try:
            with open(".rtcmem", "rb") as f:
                return f.read()
        except OSError:
            return b""


def rtc_save(data):
    try:
        import machine

        machine.RTC().memory(data)
    except (ImportError, AttributeError):
        with open(".rtcmem", "wb") as f:
            f.write(data)


def count_boot():
    """-> (crashes counted before this boot, this boot's id); saves the count with this boot in it."""
    data = rtc_load()
    n = data[0] if len(data) >= 2 and data[1] == 0xA5 else 0
    boot = os.urandom(4)
    keep = data[2:3] if len(data) >= 3 else b"\x00"
    rtc_save(bytes((min(n + 1, 255), 0xA5)) + keep + boot)
    return n, boot


def start_watchdog(ms):
    # machine.WDT on a board; the virtual unit's model in real time (maus.sim.hw). Cannot be stopped.
    try:
        import machine

        machine.WDT(timeout=ms)
    except (ImportError, AttributeError):
        from maus.sim import hw as sim

        sim.boot_watchdog(ms)
        return
    # After a soft or watchdog reset boot.py's keeper feeds the running watchdog (the REPL may have the unit). From
    # here the boot must feed it itself, or a hang before the app's first feed would never be reset.
    import sys

    keeper = sys.modules.get("maus.hw.esp32")
    if keeper is not None:
        keeper._keep = False


def boot():
    global maus  # the REPL after the app stops has main.py's globals: maus is there to inspect
    crashes, bid = count_boot()
    if crashes >= CRASH_LIMIT:
        try:
            rtc_save(bytes((crashes, 0xA5)) + rtc_load()[2:])  # safe mode is no crash of its own
            import maus.unit

            maus.unit.safe_mode(None, crashes, "".join("%02x" % x for x in bid))
        except Exception as e:  # noqa: BLE001 - safe mode must leave the REPL free whatever is broken
            print("MAUSBOX SAFE MODE: %d crashes in a row; the firmware is broken (%r): run mausbox deploy"
                  % (crashes, e))
        return
    try:
        start_watchdog(WDT_MS)  # a hang from here on is reset, and counted by now
        data = rtc_load()
        rtc_save(data[:2] + bytes((WDT_MS // 1000,)) + data[3:])  # for boot.py's keeper after a soft reset
        import maus.unit

        maus.unit.main()
    except KeyboardInterrupt:  # Ctrl-C is no crash, also before the app's own handler is there
        data = rtc_load()
        rtc_save(bytes((0, 0xA5)) + data[2:])
        try:
            import maus.hw

            maus.hw.keep_watchdog()  # the REPL has the unit: its watchdog is kept fed
        except Exception:  # noqa: BLE001
            pass
        raise


boot()
