# mypy: ignore-errors
# `time` as code on the virtual unit sees it: the ESP32 port's (extmod/modtime.c, MICROPY_EPOCH_IS_2000,
# shared/timeutils for a 32-bit port): seconds since 2000-01-01 as an int, gmtime and localtime the same (no
# time zones), mktime normalising as timeutils_mktime does. Run under the MicroPython unix port, imported by
# replserver.py. The clock is the unit's RTC: the host's clock (UTC) plus the offset machine.RTC().datetime()
# keeps in /clock.json (vumachine.RTC), so time and the RTC always agree, as on a board.
import time as _rt

_E = 946684800  # TIMEUTILS_SECONDS_1970_TO_2000
_NS = 1000000000
CLOCK = "/clock.json"
_fs = None  # replserver's _vunit: its open reaches clock.json, which the unit's own os hides
_off = [None]  # the RTC's offset from the host clock in s, read once per interpreter, kept by set_offset
_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365)
_MDAYS = (31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 29)  # from March

_MASK = 0x3FFFFFFF  # MICROPY_PY_TIME_TICKS_PERIOD - 1: ticks wrap at 2**30, as on every port
_boot = [0, 0]  # the unit's power-on (or last hard reset) on the unix port's ticks: ms, us
_raw_ms = _rt.ticks_ms
_raw_us = _rt.ticks_us
ticks_add = _rt.ticks_add
ticks_diff = _rt.ticks_diff
sleep = _rt.sleep
sleep_ms = _rt.sleep_ms
sleep_us = _rt.sleep_us


def boot(us):
    """The unit's power-on, in µs of the host's monotonic clock (the bridge's MAUSBOX_BOOT_US): its ticks count
    from there, as a board's esp_timer does from its reset (ports/esp32/mphalport.c); a soft reset keeps them."""
    if us:
        us = int(us)
        _boot[0], _boot[1] = us // 1000 & _MASK, us & _MASK


def ticks_ms():
    return (_raw_ms() - _boot[0]) & _MASK


def ticks_us():
    return (_raw_us() - _boot[1]) & _MASK


ticks_cpu = ticks_us  # the ESP32's cycle counter also starts at the reset


def offset():
    if _off[0] is None:
        try:
            import json

            with _fs.open(CLOCK) as f:
                _off[0] = int(json.load(f)["offset_s"])
        except (OSError, ValueError, KeyError, TypeError):
            _off[0] = 0
    return _off[0]


def set_offset(s):
    _off[0] = int(s)


def host_s():
    """The host's clock in seconds since 2000 (whole seconds, UTC)."""
    return _rt.time_ns() // _NS - _E


def time():
    return host_s() + offset()


def time_ns():
    return _rt.time_ns() + (offset() - _E) * _NS


def _leap(y):
    return y % 4 == 0  # timeutils on a 32-bit port: 1970 to 2099


def gmtime(secs=None):
    s = (time() if secs is None else int(secs)) + _E
    days, s = divmod(s, 86400)
    wday = (days + 3) % 7  # 1970-01-01 was a Thursday; 0 is Monday
    days += 365 + 366 - (31 + 29)  # from 1968-02-29, the leap day before 1970
    q, days = divmod(days, 365 * 4 + 1)
    y = min(days // 365, 3)
    days -= y * 365
    year = 1968 + y + 4 * q
    mon = 0
    while _MDAYS[mon] <= days:
        days -= _MDAYS[mon]
        mon += 1
    mon += 2
    if mon >= 12:
        mon -= 12
        year += 1
    mon += 1
    mday = days + 1
    yday = _DAYS[mon - 1] + mday + (1 if mon >= 3 and _leap(year) else 0)
    return (year, mon, mday, s // 3600, s // 60 % 60, s % 60, wday, yday)


localtime = gmtime


def _mdays(y, m):
    return _DAYS[m] - _DAYS[m - 1] + (1 if m == 2 and _leap(y) else 0)


def mktime(t):
    if len(t) < 8 or len(t) > 9:
        raise TypeError("mktime needs a tuple of length 8 or 9")
    year, mon, mday, h, mi, s = (int(v) for v in t[:6])
    q, s = divmod(s, 60)
    mi += q
    q, mi = divmod(mi, 60)
    h += q
    q, h = divmod(h, 24)
    mday += q
    q, mon = divmod(mon - 1, 12)
    year += q
    mon += 1
    while mday < 1:
        mon -= 1
        if mon == 0:
            mon = 12
            year -= 1
        mday += _mdays(year, mon)
    while mday > _mdays(year, mon):
        mday -= _mdays(year, mon)
        mon += 1
        if mon == 13:
            mon = 1
            year += 1
    days = (year - 1970) * 365 + (year - 1969) // 4 + _DAYS[mon - 1] + mday - 1 + (1 if mon >= 3 and _leap(year) else 0)
    return days * 86400 + h * 3600 + mi * 60 + s - _E


NAMES = ("gmtime", "localtime", "mktime", "sleep", "sleep_ms", "sleep_us", "ticks_add", "ticks_cpu", "ticks_diff",
         "ticks_ms", "ticks_us", "time", "time_ns")  # the ESP32 port's `time`, nothing more
