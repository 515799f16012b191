# The labelled signal suite for the piezo alarm detector (runs under CPython and MicroPython).
#
# A case is (name, should_alarm, length_ms, actions). Actions, times in ms from the case start:
#   ("knock", t, amplitude, ms, shape)   a bump of the castle (maus.sim.piezo SHAPES)
#   ("thump", t, amplitude, press_dt)    another player's button pressed on the table; its edge
#                                        reaches the unit press_dt ms after the thump begins (may be < 0)
#   ("talk", t, ms, level) / ("truck", t, ms, level) / ("insert", t, ms, level)
#   ("noise", level)                     ambient room noise for the whole case
# Bell-level bumps (amplitude >= BELL_LEVEL of full scale) must alarm; everything else must not.
# The detector hears the room's noise for PRE_MS disarmed, is armed at t = 0 (which blanks
# Detector.blank_ms) and every case starts its events START_MS later.
from maus.piezo.detect import Detector
from maus.sim.piezo import Piezo
from maus.ticks import PERIOD

BELL_LEVEL = 0.05  # the softest bump that rings the game's bell (docs/piezo.md)
PRE_MS = 1000  # ambient noise heard while disarmed, before the attempt
START_MS = 300  # events start after the arming blank and the high-pass settling
T0 = PERIOD - 700000  # cases start 0.7 s before the 2**30 wrap: every case crosses it
BUMP_SHAPES = ("ring", "ring", "click", "thud", "buzz", "double", "wobble")


def _loguniform(rnd, lo, hi):
    # lo * (hi/lo) ** u without float pow differences between interpreters: 64 log steps
    steps = 64
    k = rnd.randint(0, steps)
    r = lo
    f = (hi / lo) ** (1 / steps)
    for _ in range(k):
        r *= f
    return r


def bumps(rnd, n):
    """n bell-level bumps of random strength and shape, some over ambient noise."""
    out = []
    for i in range(n):
        shape = rnd.choice(BUMP_SHAPES)
        amp = _loguniform(rnd, BELL_LEVEL, 1.0)
        t = START_MS + rnd.randint(0, 200)
        acts = []
        if shape == "double":
            acts.append(("knock", t, amp, 30, "ring"))
            acts.append(("knock", t + 40 + rnd.randint(0, 60), amp, 30, "ring"))
        elif shape == "wobble":
            amp = amp * 3 if amp * 3 < 1 else 1.0  # rocking rings the bell only when it is strong
            acts.append(("knock", t, amp, None, "wobble"))
        else:
            acts.append(("knock", t, amp, None, shape))
        r = rnd.randint(0, 9)
        if r < 3:
            acts.append(("noise", rnd.randint(5, 30) / 100))
        elif r == 3:
            acts.append(("talk", START_MS - 200, 1000, rnd.randint(2, 8) / 1000))
        elif r == 4:
            acts.append(("insert", t - 150, 400, rnd.randint(2, 5) / 1000))
        out.append(("bump-%s-%d" % (shape, i), True, t + 400, acts))
    return out


def ambient(rnd, n):
    """n cases of ambient noise that must not alarm."""
    out = []
    kinds = ("talk", "thump", "truck", "insert", "noise", "mix")
    for i in range(n):
        kind = kinds[i % len(kinds)]
        t = START_MS + rnd.randint(0, 100)
        if kind == "talk":
            ms = rnd.randint(2000, 6000)
            acts = [("talk", t, ms, rnd.randint(2, 12) / 1000)]
        elif kind == "thump":
            ms = 1500
            acts = []
            for j in range(rnd.randint(1, 4)):
                acts.append(("thump", t + j * 300, rnd.randint(3, 15) / 100, rnd.randint(-3, 4)))
        elif kind == "truck":
            ms = rnd.randint(4000, 10000)
            acts = [("truck", t, ms, rnd.randint(2, 8) / 100)]
        elif kind == "insert":
            ms = rnd.randint(1000, 4000)
            acts = [("insert", t, ms, rnd.randint(2, 6) / 1000)]
        elif kind == "noise":
            ms = 3000
            acts = [("noise", rnd.randint(10, 60) / 100)]
        else:
            ms = 5000
            acts = [("noise", rnd.randint(5, 25) / 100), ("talk", t, 4000, rnd.randint(2, 8) / 1000),
                    ("insert", t + 1000, 2000, rnd.randint(2, 5) / 1000),
                    ("thump", t + 500, rnd.randint(3, 12) / 100, rnd.randint(-2, 3))]
        out.append(("ambient-%s-%d" % (kind, i), False, t + ms + 200, acts))
    return out


