# M is for Mouse, variant C: chips split evenly, 8 cards a round, queued claims, the unit ends each round.
import maus.games.mim.chips  # noqa: F401  (compiled first, while the heap is in one piece)
from test_mim_kit import CAT, T0, L, find_two, new_game, oracle, pairs_of, press, said, tap


def _round(g, t, cards, start=1, at=T0):
    for c in cards:
        tap(g, c)
    if g.e.phase == 2:
        press(g, t, start, at)


def _eight(first=()):
    out = list(first)
    for c in range(23):
        if len(out) < 8 and c not in out:
            out.append(c)
    return out


def _claim(g, t, p, at, off=300000):
    press(g, t, p, at, off)
    t.advance(20)
    assert g.e.claimer == p


def _a_pair(g):
    """(object card, letter card) of a free pair on the table."""
    e = g.e
    pairs = oracle(e.slots[: e.n], e.used[: e.n])
    a, ea, b, eb = pairs[0]
    return e.slots[a], e.slots[b]


def test_chips_are_split_evenly():
    for n, each, box in ((2, 15, 0), (3, 10, 0), (4, 7, 2), (5, 6, 0)):
        g, t = new_game("C", n)
        assert [g.e.chips[p] for p in range(1, n + 1)] == [each] * n and g.e.box == box
        assert t.last("note") == {"text": "chips", "each": each, "box": box}
        assert each * n + box == 30


def test_the_round_starts_with_a_press_after_8_cards():
    g, t = new_game("C", 2)
    assert t.said[-1] == ("lay8", {"n": 0})
    tap(g, 3)
    tap(g, 3)
    assert t.said[-1][0] == "again"
    press(g, t, 1, T0)  # no start before the cards are read
    assert g.e.phase == 1
    for c in _eight((3,))[1:]:
        tap(g, c)
    assert t.said[-1] == ("ready", {}) and t.last("note")["cards"][0] == "mim/card/04"
    press(g, t, 2, T0)
    assert t.last("reveal") == {"card": None, "round": 1, "by": 2}
    assert t.sounds[-1] == "start" and t.race == T0 and t.said[-1] == ("go", {})
    tap(g, 4)
    assert t.said[-1][0] == "press_first"


def test_a_pair_puts_a_chip_on_its_letter():
    a, b = find_two(1)
    (letter, obj_on_a), = pairs_of(a, b)
    g, t = new_game("C", 2)
    _round(g, t, _eight((a, b)))
    _claim(g, t, 1, T0)
    assert t.said[-1] == ("claimer", {"p": 1})
    tap(g, b, 2 * T0)
    tap(g, a, 2 * T0)
    assert t.last("verdict") == {"player": 1, "ok": True, "reason": "pair", "pair": CAT.pair_text(letter, "en")}
    assert t.last("chip") == {"player": 1, "card": "mim/card/%02d" % ((b if obj_on_a else a) + 1), "on": L[letter]}
    assert g.e.chips[1] == 14 and g.e.placed[1] == 1
    assert t.said[-1][0] == "c_ok" and t.said[-1][1]["left"] == 14
    assert t.race == 2 * T0  # a new race from the chip on
    # the same pair again: the letter has a chip now
    _claim(g, t, 2, 3 * T0)
    tap(g, a)
    tap(g, b)
    assert t.last("verdict") == {"player": 2, "ok": False, "reason": "no free pair"}
    assert t.said[-1] == ("c_wrong", {"p": 2}) and g.e.chips[2] == 15
    t.advance(2000)
    assert t.said[-1] == ("go", {})
    _claim(g, t, 2, 4 * T0)  # no lock-out in C


def test_two_pairs_let_the_claimer_choose_the_letter():
    a, b = find_two(2)
    g, t = new_game("C", 2, {"lang": "de"})
    _round(g, t, _eight((a, b)))
    _claim(g, t, 2, T0)
    tap(g, a)
    tap(g, b)
    assert t.said[-1][0] == "choose" and t.said[-1][1]["n"] == 2
    g.on_gesture(1, "long")  # not the claimer
    assert g.e.phase == 5
    g.on_gesture(2, "click")
    second = t.said[-1][1]["pair"]
    g.on_gesture(2, "long")
    assert t.said[-1][0] == "c_ok" and t.said[-1][1]["pair"] == second
    _claim(g, t, 1, 2 * T0)
    tap(g, b)
    tap(g, a)
    assert t.said[-1][0] == "c_ok" and t.said[-1][1]["pair"] != second  # the other one, no choice left


def test_claims_queue_in_press_order():
    g, t = new_game("C", 3)
    _round(g, t, _eight())
    press(g, t, 3, T0, 500000)
    press(g, t, 2, T0, 400000)  # pressed first, arrives second
    t.advance(20)
    assert g.e.claimer == 2
    press(g, t, 1, T0, 3000000)
    press(g, t, 2, T0, 3100000)  # the claimer cannot queue again
    assert [p for o, p in g.e.queue] == [3, 1]
    t.advance(6000)  # P2 too slow
    assert t.last("verdict") == {"player": 2, "ok": False, "reason": "too slow"}
    assert g.e.claimer == 3
    t.advance(1500)
    assert t.said[-1] == ("claimer", {"p": 3})
    o, x = _a_pair(g)
    tap(g, o)
    tap(g, x)
    assert t.last("verdict")["ok"] and g.e.claimer == 1


def test_the_round_ends_when_no_pair_is_left_and_the_first_without_chips_wins():
    g, t = new_game("C", 5)  # 6 chips each
    rounds = 0
    at = T0
    while not g.done:
        assert g.e.phase == 1
        rounds += 1
        deck = [(c * 7 + rounds * 5) % 23 for c in range(23)]
        _round(g, t, deck[:8], at=at)
        while g.e.phase == 3:
            at += T0
            _claim(g, t, 1 if rounds % 2 else 2, at)
            o, x = _a_pair(g)
            tap(g, o, at)
            tap(g, x, at)
        if not g.done:
            assert t.last("note")["text"] == "no pair left" and ("c_round", {}) in t.said
            assert oracle(g.e.slots[:8], g.e.used[:8]) == []
            t.advance(2000)
            assert t.said[-1] == ("lay8", {"n": 0})
        assert rounds < 10
    s = g.summary()
    w = s["winners"]
    assert len(w) == 1 and g.e.chips[w[0]] == 0 and s["reason"] == "no chips left"
    assert s["scores"][str(w[0])] == 6 and s["breakdown"][str(w[0])]["chips_left"] == 0
    assert sum(g.e.chips[p] + g.e.placed[p] for p in range(1, 6)) == 30
    assert t.finished and "c_won" in said(t)
