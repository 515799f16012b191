# M is for Mouse, variant C: random presses, claims and choices. Whatever the players do (wrong cards, stray presses, slow claims,
# foreign cards) the game never crashes, chips and cards are conserved, every round and every game ends.
import maus.games.mim.chips  # noqa: F401  (compiled first, while the heap is in one piece)
from fwtest import Rand
from test_mim_kit import new_game, oracle, press_now, stray, tap, trim


def test_random_games_of_variant_c():
    r = Rand(3)
    for game in range(5):
        n = 2 + game % 4
        g, t = new_game("C", n)
        e = g.e
        rounds = 0
        steps = 0
        while not g.done:
            steps += 1
            trim(t)
            assert steps < 4000
            if r.randint(0, 20) == 0:
                stray(g, r)
            ph = e.phase
            if ph == 1:  # LAY
                tap(g, r.randint(0, 22))
            elif ph == 2:  # READY
                rounds += 1
                press_now(g, t, r.choice(e.ids), r)
            elif ph == 3:  # TABLE
                assert e.pairs_left() > 0  # the unit ends a round without pairs at once
                for _ in range(r.randint(1, 3)):
                    press_now(g, t, r.choice(e.ids), r)
            elif ph == 4:  # CLAIM
                tbl = oracle(e.slots[: e.n], e.used[: e.n])
                if tbl and r.randint(0, 2):
                    a, ea, b, eb = tbl[r.randint(0, len(tbl) - 1)]
                    tap(g, e.slots[b])
                    tap(g, e.slots[a])
                elif r.randint(0, 1):
                    tap(g, e.slots[r.randint(0, e.n - 1)])
                    tap(g, e.slots[r.randint(0, e.n - 1)])
                if r.randint(0, 2) == 0:
                    press_now(g, t, r.choice(e.ids), r)
            elif ph == 5:  # CHOOSE
                g.on_gesture(e.claimer, r.choice(("click", "long")))
            t.advance(r.randint(0, 3000))
            assert sum(e.chips[p] + e.placed[p] for p in e.ids) + e.box == 30  # chips are conserved
            for i in range(e.n):
                assert e.used[i] & 3 == 0  # C puts chips on letters only
        s = g.summary()
        assert len(s["winners"]) == 1 and e.chips[s["winners"][0]] == 0
        assert rounds >= 1 and sum(s["scores"].values()) == sum(e.placed)
