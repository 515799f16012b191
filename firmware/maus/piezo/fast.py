# The piezo detector's machine code (maus.piezo.detect uses it): the armed loop, one sample's maths, and the
# viper fast path of Detector.watch(). Only this module holds native code, and it is loaded once a boot:
# on the ESP32 a .mpy's native code is copied to IRAM (ports/esp32/main.c esp_native_code_commit,
# heap_caps_malloc(MALLOC_CAP_EXEC)) and freed only by a soft reset, so a module with native code that
# were let go and loaded again would take that IRAM again on each load (~2.8 KB for the xtensawin code
# here, a game of Mucks Mäuschen Still each). maus.unload keeps it (KEEP); maus.piezo.detect, with the rest of
# the detector in bytecode, comes and goes with the game.
# Each function takes the detector as `self`: the classes in maus.piezo.detect make them their methods.
import micropython
from micropython import const

_MASK = const(0x3FFFFFFF)
_HALF = const(0x20000000)
_ALARM = const(1)  # maus.piezo.detect's watch() results
_STOP = const(2)
_TIMEOUT = const(3)
_IDLE = const(0)  # maus.piezo.detect's detector states
_WAIT = const(1)
_HIGH = const(2)
_DECIM = const(8)
_UP = const(8)
_CONFIRM = const(12)
_THR_MIN = const(96)
_THR_MAX = const(24000)


@micropython.native
def gate_watch(self, read_u16, ticks_us, should_stop, max_us):
    """The armed loop: sample until an alarm (_ALARM), should_stop() says a button event is pending
    (_STOP) or max_us passed (_TIMEOUT). After _STOP the runtime calls blank() for each press and
    then take(): an alarm raised just before a press may have been cancelled by it."""
    every = self.check_every
    t0 = ticks_us()
    t = t0
    end = (t0 + max_us) & _MASK
    i = every
    checks = 0
    while True:
        t = ticks_us()
        i -= 1
        if self.feed(read_u16(), t):  # a method call allocates nothing; a bound method would
            r = _STOP if should_stop() else _ALARM
            break
        if i == 0:
            i = every
            checks += 1
            if should_stop():
                r = _STOP
                break
            if (t - end) & _MASK < _HALF:
                r = _TIMEOUT
                break
    self.last_samples = checks * every + every - i
    self.last_us = (t - t0) & _MASK
    return r


@micropython.native
def feed(self, v, t):
    """One ADC sample (0..65535) taken at ticks_us t. True when it raises the alarm."""
    bs = self._bs
    b = self._b
    if b < 0:
        b = v << bs
    b += v - (b >> bs)
    self._b = b
    d = v - (b >> bs)
    if d < 0:
        d = -d
    if d > self.peak:
        self.peak = d
    if self._blanking:
        if (t - self._blank_until) & _MASK < _HALF:
            self._blanking = False
        else:
            return False
    thr = self.thr
    st = self._state
    if st == _WAIT:
        if d > self._wpeak:
            self._wpeak = d
        if (t - self._onset) & _MASK >= self.defer_us:
            return self._fire(t, self._wpeak * 10 // thr)
        return False
    if st == _HIGH:
        if d > thr >> 1:
            self._loud_t = t
        elif (t - self._loud_t) & _MASK >= self.release_ms * 1000 and (t - self._loud_t) & _MASK < _HALF:
            self._state = _IDLE
        return False
    # every _DECIM-th sample: learn the floor (clipped at the threshold: a knock barely moves it)
    c = self._cd - 1
    if c == 0:
        c = _DECIM
        fs = self._fs
        f = self._f
        f += (thr if d > thr else d) - (f >> fs)
        if f < self._fmin:
            f = self._fmin
        elif f > self._fmax:
            f = self._fmax
        self._f = f
        f = (f >> fs) * self._k >> 4
        if f < self._tb:
            f = self._tb
        self.thr = _THR_MIN if f < _THR_MIN else _THR_MAX if f > _THR_MAX else f
    self._cd = c
    n = self._n
    if d > thr:
        if n == 0:
            self._onset = t
        n += _UP
        if n >= _CONFIRM:
            n = _CONFIRM
            if st == _IDLE:
                if self._refr and (t - self._refr_until) & _MASK < _HALF:
                    self._refr = False
                if not self._refr:
                    self._n = 0
                    self._state = _WAIT
                    self._wpeak = d
                    return False
    elif n > 0:
        n -= 1
    self._n = n
    return False


@micropython.viper
def scan(st, read_u16, ticks_us, should_stop, every: int, end: int) -> int:
    # -> 0: a loud sample (st[_SV], st[_ST]) for feed(); STOP; TIMEOUT.
    s = ptr32(st)  # type: ignore[name-defined]  # noqa: F821 - a viper builtin
    b = s[0]
    bs = s[1]
    thr = s[2]
    peak = s[3]
    f = s[4]
    fs = s[5]
    cd = s[6]
    n = s[13]
    i = s[14]  # samples until the next should_stop()/timeout check, shared with watch()
    r = 0
    while True:
        t = int(ticks_us())
        v = int(read_u16())
        n += 1
        b2 = b + v - (b >> bs)
        d = v - (b2 >> bs)
        if d < 0:
            d = 0 - d
        if d > thr:  # feed() judges it, from the baseline before it
            s[11] = v
            s[12] = t
            n -= 1
            break
        i -= 1
        b = b2
        if d > peak:
            peak = d
        cd -= 1
        if cd == 0:
            cd = 8
            f += d - (f >> fs)
            if f < s[9]:
                f = s[9]
            elif f > s[10]:
                f = s[10]
            x = (f >> fs) * s[7] >> 4
            if x < s[8]:
                x = s[8]
            if x < 96:
                x = 96
            elif x > 24000:
                x = 24000
            thr = x
        if i == 0:
            i = every
            if should_stop():
                r = 2
                s[12] = t
                break
            if ((t - end) & 0x3FFFFFFF) < 0x20000000:
                r = 3
                s[12] = t
                break
    s[0] = b
    s[2] = thr
    s[3] = peak
    s[4] = f
    s[6] = cd
    s[13] = n
    s[14] = i
    return r
