# Helpers for the test_mausgeflippt_* files (this file has no tests of its own).
from maus.games.base import Player
from maus.games.mausgeflippt import cards as mgcards
from maus.games.mausgeflippt import catalog as mgcat
from maus.games.mausgeflippt.rules import Mausgeflippt
from maus.ticks import ticks_add
from tablefake import FakeTable

CAT = mgcards.load(mgcat.read_file())
T0 = 1000000  # reveal time (us) used by most tests

def new_game(n=2, young=(), settings=None, cheese=1):
    t = FakeTable()
    g = Mausgeflippt(t, [Player(i, i in young) for i in range(1, n + 1)], settings or {}, CAT)
    t.game = g
    g.start()
    if cheese:
        g.on_tap("mg/cheese/%d" % cheese, "c%d" % cheese, 0)
    return g, t


def mouse_id(m):
    return "mg/mouse/%02d" % m


def cloth_id(c):
    return "mg/clothing/%02d" % c


def cheese_type(cheese):
    return CAT.cheese_cards[cheese - 1]


def mice_where(protected, cheese=1):
    """Mouse ids that are (not) protected while cheese card `cheese` is open."""
    return [m for m in range(1, 33) if (CAT.mouse_cheese[m - 1] == cheese_type(cheese)) == protected]


def worn_cards(m):
    return [c for c in range(1, 59) if CAT.worn(m, CAT.clothing[c - 1])]


def unworn_cards(m):
    return [c for c in range(1, 59) if not CAT.worn(m, CAT.clothing[c - 1])]


def reveal(g, t, m, at=T0):
    g.on_tap(mouse_id(m), "m%d" % m, at)


def race(g, t, *presses, at=T0):
    """presses: (player, offset_us) in delivery order; then let the decision happen."""
    for p, off in presses:
        g.on_press(p, ticks_add(at, off))
    t.advance(20)


def play_item(g, t, m, p, ok=True, at=T0):
    reveal(g, t, m, at)
    race(g, t, (p, 150000), at=at)
    g.on_tap(cloth_id((worn_cards if ok else unworn_cards)(m)[0]), "x", at)


def call(g, t, p, cards):
    g.on_gesture(p, "double")
    for c in cards:
        g.on_tap(cloth_id(c), "x", 0)
    g.on_press(p, 0)


def settle(t):
    t.advance(2000)  # the verdict's display time; the next prompt follows


def verdicts(t):
    return [r[1] for r in t.records if r[0] == "verdict"]


def check_totals(g):
    assert sum(g.s.mice) + g.s.mice_left == 32
    for pl in g.players:
        p = pl.id
        assert g.s.score(p) == g.s.mice[p] - g.s.up[p] - g.s.down[p] - 2 * g.s.cheeses[p]


def trim(t):
    """Forget what the table recorded so far: long games fit a 96 KB heap."""
    t.records = []
    t.said = []
    t.sounds = []
