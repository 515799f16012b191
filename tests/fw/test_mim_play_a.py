# M is for Mouse, variant A: random turns, taps and passes. Whatever the players do (wrong cards, stray presses, slow claims,
# foreign cards) the game never crashes, chips and cards are conserved, every round and every game ends.
import maus.games.mim.turns  # noqa: F401  (compiled first, while the heap is in one piece)
from fwtest import Rand
from test_mim_kit import new_game, stray, tap, trim


def test_random_games_of_variant_a():
    r = Rand(1)
    for game in range(6):
        n = 2 + game % 4
        g, t = new_game("A", n)
        e = g.e
        rounds = 0
        steps = 0
        while not g.done:
            steps += 1
            trim(t)
            assert steps < 3000
            if r.randint(0, 20) == 0:
                stray(g, r)
            if e.phase == 0:  # LAY
                tap(g, r.randint(0, 22))
                if e.phase != 0:
                    rounds += 1
            elif e.phase == 1:  # TURN
                p = e.turn
                if r.randint(0, 6) == 0:
                    g.on_press(p, 0)
                    g.on_gesture(p, "long")  # pass
                else:
                    tap(g, r.randint(0, 22))
                    tap(g, e.mid[r.randint(0, 2)])
                if r.randint(0, 3) == 0:
                    q = r.choice(e.ids)
                    g.on_press(q, 0)
                    g.on_gesture(q, r.choice(("click", "long", "double")))
            else:  # CHOOSE
                g.on_gesture(e.turn, r.choice(("click", "long", "long")))
            t.advance(r.randint(0, 2000))
            assert all(0 <= e.hand[p] <= 3 for p in e.ids)
            assert sum(3 - e.hand[p] for p in e.ids) == sum(e.won[p] for p in e.ids)
            assert sum(e.won[p] for p in e.ids) == rounds - (0 if e.phase == 0 or g.done else 1)
        s = g.summary()
        assert len(s["winners"]) == 1 and s["scores"][str(s["winners"][0])] == 3 and t.finished
