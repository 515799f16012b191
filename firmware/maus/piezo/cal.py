# Piezo, the parts a game on an analog piezo does not need in RAM: the guided calibration (the menu's
# calibrate tool) and the detector of a comparator module (digital mode). See maus.piezo.detect.
from maus.piezo.detect import BASE_MAX, BASE_MIN, RATE_HZ, Detector, _Gate, _shift_for, isqrt
from micropython import const

# maus.piezo.detect's own: ticks arithmetic, the detector states, the least noise floor
_MASK = const(0x3FFFFFFF)
_HALF = const(0x20000000)
_IDLE = const(0)
_WAIT = const(1)
_HIGH = const(2)
_FLOOR_MIN = const(8)


class DigitalDetector(_Gate):
    """A comparator module (threshold set by its trimmer): its rising edge is the alarm.
    Same API as Detector; feed() takes the pin level, edge() an IRQ-timestamped rising edge."""

    def __init__(self, sensitivity=5):
        self.sensitivity = sensitivity  # the comparator's trimmer sets it; kept for status only
        self._last = 0
        self._init_gate()

    def set_sensitivity(self, s):
        """The setting, kept for status: the comparator's trimmer is what sets the threshold."""
        self.sensitivity = s

    def meter(self):
        return 16 if self._last else 0

    def feed(self, v, t):
        """Comparator level (0/1) sampled at t. True when the alarm is raised (defer_us after an edge)."""
        if v and not self._last:
            self.edge(t)
        self._last = v
        return self.poll(t)

    def edge(self, t):
        """A rising edge at ticks_us t (from feed(), or stored by the comparator pin's IRQ)."""
        if self._state == _IDLE and not self._blanking_at(t):
            if self._refr and (t - self._refr_until) & _MASK < _HALF:
                self._refr = False
            if not self._refr:
                self._onset = t
                self._state = _WAIT

    def _blanking_at(self, t):
        if self._blanking and (t - self._blank_until) & _MASK < _HALF:
            self._blanking = False
        return self._blanking

    def poll(self, t):
        """Raise a held edge's alarm once defer_us passed (IRQ mode calls this from its loop)."""
        if self._state == _WAIT and (t - self._onset) & _MASK >= self.defer_us:
            return self._fire(t, 10)
        if self._state == _HIGH:
            self._state = _IDLE  # the comparator has its own hysteresis
        return False


class Calibration:
    """Guided calibration, fed like a Detector: quiet_ms of silence (noise floor and its peak), then
    "tap the castle gently" until `taps` taps (or tap_ms). The threshold goes between the quiet peak
    and the weakest gentle tap (their geometric mean); result() gives (base, floor) for
    Detector.calibrated()."""

    quiet_ms = 3000
    settle_ms = 300  # baseline settling at the start of the quiet phase
    tap_ms = 15000
    taps = 3
    tap_gap_ms = 150  # a tap ends after this long calm

    QUIET = 0  # phases
    TAP = 1
    DONE = 2
    FAILED = 3

    def __init__(self, rate_hz=RATE_HZ):
        self._d = Detector(rate_hz=rate_hz)  # its high-pass and the meter
        self._qs = _shift_for(self.quiet_ms * 250, rate_hz)  # floor EMA over ~1/4 of the quiet phase
        self._q = 0
        self.phase = self.QUIET
        self.error = None
        self.floor = 0
        self.threshold = 0
        self.quiet_peak = 0
        self.tap_peaks = []
        self._t0 = 0
        self._cur = 0
        self._last_loud = 0

    def start(self, t_us):
        self._d.reset()
        self._q = 0  # quiet mean |deviation| x 2**_qs
        self.phase = self.QUIET
        self.error = None
        self.quiet_peak = 0
        self.tap_peaks = []
        self._t0 = t_us
        self._cur = 0

    def _dev(self, v):
        d = self._d
        bs = d._bs
        b = d._b
        if b < 0:
            b = v << bs
        b += v - (b >> bs)
        d._b = b
        x = v - (b >> bs)
        return -x if x < 0 else x

    def meter(self):
        return self._d.meter()

    def feed(self, v, t):
        """One sample; returns the phase (QUIET, TAP, DONE, FAILED)."""
        ph = self.phase
        if ph >= self.DONE:
            return ph
        x = self._dev(v)
        d = self._d
        if x > d.peak:
            d.peak = x
        el = ((t - self._t0) & _MASK) // 1000
        if ph == self.QUIET:
            if el < self.settle_ms:
                return ph
            qs = self._qs
            q = self._q
            self._q = q + x - (q >> qs) if q else x << qs
            if x > self.quiet_peak:
                self.quiet_peak = x
            if el >= self.quiet_ms:
                self.floor = max(_FLOOR_MIN, self._q >> qs)
                self.phase = self.TAP
                self._t0 = t
            return self.phase
        # TAP: a tap is a burst above twice the quiet peak; its peak counts when it ends
        lo = max(self.quiet_peak * 2, self.floor * 4)
        if x > lo:
            if x > self._cur:
                self._cur = x
            self._last_loud = t
        elif self._cur and ((t - self._last_loud) & _MASK) // 1000 >= self.tap_gap_ms:
            self.tap_peaks.append(self._cur)
            self._cur = 0
            if len(self.tap_peaks) >= self.taps:
                return self._finish()
        if el >= self.tap_ms:
            return self._finish()
        return ph

    def _finish(self):
        if not self.tap_peaks:
            self.phase = self.FAILED
            self.error = "no_tap"
            return self.phase
        weakest = min(self.tap_peaks)
        thr = isqrt(max(self.quiet_peak, self.floor) * weakest)
        self.threshold = thr
        self.phase = self.DONE
        return self.phase

    def result(self):
        """(base, floor) for Detector.calibrated(); base is clamped to what the detector allows."""
        b = self.threshold
        return (BASE_MIN if b < BASE_MIN else BASE_MAX if b > BASE_MAX else b), self.floor
