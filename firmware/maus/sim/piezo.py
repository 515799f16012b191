# Simulated piezo on the cheese castle: the waveform the ADC sees (read_u16 scale, 0..65535).
#
# Deterministic from a seed, integer-only per sample (table lookups, an xorshift PRNG): the same
# calls give the same samples on CPython and MicroPython. Used by the virtual unit's ADC and by the
# labelled signal suite (tests/fw/piezo_suite.py).
#
#   p = Piezo(seed)                     a quiet castle: bias plus the ADC's own noise
#   p.knock(t_us, amplitude, ms, shape) a bump (amplitude 0..1 of full scale); shapes in SHAPES
#   p.noise(level)                      continuous ambient room noise from now on (0 = none, 1 = loud)
#   p.talk / p.thump / p.truck / p.insert   the other ambient sources of the suite
#   p.sample(t_us) -> int               one ADC reading; t_us never goes backwards
#
# Amplitude 1.0 = 32767 counts, the largest swing around a mid-scale bias.
import math

from micropython import const

_MASK = const(0x3FFFFFFF)
_HALF = const(0x20000000)
FULL = const(32767)  # counts for amplitude 1.0
ADC_SIGMA = const(60)  # the ESP32 ADC's own noise, counts (about 4 LSB of 12 bits)
NOISE_SIGMA = const(400)  # ambient noise(1.0): sigma in counts
DEAD = const(1600)  # counts that read 0 near 0 V (ESP32 ADC dead zone), for bias=0 wiring

# 256-entry sine (-127..127) and exp(-i/32) (255..0) tables
_SIN = tuple(int(round(127 * math.sin(2 * math.pi * i / 256))) for i in range(256))
_EXP = tuple(int(round(255 * math.exp(-i / 32))) for i in range(256))

# Event kinds
_RING = const(0)  # damped sine: f, tau, attack
_TALK = const(1)  # voiced syllables
_TRUCK = const(2)  # low rumble swelling and fading
_SCRAPE = const(3)  # a stick sliding through a hole: friction noise and tiny clicks

# Knock shapes: (frequency Hz, default ms, attack us). ms = time to decay to ~2 % (4 time constants).
SHAPES = {
    "ring": (420, 50, 0),  # a sharp bump of the castle: its main resonance
    "click": (2400, 6, 0),  # a stick end hitting the castle wall
    "thud": (110, 80, 2000),  # a heavy, dull push
    "wobble": (45, 160, 15000),  # the castle rocked slowly (bells ring only when it is strong)
    "buzz": (900, 25, 0),  # a quick scratch-and-jump of the stick
}


def _hash(a, b):
    h = (a * 0x9E3779B1 + b * 0x85EBCA77 + 0x165667B1) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & 0xFFFFFFFF
    h ^= h >> 12
    return h


