"""Writes the Mausgeflippt scenarios mg-*.jsonl and their expected game_end (mg-*.expect.json).

The expected result comes from this script's own tally of the rulebook (not from the firmware), so the
scenario checks the unit. Run from the repository root: `.venv/bin/python tests/scenarios/mg-make.py`.
Timing follows the unit shell: a press is press + release (70 ms), a double press is two presses 150 ms
apart, the race presses come 400 ms after the mouse is put down, tied presses at 0, 1 and 1 ms (3 fit in the
2 ms tie window; 2 ms apart would sit on its edge), cards stay on the pad 150 ms. Scenarios are kept short: the virtual unit holds them in
its heap.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path[:0] = [str(ROOT / "firmware"), str(ROOT / "host")]

import mausbox  # noqa: E402, F401 - the micropython shim
from maus.games.mausgeflippt import cards as mausgeflippt_cards  # noqa: E402
from maus.games.mausgeflippt import catalog as mausgeflippt_catalog  # noqa: E402

CAT = mausgeflippt_cards.load(mausgeflippt_catalog.read_file())
OUT = ROOT / "tests" / "scenarios"


def worn(m, c):
    return CAT.worn(m, CAT.clothing[c - 1])


class Game:
    def __init__(self, n, young=()):
        self.lines = []
        self.t = 1000
        self.ids = list(range(1, n + 1))
        self.mice = [0] * 7
        self.up = [0] * 7
        self.down = [0] * 7
        self.cheeses = [0] * 7
        self.caught = set()
        self.left = 32
        self.under = 0
        self.penalty = set()
        self.cheese_used = set()
        self.cheese_stack = 9
        self.open = 0
        self.done = None
        self.add(self.t, tap="game/mausgeflippt")
        self.add(self.t + 300, remove="game/mausgeflippt")
        self.t += 1000
        for p in self.ids:  # join; a young player holds 2.5 s
            self.add(self.t, press=p)
            self.add(self.t + (2500 if p in young else 80), release=p)
            self.t += 3000 if p in young else 600
        self.press(1, self.t, 80)  # double press: start
        self.press(1, self.t + 200, 80)
        self.t += 1500
        self.cheese()

    def add(self, at, **kw):
        d = {"at_ms": at}
        d.update(kw)
        self.lines.append(d)

    def press(self, p, at, hold=70):
        self.add(at, press=p)
        self.add(at + hold, release=p)

    def tap_card(self, c, at):
        self.add(at, tap="mg/clothing/%02d" % c)
        self.add(at + 150, remove="mg/clothing/%02d" % c)

    def cheese(self):
        c = min(set(range(1, 10)) - self.cheese_used)
        self.cheese_used.add(c)
        self.cheese_stack -= 1
        self.open = c
        self.add(self.t, tap="mg/cheese/%d" % c)
        self.add(self.t + 300, remove="mg/cheese/%d" % c)
        self.t += 1000

    def protected(self, m):
        return CAT.mouse_cheese[m - 1] == CAT.cheese_cards[self.open - 1]

    def pick(self, protected):
        for m in range(1, 33):
            if m not in self.caught and self.protected(m) == protected and (m != self.under or self.left == 1):
                return m
        return None

    def card(self, m, ok, avoid=()):
        return [c for c in range(1, 59) if worn(m, c) == ok and c not in self.penalty and c not in avoid][0]

    def round(self, protected, claims, false_start=None, late=()):
        """One mouse. claims: [(player, action)] in press order, several = a tie; action: ("item", worn),
        ("coll", n_matching, n_other), ("slow",) or ("blocked", worn) (a refused call, then an item)."""
        assert self.done is None
        m = self.pick(protected)
        t0 = self.t
        if false_start:
            self.press(false_start, t0 - 300)
        self.add(t0, tap="mg/mouse/%02d" % m)
        prot = self.protected(m)
        if not claims:  # nobody: under the stack after the protection timeout
            self.add(t0 + 3600, remove="mg/mouse/%02d" % m)
            self.under = m
            self.t = t0 + 5500
            return
        assert len(claims) <= 3, "presses at 0, 1 and 1 ms: 3 fit the 2 ms tie window"
        # Two presses in the same ms are in no order of their own: the unit takes them by player number
        # (maus.capture.arbiter: by time, then player), and so the claims resolve.
        claims = list(claims[:1]) + sorted(claims[1:], key=lambda c: c[0])
        for i, (p, _) in enumerate(claims):
            self.press(p, t0 + 400 + min(i, 1))  # not 2 ms: the tie window's edge is a coin toss on a board
        late = list(late)  # (player, ms after the first press, action): pressed after the race was decided
        for p, ms, _ in late:
            self.press(p, t0 + 400 + ms)
        valid = took = 0
        fin = None
        t = t0 + 1000
        queue = list(claims)
        qk = 0
        while qk < len(queue):
            p, act = queue[qk]
            qk += 1
            kind = act[0]
            fin = None
            ok = False
            if kind in ("item", "blocked"):
                if kind == "blocked":
                    self.press(p, t)
                    self.press(p, t + 150)
                    t += 600
                c = self.card(m, act[1])
                self.tap_card(c, t)
                t += 600
                if act[1]:
                    ok = not prot
                else:
                    self.penalty.add(c)
                    self.up[p] += 1
            elif kind == "coll":
                assert self.down[p] < 3, "three face-down cards: the unit refuses the call"
                self.press(p, t)
                self.press(p, t + 150)
                t += 500
                cards = []
                for _ in range(act[1]):
                    cards.append(self.card(m, True, cards))
                for _ in range(act[2]):
                    cards.append(self.card(m, False, cards))
                for c in cards:
                    self.tap_card(c, t)
                    t += 300
                for k, c in enumerate(cards[:act[1]]):
                    self.penalty.add(c)
                    if k == 0:
                        self.down[p] += 1
                    else:
                        self.up[p] += 1
                self.press(p, t)
                fin = (p, t)
                t += 500
                ok = not prot and act[1] == 0
            elif kind == "slow":
                t += 5200
                if not prot and qk == len(queue) and late:  # the claim passes to the next presser
                    lp, _ms, lact = late.pop(0)
                    queue.append((lp, lact))
            if ok:  # the open mouse first, then one from the stack
                valid += 1
                if valid == 1:
                    self.caught.add(m)
                if valid == 1 or self.left:
                    self.left -= 1
                    self.mice[p] += 1
            if prot and (took == 0 or self.cheese_stack):  # the open cheese first, then the stack's
                if took:
                    self.cheese_stack -= 1
                self.cheeses[p] += 1
                took += 1
        if fin and (self.left == 0 or took and self.cheese_stack == 0):
            # the game ends on this press: make it a double press, or its click would mean "same
            # players again" on the end screen
            self.press(fin[0], fin[1] + 150)
        self.add(t, remove="mg/mouse/%02d" % m)
        if valid == 0:
            self.under = m
        self.t = t + 2000
        if self.left == 0:
            self.done = "last_mouse"
        elif took:
            if self.cheese_stack == 0:
                self.done = "last_cheese"
            else:
                self.cheese()

    def expect(self):
        score = {p: self.mice[p] - self.up[p] - self.down[p] - 2 * self.cheeses[p] for p in self.ids}
        pen = {p: self.up[p] + self.down[p] + 2 * self.cheeses[p] for p in self.ids}
        best = max((score[p], -pen[p]) for p in self.ids)
        return {"scores": {str(p): score[p] for p in self.ids},
                "winners": [p for p in self.ids if (score[p], -pen[p]) == best], "reason": self.done}

    def write(self, name, comment):
        assert self.done, name
        self.lines.sort(key=lambda d: d["at_ms"])
        with open(OUT / (name + ".jsonl"), "w") as f:
            f.write("# %s\n" % comment)
            for d in self.lines:
                f.write(json.dumps(d) + "\n")
        with open(OUT / (name + ".expect.json"), "w") as f:
            f.write(json.dumps(self.expect()) + "\n")
        print(name, self.expect(), len(self.lines), "lines", self.t / 1000, "s")


def two_players():
    g = Game(2, young=(2,))
    g.round(False, [(1, ("item", True))])
    g.round(False, [(2, ("item", False))])
    g.round(False, [(1, ("coll", 0, 7))])
    g.round(False, [(2, ("coll", 2, 2))])  # young: 4 cards
    g.round(True, [(1, ("item", True))])  # protected: the item is discarded, the cheese taken
    g.round(True, [])  # protected, nobody claims: under the stack
    g.round(False, [(1, ("item", True)), (2, ("item", True))])  # tie: the open mouse + one from the stack
    g.round(True, [(2, ("item", False))], false_start=1)  # cheese + penalty
    g.round(False, [(2, ("item", True))], false_start=1)
    for i in range(7):
        g.round(True, [(1 + i % 2, ("coll", 0, 4) if i % 3 == 0 else ("item", True))])
    g.write("mg-2p-cheese", "Mausgeflippt, 2 players (P2 young): items, collections, a tie, protected mice, "
            "false starts; the last cheese ends it")


def four_players():
    g = Game(4, young=(3,))
    g.round(False, [(1, ("item", True)), (3, ("item", True)), (4, ("item", True))])  # 3-way tie: 3 mice
    g.round(False, [(3, ("coll", 1, 3))])  # young P3: 4 cards
    g.round(False, [(3, ("coll", 1, 3))])
    g.round(False, [(3, ("coll", 1, 3))])  # P3: 3 face down
    g.round(False, [(3, ("blocked", True))])  # refused call, then a card
    g.round(True, [(4, ("slow",))])  # pressed on a protected mouse and played nothing: cheese
    g.round(False, [(2, ("slow",))])  # too slow on a free mouse: nothing
    # P4 wins, P1 presses 600 ms later (a late press, logged); P4 plays nothing: the claim passes to P1
    g.round(False, [(4, ("slow",))], late=[(1, 600, ("item", True))])
    g.round(False, [(1, ("item", False)), (4, ("item", True))])  # tie: first wrong, second catches
    i = 0
    while not g.done:  # mostly 3-way ties: each valid claim catches a mouse
        if g.pick(False) is None:
            g.round(True, [(g.ids[i % 4], ("item", True))])  # only protected mice left: someone falls for one
        else:
            g.round(False, [(g.ids[(i + k) % 4], ("item", True)) for k in range(3)])
        i += 1
    g.write("mg-4p-mice", "Mausgeflippt, 4 players (P3 young): 2- and 3-way ties, three face-down cards "
            "block the young player's call, timeouts; the last mouse ends it")


def six_players():
    g = Game(6, young=(6,))
    g.round(True, [(2, ("item", True)), (5, ("item", False))])  # protected tie: two cheeses
    g.round(False, [(3, ("item", True)), (4, ("item", True)), (6, ("coll", 0, 4))])
    g.round(False, [(1, ("coll", 2, 5)), (2, ("item", True))])
    g.round(True, [])
    i = 0
    while not g.done:
        a = g.ids[i % 6]
        b = g.ids[(i + 2) % 6]
        if i % 2 and g.pick(True) is not None:
            g.round(True, [(a, ("item", True)), (b, ("coll", 0, 4 if b == 6 else 6))])
        elif g.pick(False) is not None:
            g.round(False, [(b, ("item", True))], false_start=a)
        else:
            g.round(True, [(b, ("item", True))])
        i += 1
    g.write("mg-6p-ties", "Mausgeflippt, 6 players (P6 young): ties of 2 and 3 on free and protected mice, "
            "collections, false starts; the last cheese ends it")


def waiting():
    g = Game(3)
    g.t += 60000  # the unit waits a minute for the first reveal: host commands come in meanwhile
    i = 0
    while not g.done:  # one claim a mouse, no ties: played in real time it does not hang on 1 ms gaps
        g.round(True, [(1 + i % 3, ("item", True))])
        i += 1
    g.write("mg-3p-wait", "Mausgeflippt, 3 players: a minute's wait before the first reveal (host commands "
            "during a game, tests/host/test_link_game.py), then a protected mouse claimed in each round; the "
            "last cheese ends it")


if __name__ == "__main__":
    two_players()
    four_players()
    six_players()
    waiting()
