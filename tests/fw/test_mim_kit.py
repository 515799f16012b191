# Helpers for the test_mim_* files (this file has no tests of its own).
import json
import sys

from maus.games.mim import catalog as mim_catalog

# The catalog is built first, while the 96 KB heap is still in one piece: compiling the validator from
# source needs big blocks. The game then gets the compact Catalog (mim.rules.load_catalog passes it through).
with open(mim_catalog.default_path()) as _f:
    CAT = mim_catalog.build(json.load(_f))
del sys.modules["maus.games.mim.catalog"]

from maus.games.base import Player  # noqa: E402
from maus.games.mim import engine as mim  # noqa: E402
from maus.games.mim.rules import MIsForMouse  # noqa: E402
from maus.ticks import ticks_add  # noqa: E402
from tablefake import FakeTable  # noqa: E402

L = mim.LETTERS
T0 = 1000000  # reveal time (us) used by most tests


def ident(c):
    """Identity of card index c (0-based)."""
    return "mim/card/%02d" % (c + 1)


def new_game(variant, n=2, settings=None):
    t = FakeTable()
    g = MIsForMouse(t, [Player(i) for i in range(1, n + 1)], settings or {"lang": "en"}, CAT, variant, 1)
    t.game = g
    g.start()
    return g, t


def tap(g, c, at=T0):
    g.on_tap(ident(c), "u%d" % c, at)


def objs(c):
    return CAT.cards[4 * c], CAT.cards[4 * c + 1]


def lets(c):
    return CAT.cards[4 * c + 2], CAT.cards[4 * c + 3]


def oracle(cards, used):
    """Every legal pair by brute force: [(object slot, e, letter slot, e)] sorted."""
    out = []
    for a in range(len(cards)):
        for ea in range(2):
            if used[a] & (1 << ea):
                continue
            for b in range(len(cards)):
                if b == a:
                    continue
                for eb in range(2, 4):
                    if used[b] & (1 << eb):
                        continue
                    if CAT.cards[4 * cards[a] + ea] == CAT.cards[4 * cards[b] + eb]:
                        out.append((a, ea, b, eb))
    out.sort()
    return out


def found(f, n):
    out = []
    for k in range(n):
        o = f.out[2 * k]
        x = f.out[2 * k + 1]
        out.append((o >> 2, o & 3, x >> 2, x & 3))
    out.sort()
    return out


def pairs_of(a, b):
    """Pairs between cards a and b (no chips): [(letter index, object on a?)]."""
    out = []
    for o in objs(a):
        if o in lets(b):
            out.append((o, True))
    for o in objs(b):
        if o in lets(a):
            out.append((o, False))
    return out


def find_two(k, exclude=()):
    """Two cards (a, b) with exactly k pairs between them."""
    for a in range(23):
        for b in range(23):
            if a != b and a not in exclude and b not in exclude and len(pairs_of(a, b)) == k:
                return a, b
    return None


def press(g, t, p, at, off=0):
    g.on_press(p, ticks_add(at, off))
    g.on_release(p, ticks_add(at, off + 80000))


def click(g, t, p, at=T0):
    g.on_press(p, at)
    g.on_gesture(p, "click")


def hold(g, t, p, at=T0):
    g.on_press(p, at)
    g.on_gesture(p, "long")


def said(t):
    return [k for k, kw in t.said]


def stray(g, r):
    k = r.randint(0, 9)
    if k == 0:
        g.on_tap("mg/mouse/07", "x", 0)
    elif k == 1:
        g.on_tap(None, "y", 0)
    elif k == 2:
        g.on_tap("mim/card/%02d" % r.randint(1, 23), "z", 0)


def press_now(g, t, p, r):
    g.on_press(p, (t.t * 1000 + r.randint(0, 3000)) & 0x3FFFFFFF)


def trim(t):
    """Forget what the fake table recorded (long random games would fill a 96 KB heap)."""
    t.records = []
    t.said = []
    t.sounds = []