class Piezo:
    def __init__(self, seed=1, bias=32768, adc_sigma=ADC_SIGMA):
        self.seed = seed & 0xFFFFFFFF
        self._s = self.seed or 1
        self.bias = bias
        self.adc_sigma = adc_sigma
        self.ambient = 0  # noise sigma in counts
        self._ev = []  # [kind, t0, dur_us, amp, a, b, c, key]
        self._key = 0

    # --- sources ---------------------------------------------------------------------------------
    def _add(self, kind, t_us, dur_us, amp, a=0, b=0, c=0):
        self._key += 1
        self._ev.append([kind, t_us & _MASK, dur_us, amp, a, b, c, _hash(self.seed, self._key)])

    def knock(self, t_us, amplitude, ms=None, shape="ring"):
        """A bump of the castle starting at t_us: amplitude 0..1 of full scale, decaying over ms."""
        if shape not in SHAPES:
            raise ValueError("unknown knock shape: %s" % shape)
        f, dms, attack = SHAPES[shape]
        ms = dms if ms is None else ms
        ms = 1 if ms < 1 else ms
        amp = int(_clip01(amplitude) * FULL)
        tau = ms * 250  # us: 4 time constants in ms
        self._add(_RING, t_us, tau * 8 + attack, amp, f, tau, attack)

    def thump(self, t_us, amplitude=0.06):
        """A button pressed on the same table: a dull thud and the switch's click."""
        amp = int(_clip01(amplitude) * FULL)
        self._add(_RING, t_us, 24000, amp, 160, 3000, 300)
        self._add(_RING, t_us, 4000, amp // 3, 1800, 500, 0)

    def talk(self, t_us, ms, level=0.01):
        """Children talking next to the table: voiced syllables of 100-300 ms."""
        self._add(_TALK, t_us, ms * 1000, int(_clip01(level) * FULL))

    def truck(self, t_us, ms, level=0.04):
        """A lorry passing the house: 8-30 Hz rumble swelling and fading over ms."""
        self._add(_TRUCK, t_us, ms * 1000, int(_clip01(level) * FULL))

    def insert(self, t_us, ms, level=0.004):
        """A stick slid quietly through the holes: friction noise and tiny clicks."""
        self._add(_SCRAPE, t_us, ms * 1000, int(_clip01(level) * FULL))

    def noise(self, level):
        """Ambient room noise from now on: level 0..1 (1 = a loud classroom)."""
        self.ambient = int(_clip01(level) * NOISE_SIGMA)

    def clear(self):
        self._ev = []

    # --- the ADC ---------------------------------------------------------------------------------
    def _gauss(self, sigma):
        # Sum of four uniform bytes: near-normal, sigma 147.8 before scaling.
        s = self._s
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        self._s = s
        n = (s & 255) + (s >> 8 & 255) + (s >> 16 & 255) + (s >> 24) - 510
        return n * sigma // 148

    def sample(self, t_us):
        x = self._gauss(self.adc_sigma)
        if self.ambient:
            x += self._gauss(self.ambient)
        ev = self._ev
        i = 0
        while i < len(ev):
            e = ev[i]
            dt = (t_us - e[1]) & _MASK
            if dt >= _HALF:  # not started yet
                i += 1
                continue
            if dt >= e[2]:
                ev.pop(i)
                continue
            x += self._event(e, dt)
            i += 1
        x += self.bias
        if self.bias == 0:
            x = 0 if x < DEAD else x - DEAD
        return 0 if x < 0 else 65535 if x > 65535 else x

    def _event(self, e, dt):
        kind = e[0]
        amp = e[3]
        if kind == _RING:
            f, tau, attack = e[4], e[5], e[6]
            if dt < attack:
                env = amp * dt // attack
                ph = 0
            else:
                ph = dt - attack
                j = ph * 32 // tau
                if j > 255:
                    return 0
                env = amp * _EXP[j] >> 8
            return env * _SIN[_phase(dt, f)] >> 7
        if kind == _TALK:
            # syllables: 200 ms slots, each voiced or not, with its own pitch and loudness
            k = dt // 200000
            h = _hash(e[7], k)
            if h & 3 == 0:
                return 0
            pos = dt - k * 200000
            env = amp * (64 + (h >> 8 & 191)) >> 8
            env = env * _SIN[pos * 128 // 200000] >> 7  # half-sine syllable envelope
            f = 110 + (h >> 16 & 127)
            ph = _phase(dt, f)
            v = _SIN[ph & 255] * 2 + _SIN[(ph * 2) & 255] + _SIN[(ph * 3) & 255]
            return env * v >> 9
        if kind == _TRUCK:
            env = amp * _SIN[dt // ((e[2] >> 7) or 1) & 127] >> 7  # swell and fade
            a = _SIN[_phase(dt, 12)] * 3 + _SIN[_phase(dt, 29)]
            return (env * a >> 9) + (self._gauss(env) >> 2)
        # _SCRAPE: friction noise with a 30 ms random loudness, a tiny click every ~100 ms
        k = dt // 30000
        h = _hash(e[7], k)
        x = self._gauss(amp * (h & 255) >> 8)
        k = dt // 100000
        c = dt - k * 100000 - (_hash(e[7], k + 77777) % 90000)
        if 0 <= c < 4000:
            x += (amp * 2 * _EXP[c * 32 // 500 if c < 4000 else 255] >> 8) * _SIN[_phase(c, 1500)] >> 7
        return x


def _phase(dt, f):
    # (dt * f * 256 // 10**6) & 255, the phase of an f Hz wave dt us in, kept in the 31-bit small-int range
    # of a 32-bit port (a product past 2**30 would allocate a long int on every sample).
    d = dt % 1000000
    p = 0
    while f > 1000:
        p = (p + d * 1000) % 1000000
        f -= 1000
    p = (p + d * f) % 1000000
    return p * 16 // 62500


def _clip01(a):
    return 0.0 if a < 0 else 1.0 if a > 1 else a
