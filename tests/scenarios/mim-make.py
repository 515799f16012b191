"""Writes the M is for Mouse scenarios (tests/scenarios/mim-*.jsonl) and their expected game ends.

Run `python tests/scenarios/mim-make.py` after changing a game below. The script follows the unit shell's
flow (tap the game card, P1 clicks to the variant and holds to choose it, everyone presses to join, a
double press starts) and plays the game with timed presses and card taps. It reads the catalog itself and
keeps its own count of pairs, chips, hands and cards, as an oracle independent of the firmware, to write
the .expect.json.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATALOG = HERE.parent.parent / "firmware" / "maus" / "catalogs" / "mim.json"
CLICK_MS = 400  # double_press_ms: a click is known this long after its release
HOLD_MS = 1200  # > long_press_ms
CLAIM_MS = 5000  # claim_window_ms: also how long a race stays open without a press
SHOW_MS = 1500

_data = json.loads(CATALOG.read_text(encoding="utf-8"))
_initial = {v[0]: k for k, v in _data["objects"].items()}
CARDS = {c["id"]: ([_initial[o] for o in c["objects"]], list(c["letters"])) for c in _data["cards"]}


def pairs(a, b, used=frozenset()):
    """Pairs of cards a and b (ids): [(letter, object card, letter card)]; used: chips on (card, letter)."""
    out = []
    for x, y in ((a, b), (b, a)):
        for o in CARDS[x][0]:
            if o in CARDS[y][1] and (y, o) not in used and (x, "obj", o) not in used:
                out.append((o, x, y))
    return out


def table_pairs(cards, used=frozenset()):
    return [p for i, a in enumerate(cards) for b in cards[i + 1:] for p in pairs(a, b, used)]


class Script:
    def __init__(self, variant, n, comment):
        self.n = n
        self.lines = ["# " + comment]
        self.t = 1000
        self.done = None
        self.at("tap", "game/mim")
        self.t += 300
        self.at("remove", "game/mim")
        self.t += 700
        for _ in range("ABC".index(variant)):
            self.click(1)
        self.hold(1)
        for p in range(1, n + 1):
            self.press(p)
            self.t += 500
        self.t += 200
        self.double(1)  # start
        self.t += 900

    def at(self, key, value, **extra):
        rec = {"at_ms": self.t, key: value}
        rec.update(extra)
        self.lines.append(json.dumps(rec))

    def press(self, p, wait=0):
        self.at("press", p)
        self.t += 80
        self.at("release", p)
        self.t += wait

    def click(self, p):
        self.press(p, CLICK_MS + 300)

    def hold(self, p):
        self.at("hold", p, ms=HOLD_MS)
        self.t += HOLD_MS + 500

    def double(self, p):
        self.at("press", p)
        self.t += 60
        self.at("release", p)
        self.t += 100
        self.at("press", p)
        self.t += 60
        self.at("release", p)

    def tap(self, card):
        self.at("tap", "mim/card/%02d" % card)
        self.t += 300
        self.at("remove", "mim/card/%02d" % card)
        self.t += 400

    def write(self, name, scores, winners, reason):
        (HERE / f"mim-{name}.jsonl").write_text("\n".join(self.lines) + "\n")
        expect = {"scores": {str(p): s for p, s in scores.items()}, "winners": winners, "reason": reason}
        (HERE / f"mim-{name}.expect.json").write_text(json.dumps(expect) + "\n")


# --- variant A -------------------------------------------------------------------------------------
def _a_free(p, m, used):
    letter, obj, let = p
    return (m, letter, "let" if let == m else "obj") not in used


def a_pair(s, middle, used, n_pairs=1):
    """The player on turn shows a hand card that makes n_pairs free pairs with a middle card; with two,
    a click shows the second and a hold takes it."""
    for h in range(1, 24):
        if h in middle:
            continue
        for m in middle:
            ps = [p for p in pairs(h, m) if _a_free(p, m, used)]
            if len(ps) == n_pairs and len(pairs(h, m)) == n_pairs:
                s.tap(h)
                s.tap(m)
                if n_pairs == 2:
                    s.click(s.turn)
                    s.hold(s.turn)
                    ps = ps[1:]  # the firmware offers object-on-first-card pairs first: see pairs()
                letter, obj, let = ps[0]
                used.add((m, letter, "let" if let == m else "obj"))
                s.t += SHOW_MS
                return
    raise AssertionError("no hand card with %d free pair(s)" % n_pairs)


def a_pass(s):
    s.hold(s.turn)
    s.t += SHOW_MS


def variant_a(n=3):
    s = Script("A", n, f"M is for Mouse, variant A, {n} players: pairs, a wrong pair, a choice between two pairs, "
                       "passes; P1 gives up the last hand card after three rounds")
    for rnd in (1, 2, 3):
        middle = [(rnd * 7 + k * 3) % 23 + 1 for k in range(3)]
        for c in middle:
            s.tap(c)
        used: set = set()
        s.turn = 1  # P1 begins, then wins every round
        if rnd == 1:
            # a hand card without a free pair first: P1 tries again
            bad = next(h for h in range(1, 24) if h not in middle and all(not pairs(h, m) for m in middle))
            s.tap(bad)
            s.tap(middle[0])
            s.t += SHOW_MS
        a_pair(s, middle, used)
        s.turn = 2
        if rnd == 2:
            a_pair(s, middle, used, 2)  # P2 chooses between two pairs
            for s.turn in range(3, n + 1):
                a_pass(s)
            s.turn = 1
            a_pair(s, middle, used)
            s.turn = 2
            a_pass(s)  # the last one left: P1
            continue
        a_pass(s)
        for s.turn in range(3, n + 1):
            a_pass(s)
    s.write(f"a-{n}p", {p: 3 if p == 1 else 0 for p in range(1, n + 1)}, [1], "last card")


# --- variant B -------------------------------------------------------------------------------------
def variant_b(n=3):
    s = Script("B", n, f"M is for Mouse, variant B, {n} players, P3 leads: claims right and wrong, a lock-out, "
                       "a false start; most cards when the stack is used up wins")
    s.hold(3)  # the game leader
    cards = {p: 0 for p in range(1, n + 1)}
    lock = {}  # player -> laid count until which they are out
    deck = list(range(1, 24))
    table: list = []
    laid = 0
    plan = {1: 1, 2: 2, 3: 1, 0: 3}  # which player claims a pair, by turn number mod 4
    k = 0
    for c in deck:
        s.tap(c)
        laid += 1
        table.append(c)
        s.t += 300
        ps = table_pairs(table)
        if not ps:
            if laid == 23:
                break
            s.t += CLAIM_MS + 200  # nobody presses: the race closes, the leader lays the next card
            continue
        k += 1
        p = plan[k % 4]
        if lock.get(p, 0) > laid:
            p = next(q for q in (1, 2, 3) if lock.get(q, 0) <= laid)
        if k == 2:
            # a wrong claim first: P2 taps two cards without a pair (if there are such), locked out
            nop = next(((x, y) for i, x in enumerate(table) for y in table[i + 1:] if not pairs(x, y)), None)
            if nop and lock.get(2, 0) <= laid:
                s.press(2)
                s.t += 300
                s.tap(nop[0])
                s.tap(nop[1])
                lock[2] = laid + 2
                s.t += SHOW_MS
                if p == 2:
                    p = 1
        letter, a, b = ps[0]
        s.press(p)
        s.t += 300
        s.tap(a)
        s.tap(b)
        cards[p] += len(table) - 1
        table = [table[-1]]
        if laid == 23:
            break
        s.t += SHOW_MS
        if k == 3:
            s.press(1)  # a false start before the next card: P1 is out of it
            s.t += 200
    best = max(cards.values())
    s.write(f"b-{n}p", cards, [p for p in cards if cards[p] == best], "stack used up")


# --- variant C -------------------------------------------------------------------------------------
class C:
    def __init__(self, s, n):
        self.s = s
        self.chips = {p: 30 // n for p in range(1, n + 1)}
        self.placed = {p: 0 for p in range(1, n + 1)}
        self.cards: list = []
        self.used: set = set()  # (letter card, letter) with a chip
        self.winner = None

    def left(self):
        return table_pairs(self.cards, self.used)

    def take(self, p, pair=None):
        """p taps the cards of a free pair (the first one, or `pair`); chooses with a hold if the cards
        allow two. The chip goes on the letter."""
        s = self.s
        letter, a, b = pair or self.left()[0]
        both = pairs(a, b, self.used)
        s.tap(a)
        s.tap(b)
        if len(both) > 1:
            if both[0] != (letter, a, b):
                s.click(p)
            s.hold(p)
        self.used.add((b, letter))
        self.chips[p] -= 1
        self.placed[p] += 1
        s.t += SHOW_MS
        if self.chips[p] == 0:
            self.winner = p


def variant_c(n=4):
    s = Script("C", n, f"M is for Mouse, variant C, {n} players ({30 // n} chips each, {30 % n} back in the box): "
                       "queued claims, a wrong claim, a choice, rounds that end when no pair is left; "
                       "P1 places the last chip")
    g = C(s, n)
    rnd = 0
    claims = 0
    while g.winner is None:
        rnd += 1
        g.cards = [((rnd * 8 + i) * 5) % 23 + 1 for i in range(8)]
        g.used = set()
        assert len(set(g.cards)) == 8
        for c in g.cards:
            s.tap(c)
        if not g.left():
            s.t += SHOW_MS  # no pair at all: the unit starts the next round at once
            continue
        s.press(2)  # the start signal
        s.t += 500
        while g.left() and g.winner is None:
            claims += 1
            if claims == 2:
                # P3 claims wrongly (two cards without a free pair): no chip, no penalty
                nop = next((x, y) for i, x in enumerate(g.cards) for y in g.cards[i + 1:] if not pairs(x, y, g.used))
                s.press(3)
                s.t += 300
                s.tap(nop[0])
                s.tap(nop[1])
                s.t += SHOW_MS
            if claims == 3:
                # P4 and P1 press 20 ms apart: P4 claims first, P1 waits in the queue
                s.at("press", 4)
                s.t += 20
                s.at("press", 1)
                s.t += 60
                s.at("release", 4)
                s.at("release", 1)
                s.t += 300
                g.take(4)
                if g.left():
                    g.take(1)
                continue
            p = (1, 2, 1, 3, 1, 4)[claims % 6]  # P1 every other claim: the game lasts a few rounds
            s.press(p)
            s.t += 300
            g.take(p)
        s.t += SHOW_MS
    s.write(f"c-{n}p", g.placed, [g.winner], "no chips left")


if __name__ == "__main__":
    variant_a()
    variant_b()
    variant_c()
    for variant in (variant_a, variant_b, variant_c):
        variant(5)  # the most players the game allows
