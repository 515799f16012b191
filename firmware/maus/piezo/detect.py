# Piezo alarm detector for Mucks Mäuschen Still (the castle's "alarm bells"). Pure: no pin, no clock.
#
# Analog: a piezo disc on the castle, bled and biased, into an ADC1 pin read with read_u16().
# Per sample: a high-pass (baseline EMA, ~3 ms) removes the bias and slow rumble; |deviation| is
# compared with a threshold = sensitivity factor x the larger of the calibrated base threshold and
# NOISE_K x the adaptive noise floor (mean |deviation|), so a noisy room raises it. Two
# over-threshold samples close together (a leaky count) raise the alarm; it re-arms only after the
# signal calmed below half the threshold (hysteresis) and the refractory period passed. A button
# press blanks detection for blank_ms, and retroactively cancels an alarm that began just before it.
# Digital: a comparator module's output edge is the alarm, with the same blanking and refractory.
#
# feed() is integer-only and allocation-free; every intermediate stays below 2**30 (a small int on
# the ESP32). Times are ticks_us values wrapping at 2**30; compare with (a - b) & _MASK < _HALF.
# The guided calibration (Calibration) and the comparator's detector (DigitalDetector) are maus.piezo.cal:
# a game on an analog piezo needs neither in RAM (docs/build.md section 7).
import sys
from array import array

from maus.piezo import fast as _fast
from micropython import const

_MASK = const(0x3FFFFFFF)
_HALF = const(0x20000000)

ALARM = const(1)  # watch() results
STOP = const(2)
TIMEOUT = const(3)

RATE_HZ = const(10000)  # armed-loop sample rate the constants are tuned for (ESP32 estimate, docs/piezo.md)

# Threshold factor by sensitivity 1..9 in 1/16: 5 = as calibrated, each step x1.41.
SENS16 = (64, 45, 32, 23, 16, 11, 8, 6, 4)
FLOOR_DEFAULT = const(48)  # counts: the ESP32 ADC's own noise, mean |deviation| (sigma ~60 of 65535)
BASE_DEFAULT = const(768)  # counts: base threshold when not calibrated (16 x the ADC's noise floor)
BASE_MIN = const(200)
BASE_MAX = const(16000)
NOISE_K = const(8)  # threshold >= 8 x floor: Gaussian noise then needs two 6.4-sigma samples in 0.4 ms
_FLOOR_MIN = const(8)
_FLOOR_MAX = const(4095)
_THR_MIN = const(96)  # never below ADC quantisation noise
_THR_MAX = const(24000)  # stays reachable from a mid-scale bias
_DECIM = const(8)  # the floor learns from every 8th sample
_UP = const(8)  # leaky count: +8 per over-threshold sample, -1 per other sample,
_CONFIRM = const(12)  # alarm at 12: two loud samples at most 4 samples apart

_IDLE = const(0)
_WAIT = const(1)  # confirmed, held defer_us so that a button press can still cancel it
_HIGH = const(2)  # alarmed, waiting for calm (hysteresis)
_OFF = const(3)  # disarmed: track baseline and floor only



def _shift_for(tau_us, rate_hz):
    # EMA shift whose time constant (2**shift samples) is nearest tau_us at rate_hz.
    n = tau_us * rate_hz // 1000000
    s = 0
    while (1 << (s + 1)) <= n and s < 13:
        s += 1
    return s


