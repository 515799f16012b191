# The menu's self-tests, run once and unloaded again: piezo calibration and the capture latency test.
import json

from maus.unit.shared import CALIB_FILE


def calibrate(u):
    """Guided piezo calibration: a few quiet seconds, then gentle taps; saves calib.json."""
    from maus import write_atomic
    from maus.piezo import cal as piezocal

    hw = u.hw
    if hw.adc is None:
        u._say("latency_none")
        return None
    cal = piezocal.Calibration()
    cal.start(hw.ticks_us())
    u._say("calibrate")
    u.fb.update(hw.ticks_ms())
    phase = cal.phase
    n = 0
    while phase < cal.DONE:
        phase = cal.feed(hw.adc.read_u16(), hw.ticks_us())
        n += 1
        if phase == cal.TAP and n > 0:
            n = -1 << 30  # once: ask for taps
            u._say("calibrate_tap")
            u.fb.update(hw.ticks_ms())
            u.fb.sound("prompt")
        if n & 1023 == 0:
            hw.wdt_feed()
            _meter(u, cal.meter())
    if phase == cal.DONE:
        base, floor = cal.result()
        u.calib = (base, floor)  # the next game's detector uses it, even if the file cannot be written
        try:
            write_atomic(CALIB_FILE, json.dumps({"base": base, "floor": floor}))
        except OSError:
            pass
        u._say("calibrate_done", base=base, floor=floor)
        u.fb.sound("ok")
    else:
        u._say("calibrate_fail")
        u.fb.sound("error")
    u.fb.update(hw.ticks_ms())
    return phase == cal.DONE


def _meter(u, level):
    # The live vibration meter on the LEDs: level 0..16 (8 = at the threshold) lights players' LEDs from the left.
    lit = level * u.n // 16
    for i in range(1, u.n + 1):
        u.fb.led(i, "green" if i <= lit else "off")
    u.fb.update(u.hw.ticks_ms())


def latency_test(u, n=200):
    from maus.checks import latency

    res = latency.latency(u.hw, u, n)
    if res is None:
        u._say("latency_none")
    else:
        u._say("latency_done", **res)
    return res
