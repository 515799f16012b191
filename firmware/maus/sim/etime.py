# The ESP32 port's `time` on the unix port, for maus.sim.wiring: the clock is the world's (virtual time),
# the epoch 2000-01-01 as on the board (time() an int), and the RTC starts there at power-on until the
# clock is set (machine.RTC().datetime). sleep_us/sleep_ms are mp_hal_delay_us: soft IRQs run while they
# wait, not in their tail (the world's model). Not deployed to real units.
import time as _rt

_w = None
_clock = _rt  # the host's clock, while no wiring is attached (the virtual unit before its hardware is made)
_EPOCH_2000 = 946684800  # 2000-01-01 in the unix port's epoch (1970)
ticks_add = _rt.ticks_add
ticks_diff = _rt.ticks_diff


def attach(wiring):
    global _w, sleep_us
    _w = wiring
    sleep_us = wiring.sleep_us  # the wiring's own: nothing in between on the RFID driver's poll waits


def _sleep_us(us):
    if _w is None:
        _clock.sleep_us(us)
    elif us > 0:
        _w.sleep_us(us)


def ticks_us():
    return _w.world.ticks_us() if _w is not None else _clock.ticks_us()


def ticks_ms():
    return _w.world.ticks_ms() if _w is not None else _clock.ticks_ms()


def ticks_cpu():
    return ticks_us()


sleep_us = _sleep_us


def sleep_ms(ms):
    if _w is None:
        _clock.sleep_ms(ms)
    elif ms > 0:
        _w.sleep_us(ms * 1000)


def sleep(s):
    sleep_us(int(s * 1000000))


def _secs():
    return (_w.clock_offset or 0) + _w.world.now // 1000000 + _w.world.shifted // 1000000


def time():
    return _secs()


def time_ns():
    w = _w.world
    return ((_w.clock_offset or 0) * 1000000 + w.now + w.shifted) * 1000


def gmtime(secs=None):
    return tuple(_rt.gmtime((_secs() if secs is None else int(secs)) + _EPOCH_2000)[:8])


localtime = gmtime  # the ESP32 port has no time zones


def mktime(t):
    return _rt.mktime(tuple(t[:8]) + (0,) * (8 - len(t))) - _EPOCH_2000


def set_time(secs):
    """machine.RTC().datetime(...): the clock reads secs (since 2000) now."""
    w = _w.world
    _w.clock_offset = secs - (w.now + w.shifted) // 1000000
