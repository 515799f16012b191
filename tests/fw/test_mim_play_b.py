# M is for Mouse, variant B: a leader lays the deck while players press, tap and dawdle at random. Whatever the players do (wrong cards, stray presses, slow claims,
# foreign cards) the game never crashes, chips and cards are conserved, every round and every game ends.
import maus.games.mim.leader  # noqa: F401  (compiled first, while the heap is in one piece)
from fwtest import Rand
from test_mim_kit import new_game, oracle, press_now, stray, tap, trim


def test_random_games_of_variant_b():
    r = Rand(2)
    for game in range(5):
        n = 2 + game % 4
        g, t = new_game("B", n, {"lang": "en", "hints": True, "hint_after_s": 5})
        e = g.e
        deck = list(range(23))
        r.shuffle(deck)
        g.on_press(n, 0)
        g.on_gesture(n, "long")
        assert e.leader == n
        steps = 0
        while not g.done:
            steps += 1
            trim(t)
            assert steps < 3000
            if r.randint(0, 20) == 0:
                stray(g, r)
            ph = e.phase
            if ph == 3 and not e.deciding:
                k = r.randint(0, 3)
                if k == 0 and e.laid < 23:
                    c = [c for c in deck if not e.seen[c]][0]  # stray taps may have laid cards too
                    g.on_tap("mim/card/%02d" % (c + 1), "u", (t.t * 1000) & 0x3FFFFFFF)
                elif k == 1:
                    press_now(g, t, r.choice(e.ids), r)
                else:
                    t.advance(r.randint(0, 3000))
            elif ph == 4:  # CLAIM
                if e.n > 1 and r.randint(0, 1):
                    tbl = oracle(e.slots[: e.n], e.used[: e.n])
                    if tbl:
                        a, ea, b, eb = tbl[r.randint(0, len(tbl) - 1)]
                        tap(g, e.slots[a])
                        tap(g, e.slots[b])
                if e.phase == 4:
                    tap(g, r.randint(0, 22))
                    tap(g, e.slots[r.randint(0, e.n - 1)])
                if r.randint(0, 2) == 0:
                    press_now(g, t, r.choice(e.ids), r)
            t.advance(r.randint(0, 1500))
            won = sum(e.cards[p] for p in e.ids)
            assert won + e.n == e.laid or g.done  # every laid card is won or on the table
            assert e.n >= 1 or e.laid == 0
        assert e.laid == 23 and sum(e.seen) == 23
        s = g.summary()
        best = max(s["scores"].values())
        assert s["winners"] == [p for p in e.ids if s["scores"][str(p)] == best]