def build(p, actions, t0):
    """Put a case's actions on Piezo p; returns the press times (µs ticks) to blank."""
    presses = []
    for a in actions:
        k = a[0]
        if k == "noise":
            p.noise(a[1])
            continue
        t = (t0 + a[1] * 1000) % PERIOD
        if k == "knock":
            p.knock(t, a[2], a[3], a[4])
        elif k == "thump":
            p.thump(t, a[2])
            presses.append((t0 + (a[1] + a[3]) * 1000) % PERIOD)
        elif k == "talk":
            p.talk(t, a[2], a[3])
        elif k == "truck":
            p.truck(t, a[2], a[3])
        elif k == "insert":
            p.insert(t, a[2], a[3])
    presses.sort(key=lambda x: (x - t0) % PERIOD)
    return presses


def onset_ms(actions):
    ts = [a[1] for a in actions if a[0] == "knock"]
    return min(ts) if ts else None


def run_case(case, seed=1, rate_hz=10000, sensitivity=5, det=None, settle_ms=0):
    """Feed one case through a detector armed at the start. Returns (alarms, first_alarm_ms, onset_ms
    of the detector's alarm); times in ms from the case start, None when there was no alarm.
    A press is known settle_ms after its edge (default 0: should_stop() sees the edge at once)."""
    name, _, length_ms, actions = case
    p = Piezo(seed)
    presses = build(p, actions, T0)
    d = det if det is not None else Detector(sensitivity=sensitivity, rate_hz=rate_hz)
    d.reset()
    period = 1000000 // rate_hz
    # the room was as noisy before the attempt: PRE_MS disarmed (floor learning), then armed at T0
    for i in range(-PRE_MS * 1000 // period, 0):
        t = (T0 + i * period) % PERIOD
        d.feed(p.sample(t), t)
    d.arm(T0)
    n = length_ms * 1000 // period
    alarms = 0
    first = None
    first_onset = None
    pi = 0
    np = len(presses)
    for i in range(n):
        t = (T0 + i * period) % PERIOD
        # a press is known to the runtime settle_ms after its first edge
        while pi < np and (t - presses[pi] - settle_ms * 1000) % PERIOD < PERIOD // 2:
            d.blank(presses[pi])
            pi += 1
        if d.feed(p.sample(t), t):
            alarms += 1
            if first is None:
                first = i * period / 1000
                first_onset = ((d.alarm_t - T0) % PERIOD) / 1000
    return alarms, first, first_onset


def judge(case, result):
    """True when the detector's verdict matches the label (an alarm cancelled by a press counts as none)."""
    alarms = result[0]
    return (alarms > 0) == case[1]


def run_stream(cases, seed=1, rate_hz=10000, sensitivity=5, det=None):
    """Every case back to back in one stream: one Piezo, one detector never reset, time running on
    across the 2**30 wrap. Each case is an attempt: the detector is armed at its start (and re-armed
    after an alarm, as the next attempt would). Returns (alarms as (case name, ms into the case), ms)."""
    p = Piezo(seed)
    d = det if det is not None else Detector(sensitivity=sensitivity, rate_hz=rate_hz)
    period = 1000000 // rate_hz
    t0 = T0
    alarms = []
    total = 0
    for case in cases:
        name, _, length_ms, actions = case
        p.noise(0)
        presses = build(p, actions, t0)
        d.arm(t0)
        pi = 0
        np = len(presses)
        for i in range(length_ms * 1000 // period):
            t = (t0 + i * period) % PERIOD
            while pi < np and (t - presses[pi]) % PERIOD < PERIOD // 2:
                d.blank(presses[pi])
                pi += 1
            if d.feed(p.sample(t), t):
                alarms.append((name, i * period // 1000))
                d.arm(t)
        t0 = (t0 + length_ms * 1000) % PERIOD
        total += length_ms
    return alarms, total
