# The piezo alarm detector on the labelled suite and its rules (CPython and MicroPython).
from array import array

import piezo_suite as S
from fwtest import Rand
from maus.piezo.cal import Calibration, DigitalDetector
from maus.piezo.detect import (
    ALARM,
    BASE_MAX,
    BASE_MIN,
    STOP,
    TIMEOUT,
    Detector,
)
from maus.sim.piezo import Piezo
from maus.ticks import PERIOD

_US = 100  # 10 kHz


def _feed(d, p, t0, ms, presses=()):
    """Feed ms of Piezo p from tick t0; returns alarm times (ms from t0)."""
    out = []
    pr = list(presses)
    for i in range(ms * 1000 // _US):
        t = (t0 + i * _US) % PERIOD
        while pr and i * _US >= pr[0]:
            d.blank((t0 + pr.pop(0)) % PERIOD)
        if d.feed(p.sample(t), t):
            out.append(i * _US // 1000)
    return out


def test_suite_bell_level_bumps_all_alarm():
    cases = S.bumps(Rand(101), 30)
    missed = [c[0] for i, c in enumerate(cases) if not S.judge(c, S.run_case(c, seed=i + 1))]
    assert not missed, missed


def test_suite_ambient_noise_never_alarms():
    cases = S.ambient(Rand(202), 18)
    wrong = [c[0] for i, c in enumerate(cases) if not S.judge(c, S.run_case(c, seed=i + 1))]
    assert not wrong, wrong


def test_latency_from_onset_is_the_hold_plus_a_few_ms():
    for i, c in enumerate(S.bumps(Rand(303), 12)):
        alarms, first, onset = S.run_case(c, seed=i + 7)
        lat = first - S.onset_ms(c[3])
        assert alarms >= 1
        assert 5 <= lat <= 40, (c[0], lat)  # never before the 5 ms hold; a wobble builds up slowly
        assert abs(onset - S.onset_ms(c[3])) <= lat


def test_quiet_stick_insertion_does_not_alarm_even_sensitive():
    for lvl in (2, 4, 6):
        case = ("insert", False, 3300, [("insert", 300, 3000, lvl / 1000)])
        for sens in (5, 6):
            assert S.run_case(case, seed=lvl, sensitivity=sens)[0] == 0, (lvl, sens)


def test_sensitivity_orders_detection():
    # a bump just above bell level: felt at 9, missed at 1
    case = ("soft", True, 800, [("knock", 300, 0.05, None, "ring")])
    got = [S.run_case(case, seed=3, sensitivity=s)[0] for s in range(1, 10)]
    assert got[0] == 0 and got[8] >= 1
    for a, b in zip(got, got[1:]):
        assert b >= a
    d = Detector()
    thr = []
    for s in range(1, 10):
        d.set_sensitivity(s)
        thr.append(d.threshold())
    assert thr == sorted(thr, reverse=True) and thr[0] > thr[8]
    d.set_sensitivity(0)
    assert d.threshold() == thr[0]
    d.set_sensitivity(12)
    assert d.threshold() == thr[8]


def test_own_button_thump_is_blanked_and_cancelled_retroactively():
    # the thump starts 3 ms before the press's edge is known: held alarm cancelled by blank()
    for dt in (-3, 0, 2, 4):
        case = ("thump", False, 1200, [("thump", 400, 0.12, dt)])
        assert S.run_case(case, seed=9)[0] == 0, dt
    # the same thump with no press is a real alarm (the detector is not simply deaf to it)
    d = Detector()
    p = Piezo(9)
    t0 = PERIOD - 300000
    p.thump((t0 + 400000) % PERIOD, 0.12)
    d.arm(t0)
    assert _feed(d, p, t0, 1000) != []


def test_alarm_before_press_survives_the_press():
    # a knock 30 ms before a press: the alarm stands (it was raised before the press)
    d = Detector()
    p = Piezo(4)
    p.knock(400000, 0.3)
    d.arm(0)
    got = _feed(d, p, 0, 800, presses=[430000])
    assert got and 400 <= got[0] <= 410
    assert d.take() is not None and d.take() is None


def test_pending_alarm_cancelled_by_press_that_follows_quickly():
    # watch() saw the alarm but a button event was pending: the press decides
    d = Detector()
    p = Piezo(5)
    p.thump(400000, 0.1)
    d.arm(0)
    got = _feed(d, p, 0, 500)
    assert got and d.pending
    d.blank(401000)  # the thump's own press, 1 ms after the onset
    assert d.take() is None
    d2 = Detector()
    d2.arm(0)
    p2 = Piezo(5)
    p2.knock(400000, 0.2)
    _feed(d2, p2, 0, 500)
    d2.blank(420000)  # 20 ms later: a different press, the alarm stands
    assert d2.take() is not None


def test_refractory_and_hysteresis():
    d = Detector()
    p = Piezo(6)
    for t in (300, 400, 1200):  # 100 ms apart: one alarm; 800 ms later: another
        p.knock(t * 1000, 0.3, 60)
    d.arm(0)
    got = _feed(d, p, 0, 1600)
    assert len(got) == 2 and got[0] < 320 and 1200 <= got[1] < 1220, got
    # a long rattle does not alarm again until it calmed down
    d = Detector()
    p = Piezo(6)
    for k in range(12):
        p.knock(300000 + k * 50000, 0.4, 40)
    d.arm(0)
    assert len(_feed(d, p, 0, 1000)) == 1


def test_adaptive_floor_follows_a_noisy_room():
    d = Detector()
    p = Piezo(8)
    d.arm(0)
    _feed(d, p, 0, 500)
    quiet = d.threshold()
    p.noise(0.6)
    assert _feed(d, p, 500000, 1600) == []  # 4 floor time constants (floor_us = 400 ms)
    loud = d.threshold()
    assert loud > 2 * quiet
    p.noise(0)
    _feed(d, p, 2100000, 2000)
    assert d.threshold() < loud // 2
    assert d.floor() >= 8


def test_wraparound_mid_knock():
    d = Detector()
    p = Piezo(2)
    t0 = PERIOD - 400000
    p.knock((t0 + 399000) % PERIOD, 0.2)  # onset 1 ms before the wrap
    d.arm(t0)
    got = _feed(d, p, t0, 700)
    assert len(got) == 1 and 404 <= got[0] <= 410
    assert d.alarm_t == (t0 + 399000) % PERIOD or abs(d.alarm_t - (t0 + 399000) % PERIOD) < 2000


def test_disarmed_never_alarms_but_tracks():
    d = Detector()
    p = Piezo(3)
    p.knock(300000, 0.5)
    assert _feed(d, p, 0, 600) == []
    assert not d.armed and d.meter() > 8
    d.set_armed(True, 600000)
    assert d.armed
    p.knock(1000000, 0.5)
    assert len(_feed(d, p, 600000, 600)) == 1
    d.set_armed(False, 0)
    assert not d.armed


def test_meter_scale():
    d = Detector()
    p = Piezo(3)
    d.arm(0)
    _feed(d, p, 0, 300)
    assert d.meter() < 8  # quiet: below the threshold mark
    p.knock(300000, 0.5)
    _feed(d, p, 300000, 100)
    assert d.meter() == 16


def test_watch_alarm_stop_timeout():
    d = Detector()
    p = Piezo(1)
    clock = [PERIOD - 50000]  # wraps during the watch

    def ticks():
        clock[0] = (clock[0] + _US) % PERIOD
        return clock[0]

    def read():
        return p.sample(clock[0])

    d.arm(clock[0])
    assert d.watch(read, ticks, lambda: False, 200000) == TIMEOUT
    p.knock((clock[0] + 100000) % PERIOD, 0.3)
    t0 = clock[0]
    assert d.watch(read, ticks, lambda: False, 1000000) == ALARM
    lat = (clock[0] - t0) // 1000 - 100
    assert 4 <= lat <= 10
    assert d.take() is not None
    d.arm(clock[0])
    n = [0]

    def stop():
        n[0] += 1
        return n[0] > 3

    assert d.watch(read, ticks, stop, 1000000) == STOP


def test_watch_returns_stop_with_alarm_pending():
    d = Detector()
    p = Piezo(1)
    clock = [0]
    state = {"press": False}

    def ticks():
        clock[0] += _US
        return clock[0]

    def read():
        return p.sample(clock[0])

    d.check_every = 1 << 20  # only the alarm path asks should_stop()
    d.arm(0)
    p.knock(300000, 0.3)
    assert d.watch(read, ticks, lambda: state["press"], 2000000) == ALARM
    d.arm(clock[0])
    p.knock(clock[0] + 300000, 0.3)
    state["press"] = True
    assert d.watch(read, ticks, lambda: state["press"], 2000000) == STOP
    assert d.pending


def test_feed_allocates_nothing():
    try:
        import micropython
    except ImportError:
        return
    d = Detector()
    p = Piezo(12)
    p.knock(300000, 0.3)
    p.thump(900000, 0.1)
    chunk = 1000
    buf = array("H", bytes(2 * chunk))
    d.arm(0)
    feed = d.feed
    hits = 0
    for c in range(12):
        for i in range(chunk):
            buf[i] = p.sample((c * chunk + i) * _US)
        micropython.heap_lock()
        try:
            for i in range(chunk):
                t = (c * chunk + i) * _US
                if t == 900000:
                    d.blank(t)
                if feed(buf[i], t):
                    hits += 1
            d.take()
        finally:
            micropython.heap_unlock()
    assert hits == 1


def test_digital_mode_edges_blank_refractory():
    d = DigitalDetector()
    assert d.feed(1, 0) is False  # disarmed
    d.feed(0, 10)
    d.arm(1000)

    def run(t_from, t_to, high=()):
        out = []
        for t in range(t_from, t_to, 100):
            v = 1 if any(a <= t < b for a, b in high) else 0
            if d.feed(v, t):
                out.append(t)
        return out

    # edge inside the arming blank: ignored
    assert run(1000, 100000, [(50000, 52000)]) == []
    # edge after it: alarm after the 5 ms hold
    got = run(200000, 300000, [(210000, 212000)])
    assert got == [215000]
    assert d.take() == 10
    # within the refractory period: nothing; after it: again
    assert run(300000, 700000, [(400000, 401000)]) == []
    assert run(800000, 900000, [(810000, 811000)]) == [815000]
    # a press right after the edge cancels the held alarm
    assert run(1500000, 1503000, [(1501000, 1502000)]) == []
    d.blank(1503000)
    assert run(1503000, 1600000) == []
    # IRQ mode: edge() from the handler, poll() from the loop
    d.edge(2000000)
    assert not d.poll(2004000) and d.poll(2005000)


def test_calibration_quiet_then_gentle_taps():
    c = Calibration()
    p = Piezo(21)
    t0 = PERIOD - 1000000
    c.start(t0)
    for k in range(3):
        p.knock((t0 + (4000 + 700 * k) * 1000) % PERIOD, 0.03 + k * 0.005)
    ph = None
    for i in range(70000):
        t = (t0 + i * _US) % PERIOD
        ph = c.feed(p.sample(t), t)
        if ph >= Calibration.DONE:
            break
    assert ph == Calibration.DONE, (ph, c.tap_peaks)
    assert len(c.tap_peaks) == 3
    base, floor = c.result()
    assert BASE_MIN <= base <= BASE_MAX and 20 < floor < 100
    assert c.quiet_peak < c.threshold < min(c.tap_peaks)
    d = Detector()
    d.calibrated(base, floor)
    # calibrated at sensitivity 5: a gentle tap like those alarms, the quiet castle does not
    case = ("gentle", True, 900, [("knock", 300, 0.03, None, "ring")])
    assert S.run_case(case, det=d, seed=22)[0] == 1
    quiet = ("quiet", False, 3000, [("insert", 300, 2500, 0.002)])
    assert S.run_case(quiet, det=d, seed=23)[0] == 0


def test_calibration_fails_clearly_without_taps():
    c = Calibration()
    c.tap_ms = 2000
    p = Piezo(31)
    c.start(0)
    ph = None
    for i in range(60000):
        ph = c.feed(p.sample(i * _US), i * _US)
        if ph >= Calibration.DONE:
            break
    assert ph == Calibration.FAILED and c.error == "no_tap"


def test_generator_is_deterministic_and_seeded():
    def run(seed):
        p = Piezo(seed)
        p.noise(0.2)
        p.knock(1000, 0.5, 20, "click")
        p.talk(0, 300, 0.01)
        p.truck(0, 300, 0.05)
        p.insert(0, 300, 0.004)
        p.thump(5000, 0.1)
        h, lo, hi = 0, 65535, 0
        for t in range(0, 300000, 97):
            v = p.sample(t)
            h = (h * 31 + v) & 0xFFFFFFF
            lo = v if v < lo else lo
            hi = v if v > hi else hi
        return h, lo, hi

    a = run(5)
    assert a == run(5) and a[0] != run(6)[0]
    assert a[1] >= 0 and a[2] <= 65535 and a[2] - a[1] > 20000
    # two knocks at full strength clip at the ADC's range
    p = Piezo(1)
    p.knock(0, 1.0)
    p.knock(0, 1.0)
    assert max(p.sample(t) for t in range(0, 10000, 50)) == 65535
    p = Piezo(1)
    for bad in ("boing",):
        try:
            p.knock(0, 0.5, None, bad)
        except ValueError as e:
            assert "boing" in str(e)
        else:
            raise AssertionError("no error")


def test_bias_free_wiring_still_detects_strong_bumps():
    # bleed resistor only: half-wave signal and the ADC's dead zone near 0 V (docs/piezo.md)
    d = Detector()
    p = Piezo(3, bias=0)
    p.knock(400000, 0.2)
    d.arm(0)
    assert len(_feed(d, p, 0, 800)) == 1


def test_rates_from_6_to_50_khz_and_the_measured_rate():
    cases = S.bumps(Rand(404), 5) + [c for c in S.ambient(Rand(405), 12) if c[2] < 3000][:3]
    for rate in (6000, 25000):
        wrong = [c[0] for i, c in enumerate(cases) if not S.judge(c, S.run_case(c, seed=i + 3, rate_hz=rate))]
        assert not wrong, (rate, wrong)
    d = Detector(rate_hz=10000)
    p = Piezo(1)
    clock = [0]

    def ticks():
        clock[0] += 40  # a 25 kHz loop
        return clock[0]

    d.arm(0)
    assert d.watch(lambda: p.sample(clock[0]), ticks, lambda: False, 100000) == TIMEOUT
    assert 24000 <= d.measured_hz() <= 26000
    d.set_rate(d.measured_hz())
    assert d.rate_hz == d.measured_hz() and d.floor() >= 8
    p.knock(clock[0] + 300000, 0.1)
    d.arm(clock[0])
    assert d.watch(lambda: p.sample(clock[0]), ticks, lambda: False, 1000000) == ALARM


def test_stream_of_ambient_noise_across_wraps():
    cases = [c for c in S.ambient(Rand(505), 12) if c[2] < 4000][:4]
    alarms, ms = S.run_stream(cases, seed=5)
    assert alarms == [] and ms > 6000


def test_fast_watch_matches_feed_sample_for_sample():
    # On MicroPython Detector.watch() runs a viper fast path; it must decide exactly as feed() does.
    from maus.piezo.detect import _Gate

    def session(fast):
        d = Detector()
        p = Piezo(77)
        p.noise(0.3)
        clock = [PERIOD - 200000]

        def ticks():
            clock[0] = (clock[0] + _US) % PERIOD
            return clock[0]

        def read():
            return p.sample(clock[0])

        presses = [(clock[0] + 900000) % PERIOD]

        def stop():
            return bool(presses) and (clock[0] - presses[0]) % PERIOD < PERIOD // 2

        for k in range(6):
            p.knock((clock[0] + 150000 + 40000 * k) % PERIOD, 0.02 * (k + 1))
        p.thump((clock[0] + 898000) % PERIOD, 0.1)
        d.arm(clock[0])
        out = []
        for _ in range(14):
            if fast:
                r = d.watch(read, ticks, stop, 100000)
            else:
                r = _Gate.watch(d, read, ticks, stop, 100000)
            if r == STOP:
                d.blank(presses.pop(0))
            out.append((r, clock[0], d.thr, d.floor(), d.peak, d.last_samples, d.take()))
            if r == ALARM:
                d.arm(clock[0])
        return out

    fast = session(True)
    assert fast == session(False)
    assert [x[0] for x in fast].count(ALARM) >= 2 and STOP in [x[0] for x in fast]


def test_the_native_code_is_loaded_once_a_boot():
    # A game's phase lets maus.piezo.detect go with it; its machine code (maus.piezo.fast) stays, so the next game's
    # detector uses the same code and the ESP32 commits no more IRAM for it (maus.KEEP).
    import sys

    import maus

    maus.unload("maus.piezo.detect")
    maus.unload("maus.piezo.fast")  # refused: KEEP
    assert "maus.piezo.fast" in sys.modules
    sys.modules.pop("maus.piezo.fast")  # as at power-on
    delattr(maus.piezo, "fast")
    mark = maus.loaded()
    import maus.piezo.detect

    fast = sys.modules["maus.piezo.fast"]
    d = maus.piezo.detect.Detector()
    d.arm(0)
    maus.unload_since(mark)  # as the unit leaves the play phase
    assert "maus.piezo.detect" not in sys.modules and sys.modules["maus.piezo.fast"] is fast
    import maus.piezo.detect as again

    assert again._fast is fast and again.Detector.feed is fast.feed
    assert not d.feed(32768, 0) and d.thr > 0  # the first game's detector still works


def test_the_unit_arms_a_comparator_detector():
    # Mucks Mäuschen Still on a comparator board: each turn the unit arms the detector with the sensitivity
    # setting (Unit.detector_arm), which a DigitalDetector took as an AttributeError (found by the real types)
    from maus.unit.core import Unit

    class U:
        pass

    u = U()
    u.detector = DigitalDetector()
    u.settings = {"sensitivity": 7}

    class Hw:
        def ticks_us(self):
            return 1000

    u.hw = Hw()
    Unit.detector_arm(u, True)
    assert u.detector.sensitivity == 7
    Unit.detector_arm(u, False)
