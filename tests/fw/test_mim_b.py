# M is for Mouse, variant B: the game leader reveals, the first press claims, the claimer taps the pair.
import maus.games.mim.leader  # noqa: F401  (compiled first, while the heap is in one piece)
from test_mim_kit import CAT, T0, find_two, hold, ident, new_game, pairs_of, press, said, tap

S = 1000000  # one second in us


def _led_by(g, t, p=2):
    hold(g, t, p)
    assert g.e.leader == p and t.last("note") == {"text": "leader", "player": p}


def test_the_leader_is_chosen_first():
    g, t = new_game("B", 3)
    assert said(t) == ["leader"]
    tap(g, 0)
    assert t.said[-1][0] == "leader" and t.sounds[-1] == "error"
    _led_by(g, t, 2)
    assert t.said[-1] == ("lead_first", {"p": 2})


def test_a_valid_claim_wins_all_cards_but_the_newest():
    a, b = find_two(1)
    x, y = [c for c in range(23) if c not in (a, b)][:2]
    if pairs_of(x, a) or pairs_of(x, y) or pairs_of(y, a) or pairs_of(x, b) or pairs_of(y, b):
        x, y = find_two(0, (a, b))
    g, t = new_game("B", 3)
    _led_by(g, t)
    tap(g, x, T0)
    assert t.last("reveal") == {"card": ident(x), "by": 2, "n": 1} and t.race == T0
    t.advance(6000)  # nobody presses: the race closes, the leader lays the next card
    assert t.race is None and t.said[-1] == ("lead_next", {"p": 2, "left": 22})
    tap(g, a, 2 * T0)
    tap(g, b, 3 * T0)
    press(g, t, 3, 3 * T0, 400000)
    press(g, t, 1, 3 * T0, 450000)
    t.advance(20)
    assert t.race is None and t.said[-1] == ("claimer", {"p": 3})
    assert t.last("claim") == {"player": 1, "offset_us": 450000, "tied": False}
    assert t.leds[3] == ("green", "blink")
    tap(g, a, 4 * T0)
    tap(g, b, 4 * T0)
    v = t.last("verdict")
    assert v["player"] == 3 and v["ok"] and v["pair"] == CAT.pair_text(pairs_of(a, b)[0][0], "en")
    assert t.last("score") == {"player": 3, "delta": 2, "why": "cards"}
    assert t.said[-1][0] == "b_ok" and t.said[-1][1]["n"] == 2
    assert g.e.n == 1 and g.e.slots[0] == b  # the newest card stays
    assert t.last("note") == {"text": "claims dropped", "players": [1]}
    t.advance(2000)
    assert t.said[-1] == ("lead_next", {"p": 2, "left": 20})
    # a press before the next card is a false start: locked out of that card
    press(g, t, 1, 4 * T0)
    assert t.last("press") == {"player": 1, "offset_us": -1, "false_start": True}
    tap(g, y, 5 * T0)
    press(g, t, 1, 5 * T0, 100000)
    t.advance(20)
    assert g.e.phase == 3 and not g.e.deciding  # still the table: P1's press did not count


def test_a_wrong_claim_wins_nothing_and_locks_out_for_the_next_card():
    a, b = find_two(0)
    g, t = new_game("B", 3)
    _led_by(g, t)
    tap(g, a, T0)
    tap(g, b, 2 * T0)
    press(g, t, 1, 2 * T0, 300000)
    press(g, t, 2, 2 * T0, 900000)
    t.advance(20)
    tap(g, 22 if 22 not in (a, b) else 21)
    assert t.said[-1][0] == "not_on_table"
    tap(g, a)
    tap(g, b)
    assert t.last("verdict") == {"player": 1, "ok": False, "reason": "no free pair"}
    assert t.said[-1] == ("b_wrong", {"p": 1}) and t.sounds[-1] == "wrong"
    assert g.e.claimer == 2  # the next claim in the queue
    t.advance(7000)  # P2 does not tap: too slow, also locked
    assert t.last("verdict") == {"player": 2, "ok": False, "reason": "too slow"}
    assert t.said[-1][0] == "lead_next"
    press(g, t, 1, 2 * T0, 8 * S)
    assert t.last("press")["locked"]  # still the same cards
    c, d = find_two(1, (a, b))
    tap(g, c, 20 * T0)  # the next card: P1 and P2 are still out
    press(g, t, 1, 20 * T0, 100000)
    press(g, t, 2, 20 * T0, 100000)
    t.advance(20)
    assert not g.e.deciding and g.e.claimer == 0
    press(g, t, 3, 20 * T0, 200000)
    t.advance(20)
    assert g.e.claimer == 3
    tap(g, a)
    tap(g, b)
    assert not t.last("verdict")["ok"]
    t.advance(6000)
    tap(g, d, 30 * T0)  # the card after next: P1 may claim again
    press(g, t, 1, 30 * T0, 100000)
    t.advance(20)
    assert g.e.claimer == 1
    tap(g, c)
    tap(g, d)
    assert t.last("verdict")["ok"] and g.e.cards[1] == 3  # a, b, c and d but the newest (d)
    s = g.summary()
    assert s["breakdown"]["1"] == {"cards": 3, "claims_ok": 1, "claims_wrong": 1, "leader": False}


