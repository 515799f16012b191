# The table simulator for test_mausgeflippt_play.py (no tests here): random legal play on a simulated table (shuffled stacks, real hands),
# judged by an independent oracle. Always: mice caught + mice left = 32, scores = the breakdown
# formula, the unit's counts = the table's, and the game ends.
from fwtest import Rand
from maus.games.base import Player
from maus.games.mausgeflippt import cards as mausgeflippt_cards
from maus.games.mausgeflippt import catalog as mausgeflippt_catalog
from maus.games.mausgeflippt.rules import Mausgeflippt
from maus.ticks import ticks_add
from tablefake import FakeTable

CAT = None  # loaded by the first Sim (a bench may hand in its own)


class LeanTable(FakeTable):
    """Keeps only the last prompt and counts records: a long game fits a 96 KB heap."""

    def __init__(self):
        super().__init__()
        self.n = {}
        self.last_say = None

    def log(self, rtype, fields):
        self.n[rtype] = self.n.get(rtype, 0) + 1

    def say(self, key, **kw):
        self.last_say = key

    def sound(self, name):
        pass


def worn(m, c):
    return CAT.worn(m, CAT.clothing[c - 1])


class Sim:
    def __init__(self, seed):
        global CAT
        if CAT is None:
            CAT = mausgeflippt_cards.load(mausgeflippt_catalog.read_file())
        r = self.r = Rand(seed)
        n = r.randint(2, 6)
        self.ids = list(range(1, n + 1))
        self.young = [False] + [r.randint(0, 3) == 0 for _ in range(6)]
        self.t = LeanTable()
        self.g = Mausgeflippt(self.t, [Player(p, self.young[p]) for p in self.ids], {}, CAT)
        self.t.game = self.g
        self.mice = list(range(1, 33))
        r.shuffle(self.mice)
        self.cheeses = list(range(1, 10))
        r.shuffle(self.cheeses)
        self.deck = list(range(1, 59))
        r.shuffle(self.deck)
        self.discard = []
        self.hand = [[] for _ in range(7)]
        for p in self.ids:
            self.draw(p)
        # the oracle's counts
        self.caught = [0] * 7
        self.up = [0] * 7
        self.down = [0] * 7
        self.cheese = [0] * 7
        self.now = ticks_add(0x3FFFFFFF, seed * 7919 - 50000000)  # the clock wraps mid-game
        self.g.start()
        self.g.on_tap("mg/cheese/%d" % self.cheeses.pop(0), "c", 0)
        self.open_cheese = True

    def draw(self, p):
        size = 4 if self.young[p] else 7
        while len(self.hand[p]) < size:
            if not self.deck:
                if not self.discard:
                    return
                self.deck = self.discard
                self.discard = []
                self.r.shuffle(self.deck)
            self.hand[p].append(self.deck.pop())

    def protected(self, m):
        return CAT.mouse_cheese[m - 1] == CAT.cheese_cards[self.g.s.open_cheese - 1]

    def one_reveal(self):
        r, g, t = self.r, self.g, self.t
        m = self.mice.pop(0)
        self.now = ticks_add(self.now, r.randint(2, 30) * 1000000)
        at = self.now
        prot = self.protected(m)
        g.on_tap("mg/mouse/%02d" % m, "m", at)
        assert g.phase == 2
        # presses: maybe a false start, maybe nobody, maybe a tie
        presses = []
        ids = list(self.ids)
        r.shuffle(ids)
        if r.randint(0, 5) == 0:
            presses.append((ids.pop(), -r.randint(1, 300000)))
        want = 0 if r.randint(0, 6) == 0 else min(len(ids), r.choice((1, 1, 1, 2, 2, 3)))
        base = r.randint(80000, 900000)
        for i in range(want):
            presses.append((ids[i], base + (r.randint(0, 2000) if i else 0) if r.randint(0, 2) else base + 2001 + i))
        order = list(presses)
        r.shuffle(order)
        for p, off in order:
            g.on_press(p, ticks_add(at, off))
        t.advance(20)
        valid = [(off, p) for p, off in presses if off >= 0]
        valid.sort()
        expect = [p for off, p in valid if off - valid[0][0] <= 2000] if valid else []
        if not expect:
            t.advance(3000)
            assert g.phase == 1 and g.under == m
            self.mice.append(m)
            return
        assert g.queue == expect, (g.queue, expect)
        # decision 3: a claimant who plays nothing on a free mouse passes the claim to the next presser
        others = [p for off, p in valid if p not in expect]
        queue = list(expect)
        n_valid = 0
        took = 0
        i = 0
        while i < len(queue):
            p = queue[i]
            i += 1
            assert g.claimant == p and g.phase == 3, (g.claimant, p, g.phase)
            ok, cheese = self.claim(p, m, prot)
            if self.slow and not prot and i >= len(queue) and others:
                queue.append(others.pop(0))
            if ok:
                n_valid += 1
                if n_valid == 1:
                    self.caught[p] += 1
                elif self.mice:
                    self.mice.pop(0)  # a mouse from the stack
                    self.caught[p] += 1
            if cheese:
                if took == 0 or self.cheeses:
                    if took:
                        self.cheeses.pop(0)
                    self.cheese[p] += 1
                    took += 1
            self.draw(p)
        if n_valid == 0:
            self.mice.append(m)
        t.advance(1600)
        if took:
            self.open_cheese = False
            if self.cheeses and not g.done:
                assert g.phase == 5
                g.on_tap("mg/cheese/%d" % self.cheeses.pop(0), "c", 0)
                self.open_cheese = True

    def claim(self, p, m, prot):
        """The claimant acts; returns (valid claim, cheese earned) as the rulebook says."""
        r, g, t = self.r, self.g, self.t
        hand = self.hand[p]
        has = [c for c in hand if worn(m, c)]
        roll = r.randint(0, 19)
        self.slow = roll == 0 or not hand
        if self.slow:
            t.advance(5001)  # too slow: the press alone was the try
            return False, prot
        if has and roll < 16 or (not has and roll < 3):
            return self.play(p, m, prot, r.choice(has) if has and roll < 16 else r.choice(hand))
        if self.down[p] >= 3:
            g.on_gesture(p, "double")
            assert g.phase == 3  # refused: play a card instead
            return self.play(p, m, prot, r.choice(hand))
        g.on_gesture(p, "double")
        assert g.phase == 4
        for c in hand:
            g.on_tap("mg/clothing/%02d" % c, "x", 0)
        g.on_press(p, 0)
        match = [c for c in hand if worn(m, c)]
        for i, c in enumerate(match):
            hand.remove(c)
            if i == 0:
                self.down[p] += 1
            else:
                self.up[p] += 1
        return not prot and not match, prot

    def play(self, p, m, prot, c):
        self.g.on_tap("mg/clothing/%02d" % c, "x", 0)
        self.hand[p].remove(c)
        if worn(m, c):
            self.discard.append(c)
            return not prot, prot
        self.up[p] += 1
        return False, prot

    def check(self):
        g = self.g
        s = g.s
        assert sum(s.mice) + s.mice_left == 32
        assert s.mice_left == len(self.mice)
        for p in self.ids:
            assert (s.mice[p], s.up[p], s.down[p], s.cheeses[p]) == \
                   (self.caught[p], self.up[p], self.down[p], self.cheese[p]), p
            assert s.score(p) == s.mice[p] - s.up[p] - s.down[p] - 2 * s.cheeses[p]
        assert s.cheese_stack == len(self.cheeses)


def _play(seed):
    sim = Sim(seed)
    g = sim.g
    for _ in range(400):
        if g.done:
            break
        sim.one_reveal()
        sim.check()
    assert g.done and sim.t.finished
    s = g.summary()
    assert s["reason"] == ("last_mouse" if not sim.mice else "last_cheese")
    assert s["reason"] == "last_mouse" or not sim.cheeses
    for p in sim.ids:
        b = s["breakdown"][str(p)]
        assert s["scores"][str(p)] == b["mice"] - b["clothing_up"] - b["clothing_down"] - 2 * b["cheeses"]
        assert b["penalty_points"] == b["clothing_up"] + b["clothing_down"] + 2 * b["cheeses"]
        assert b["young"] == sim.young[p]
    best = max(s["scores"].values())
    top = [int(k) for k, v in s["scores"].items() if v == best]
    fewest = min(s["breakdown"][str(p)]["penalty_points"] for p in top)
    assert sorted(s["winners"]) == sorted(p for p in top if s["breakdown"][str(p)]["penalty_points"] == fewest)
    return sim