def isqrt(n):
    x = n
    y = (x + 1) >> 1
    while y < x:
        x = y
        y = (x + n // x) >> 1
    return x


class _Gate:
    # What both detectors share: arming, blanking after presses, the pending alarm, the armed loop.
    blank_ms = 150  # after a button press
    blank_pre_us = 5000  # a press's thump may reach the castle before its edge is timestamped
    defer_us = 5000  # an alarm is held this long after its onset: a press's thump cancels it
    refractory_ms = 500
    check_every = 16  # samples between should_stop()/timeout checks in watch()

    def _init_gate(self):
        self._state = _OFF
        self._n = 0
        self._blanking = False
        self._blank_until = 0
        self._refr = False
        self._refr_until = 0
        self._onset = 0
        self._wpeak = 0
        self.pending = False  # an alarm was raised and not yet taken
        self.alarm_t = 0  # onset of the last alarm (first loud sample / the edge)
        self.alarm_level = 0  # strength at the alarm in tenths of the threshold (10 = at threshold)
        self.last_samples = 0  # of the last watch()
        self.last_us = 0

    def feed(self, v, t):
        raise NotImplementedError

    def arm(self, t_us):
        """Start watching a new attempt (it begins with a press, so the press is blanked too)."""
        self._state = _IDLE
        self._n = 0
        self._refr = False
        self.pending = False
        self.blank(t_us)

    def disarm(self):
        self._state = _OFF
        self._n = 0

    def set_armed(self, armed, t_us):
        """Table.detector(armed) on the unit: arm at t_us, or disarm."""
        if armed:
            self.arm(t_us)
        else:
            self.disarm()

    @property
    def armed(self):
        return self._state != _OFF

    def blank(self, t_us):
        """A button was pressed at t_us (its first edge): ignore vibration until blank_ms after it,
        and cancel an alarm still held (defer_us) or pending whose onset is less than blank_pre_us
        before the press: that was the press's own thump."""
        self._blanking = True
        self._blank_until = (t_us + self.blank_ms * 1000) & _MASK
        self._n = 0
        if self._state == _WAIT:
            self._state = _IDLE
        if self.pending and (self.alarm_t - t_us + self.blank_pre_us) & _MASK < _HALF:
            self.pending = False
            if self._state == _HIGH:
                self._state = _IDLE
            self._refr = False

    def _fire(self, t, level):
        self._state = _HIGH
        self._loud_t = t
        self._refr = True
        self._refr_until = (t + self.refractory_ms * 1000) & _MASK
        self.pending = True
        self.alarm_t = self._onset
        self.alarm_level = 99 if level > 99 else level
        return True

    def take(self):
        """The pending alarm's level (see alarm_level), clearing it; None when there is none."""
        if not self.pending:
            return None
        self.pending = False
        return self.alarm_level

    watch = _fast.gate_watch  # the armed loop (native code: maus.piezo.fast)

    def measured_hz(self):
        """The sample rate the last watch() reached (0 before any)."""
        us = self.last_us
        return self.last_samples * 1000 // (us // 1000) if us >= 1000 else 0


# Detector.watch()'s fast path is viper code (maus.piezo.fast.scan, MicroPython only).
_VIPER = sys.implementation.name == "micropython"
# state words: baseline, bs, thr, peak, floor, fs, countdown, k, tb, fmin, fmax, v, t, samples, check
_SB, _SBS, _STHR, _SPEAK, _SF, _SFS, _SCD, _SK, _STB, _SFMIN, _SFMAX, _SV, _ST, _SN, _SI = range(15)


class Detector(_Gate):
    release_ms = 30  # calm below threshold/2 this long before re-arming
    baseline_us = 3200  # high-pass time constant (cut-off ~50 Hz)
    floor_us = 400000  # noise-floor time constant

    def __init__(self, sensitivity=5, rate_hz=RATE_HZ, base=BASE_DEFAULT, floor=FLOOR_DEFAULT):
        self._cd = _DECIM
        self._st = array("i", bytes(60))  # _scan()'s state, 15 words
        self._set_shifts(rate_hz)
        self.base = BASE_DEFAULT
        self._tb = 0  # base threshold at this sensitivity
        self._k = 0  # noise-floor multiplier at this sensitivity, in 1/16
        self._floor0 = floor
        self._f = self._clamp_floor(floor) << self._fs
        self._sens = 5
        self.set_base(base)
        self.set_sensitivity(sensitivity)
        self.reset()

    # --- settings ----------------------------------------------------------------------------
    def _set_shifts(self, rate_hz):
        self.rate_hz = rate_hz
        self._bs = _shift_for(self.baseline_us, rate_hz)
        self._fs = _shift_for(self.floor_us, rate_hz // _DECIM)
        self._fmin = _FLOOR_MIN << self._fs
        self._fmax = _FLOOR_MAX << self._fs

    def set_rate(self, rate_hz):
        """The loop's real sample rate (e.g. measured_hz() after a watch()): time constants follow it."""
        f = self._f >> self._fs
        self._set_shifts(rate_hz)
        self._f = self._clamp_floor(f) << self._fs
        self._b = -1

    def set_sensitivity(self, s):
        """1 (least sensitive) .. 9 (most); 5 = the calibrated threshold."""
        s = 1 if s < 1 else 9 if s > 9 else s
        self._sens = s
        self._tb = self.base * SENS16[s - 1] >> 4
        self._k = NOISE_K * (SENS16[s - 1] if s < 5 else 16)  # never below NOISE_K x floor
        self.thr = self.threshold()

    def set_base(self, base):
        self.base = BASE_MIN if base < BASE_MIN else BASE_MAX if base > BASE_MAX else base
        self.set_sensitivity(self._sens)

    def calibrated(self, base, floor):
        """Apply a Calibration's result()."""
        self._floor0 = floor
        self._f = self._clamp_floor(floor) << self._fs
        self.set_base(base)

    @staticmethod
    def _clamp_floor(f):
        return _FLOOR_MIN if f < _FLOOR_MIN else _FLOOR_MAX if f > _FLOOR_MAX else f

    # --- control -----------------------------------------------------------------------------
    def reset(self):
        """Forget the signal (baseline, floor back to the calibrated one) and any alarm; disarms."""
        self._init_gate()
        self._b = -1  # baseline x 2**bs; -1 = take the next sample
        self._f = self._clamp_floor(self._floor0) << self._fs
        self._loud_t = 0
        self.peak = 0  # largest deviation since the last meter() call
        self.thr = self.threshold()

    def threshold(self):
        t = (self._f >> self._fs) * self._k >> 4
        if t < self._tb:
            t = self._tb
        return _THR_MIN if t < _THR_MIN else _THR_MAX if t > _THR_MAX else t

    def floor(self):
        return self._f >> self._fs

    def meter(self):
        """Live vibration meter: the peak since the last call, 0..16 with 8 = at the threshold."""
        p = self.peak
        self.peak = 0
        m = p * 8 // self.thr
        return 16 if m > 16 else m

    # --- the hot path ------------------------------------------------------------------------
    def watch(self, read_u16, ticks_us, should_stop, max_us):
        if not _VIPER:
            return _Gate.watch(self, read_u16, ticks_us, should_stop, max_us)
        st = self._st
        st[_SN] = 0
        t0 = ticks_us()
        t = t0
        end = (t0 + max_us) & _MASK
        every = self.check_every
        i = every
        while True:
            if self._state == _IDLE and self._n == 0 and not self._blanking and self._b >= 0:
                st[_SB] = self._b
                st[_SBS] = self._bs
                st[_STHR] = self.thr
                st[_SPEAK] = self.peak
                st[_SF] = self._f
                st[_SFS] = self._fs
                st[_SCD] = self._cd
                st[_SK] = self._k
                st[_STB] = self._tb
                st[_SFMIN] = self._fmin
                st[_SFMAX] = self._fmax
                st[_SI] = i
                r = _fast.scan(st, read_u16, ticks_us, should_stop, every, end)
                i = st[_SI]
                self._b = st[_SB]
                self.thr = st[_STHR]
                self.peak = st[_SPEAK]
                self._f = st[_SF]
                self._cd = st[_SCD]
                t = st[_ST]
                if r:
                    break
                v = st[_SV]
            else:
                t = ticks_us()
                v = read_u16()
            st[_SN] += 1
            i -= 1
            if self.feed(v, t):
                r = STOP if should_stop() else ALARM
                break
            if i == 0:
                i = every
                if should_stop():
                    r = STOP
                    break
                if (t - end) & _MASK < _HALF:
                    r = TIMEOUT
                    break
        self.last_samples = st[_SN]
        self.last_us = (t - t0) & _MASK
        return r

    feed = _fast.feed  # one sample (native code: maus.piezo.fast)