def test_ties_are_logged_and_queued_in_press_order():
    a, b = find_two(1)
    g, t = new_game("B", 4)
    _led_by(g, t, 1)
    tap(g, a, T0)
    tap(g, b, 2 * T0)
    press(g, t, 4, 2 * T0, 301500)  # arrives first, pressed second
    press(g, t, 2, 2 * T0, 300000)
    press(g, t, 3, 2 * T0, 309000)
    t.advance(20)
    claims = [f for k, f in t.records if k == "claim"]
    assert claims == [{"player": 2, "offset_us": 300000, "tied": True},
                      {"player": 4, "offset_us": 301500, "tied": True},
                      {"player": 3, "offset_us": 309000, "tied": False}]
    assert g.e.claimer == 2 and [p for o, p in g.e.queue] == [4, 3]
    press(g, t, 1, 2 * T0, 2 * S)  # the leader claims too, after the decision: queued
    assert [p for o, p in g.e.queue] == [4, 3, 1]


def test_the_same_card_twice_and_foreign_cards_are_refused():
    g, t = new_game("B", 2)
    _led_by(g, t, 1)
    tap(g, 5, T0)
    t.advance(6000)
    tap(g, 5, 2 * T0)
    assert t.said[-1][0] == "played" and g.e.laid == 1
    g.on_tap("mg/cheese/3", "c", 0)
    assert t.said[-1][0] == "wrong_game" and g.e.laid == 1


def test_hints_blink_after_the_set_time():
    a, b = find_two(1)
    g, t = new_game("B", 2, {"lang": "en", "hints": True, "hint_after_s": 8})
    _led_by(g, t, 1)
    tap(g, a, T0)
    t.advance(10000)
    assert "hint" not in said(t)  # one card: no pair, no hint
    tap(g, b, 2 * T0)
    t.advance(7000)
    assert "hint" not in said(t)
    t.advance(1000)
    letter = pairs_of(a, b)[0][0]
    assert t.said[-1] == ("hint", {"l": "ABCDEFGHIJKLMNOPRSTUVWZ"[letter]})
    assert t.leds[0] == ("white", "blink") and t.last("prompt")["what"] == "hint"


def test_no_hints_unless_switched_on():
    a, b = find_two(1)
    g, t = new_game("B", 2)
    _led_by(g, t, 1)
    tap(g, a, T0)
    tap(g, b, 2 * T0)
    t.advance(60000)
    assert "hint" not in said(t)


def test_the_game_ends_when_the_stack_is_used_up():
    g, t = new_game("B", 2)
    _led_by(g, t, 1)
    for c in range(22):
        tap(g, c, (c + 1) * T0)
        t.advance(6000)
    assert not g.done
    tap(g, 22, 30 * T0)  # the last card: pairs are on the table, claims still possible
    assert not g.done
    press(g, t, 2, 30 * T0, 500000)
    t.advance(20)
    f = g.e.finder
    f.find(g.e.slots, g.e.n, g.e.used)
    o, x = f.out[0], f.out[1]
    tap(g, g.e.slots[o >> 2])
    tap(g, g.e.slots[x >> 2])
    assert g.done and t.finished
    s = g.summary()
    assert s["scores"] == {"1": 0, "2": 22} and s["winners"] == [2] and s["reason"] == "stack used up"
    assert s["breakdown"]["1"]["leader"]


def test_unclaimed_pairs_after_the_last_card_end_the_game_after_a_while():
    g, t = new_game("B", 3)
    _led_by(g, t, 1)
    for c in range(23):
        tap(g, c, (c + 1) * T0)
        t.advance(6000)
    assert not g.done
    t.advance(5000)
    assert g.done and g.summary()["winners"] == [1, 2, 3]  # nobody took a card: a three-way draw
