# mypy: ignore-errors
# `machine` as code on the virtual unit sees it: what an ESP32's has and the virtual unit can honestly
# do. Run under the MicroPython unix port, imported by replserver.py on the first `import machine`.
import time

import vutime  # the unit's time: one clock with the RTC, as on a board

PWRON_RESET = 1  # ports/esp32/modmachine.c: machine.reset_cause() values
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5
RTC_MEM_MAX = 2048  # ports/esp32/machine_rtc.h: MICROPY_HW_RTC_USER_MEM_MAX
CLOCK = vutime.CLOCK  # the wall clock as an offset from the host's (firmware/maus/sim/hw.py reads it too)
RTC_MEM = "/.rtcmem"  # RTC memory: kept across soft and hard resets, gone at power-on
_fs = None  # replserver's _vunit: open and rename for the simulator's files, which the unit's own os hides


class RTC:
    """The ESP32's RTC: datetime() as (year, month, day, weekday, hours, minutes, seconds, subseconds), the
    same clock as time.time() (epoch 2000)."""

    def __init__(self, id=0):
        pass

    def datetime(self, dt=None):
        if dt is None:
            tm = vutime.gmtime()
            return (tm[0], tm[1], tm[2], tm[6], tm[3], tm[4], tm[5], 0)
        if len(dt) < 7:
            raise ValueError("requested length 8 but object has length %d" % len(dt))
        import json

        off = vutime.mktime((dt[0], dt[1], dt[2], dt[4], dt[5], dt[6], 0, 0)) - vutime.host_s()
        with _fs.open(CLOCK + ".tmp", "w") as f:
            f.write(json.dumps({"offset_s": off}))
        _fs.rename(CLOCK + ".tmp", CLOCK)
        vutime.set_offset(off)

    def init(self, dt):
        self.datetime(dt)

    def memory(self, data=None):
        if data is None:
            try:
                with _fs.open(RTC_MEM, "rb") as f:
                    return f.read()
            except OSError:
                return b""
        if len(data) > RTC_MEM_MAX:
            raise ValueError("buffer too long")
        with _fs.open(RTC_MEM, "wb") as f:
            f.write(data)


_status = None  # replserver's status line to the bridge (exports)


def UART(id, baudrate=0, **kw):
    """machine.UART(0, rate) only, the REPL's UART: the unit's line to the host (a function standing in for the
    class: nothing else of it is modelled). Its rate is set as a board's machine.UART(0, rate) sets it
    (ports/esp32/machine_uart.c, v1.28.0): the bridge (serial.py) switches the pty's line once the bytes written
    before it have left. And as there, the call then raises OSError: init's last step, uart_flush_input, needs an
    ESP-IDF driver the REPL's UART does not have (firmware/maus/hw/console.py). No other UART is wired."""
    if id != 0:  # UART(1) and UART(2), emulated (firmware/maus/sim/vuparts.py): machine's UART from then on
        return _load("uart").UART(id, baudrate, **kw)
    if baudrate:
        _status(b"U%d\n" % baudrate)
    raise OSError(1)


_load = None  # replserver's _load_parts("machine" / "uart"): -> maus.sim.vuparts / vuart, put into machine


def _part(name):
    # machine.Pin and the other parts (machine's __getattr__): there from power-on as on a board, loaded when first
    # asked for, so the app's heap pays for them only if code uses them (the app's hardware layer puts its own into
    # machine before that). Any name the module lacks loads them (a list of the parts' names here would intern its
    # names in the REPL server's heap share)
    if name[:1] != "_":
        m = _load("machine")  # (the parts' names, their module; None: machine's dict, where the app's are)
        if name in m[0]:
            return getattr(m[1], name) if m[1] is not None else m[0][name]
    raise AttributeError(name)


def exports(status, real, getenv, load):
    global _status, _load
    _status = status
    _load = load
    uid = getenv("MAUSBOX_UNIT_ID") or "5e1d00000001"
    cause = int(getenv("MAUSBOX_RESET_CAUSE") or PWRON_RESET)

    def unique_id():
        import binascii

        return binascii.unhexlify(uid)

    def reset():
        # A hard reset: the bridge ends this interpreter and boots a new one (RAM lost, RTC memory kept).
        status(b"H\n")
        while True:
            time.sleep_ms(100)

    def soft_reset():
        raise SystemExit

    def reset_cause():
        return cause

    out = {"RTC": RTC, "UART": UART, "unique_id": unique_id, "reset": reset, "soft_reset": soft_reset,
           "reset_cause": reset_cause, "__getattr__": _part, "PWRON_RESET": PWRON_RESET, "HARD_RESET": HARD_RESET,
           "WDT_RESET": WDT_RESET, "DEEPSLEEP_RESET": DEEPSLEEP_RESET, "SOFT_RESET": SOFT_RESET}
    return out  # (idle, Signal and time_pulse_us are the emulated parts' too: the unix port's act on no pin)
