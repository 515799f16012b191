# M is for Mouse, variant A: turns, chips on the middle cards, passes, rounds, the last hand card.
import maus.games.mim.turns  # noqa: F401  (compiled first, while the heap is in one piece)
from test_mim_kit import CAT, L, find_two, hold, ident, new_game, pairs_of, said, tap


def _others(*used):
    return [c for c in range(23) if c not in used]


def _lay(g, cards):
    for c in cards:
        tap(g, c)


def test_middle_cards_are_read_first():
    g, t = new_game("A", 3)
    assert said(t) == ["lay3"]
    tap(g, 0)
    tap(g, 0)
    assert t.said[-1][0] == "again" and t.sounds[-1] == "error"
    g.on_tap("mg/mouse/07", "x", 0)
    assert t.said[-1][0] == "wrong_game"
    g.on_tap(None, "y", 0)
    assert t.said[-1][0] == "unknown_card"
    tap(g, 1)
    tap(g, 2)
    assert t.said[-1] == ("turn", {"p": 1})
    assert t.last("note")["cards"] == ["mim/card/01", "mim/card/02", "mim/card/03"]
    assert t.leds[1] == ("red", "blink") and t.leds[2] == ("blue", "on")


def test_a_pair_puts_a_chip_on_the_middle_card_and_the_turn_passes():
    a, b = find_two(1)
    (letter, obj_on_hand), = pairs_of(a, b)
    g, t = new_game("A", 3)
    _lay(g, [b] + _others(a, b)[:2])
    tap(g, a)  # hand card first
    assert t.said[-1] == ("mid_card", {"p": 1})
    tap(g, b)
    v = t.last("verdict")
    assert v["player"] == 1 and v["ok"] and v["pair"] == CAT.pair_text(letter, "en")
    chip = t.last("chip")
    assert chip["card"] == ident(b) and chip["hand"] == ident(a)
    assert chip["on"] == (L[letter] if obj_on_hand else CAT.name(letter))
    assert t.said[-1][0] == "chip_on"
    t.advance(2000)
    assert t.said[-1] == ("turn", {"p": 2})
    # the same pair again: its element on the middle card has a chip now
    tap(g, b)  # middle card first this time
    assert t.said[-1] == ("hand_card", {"p": 2})
    tap(g, a)
    assert t.last("verdict") == {"player": 2, "ok": False, "reason": "no free pair"}
    assert t.said[-1] == ("no_pair", {"p": 2}) and t.sounds[-1] == "wrong"
    assert g.e.turn == 2  # try again: still P2's turn


def test_two_pairs_let_the_player_choose():
    a, b = find_two(2)
    g, t = new_game("A", 2, {"lang": "de"})
    _lay(g, [b] + _others(a, b)[:2])
    tap(g, a)
    tap(g, b)
    assert t.said[-1][0] == "choose" and t.said[-1][1]["n"] == 2 and t.said[-1][1]["i"] == 1
    first = t.said[-1][1]["pair"]
    g.on_gesture(2, "click")  # not P2's turn: only a status
    assert t.said[-1][0] == "choose" and t.said[-1][1]["i"] == 1
    g.on_gesture(1, "click")
    assert t.said[-1][1]["i"] == 2 and t.said[-1][1]["pair"] != first
    second = t.said[-1][1]["pair"]
    g.on_gesture(1, "long")
    assert t.said[-1][0] == "chip_on" and t.said[-1][1]["pair"] == second
    assert "f\u00fcr" in t.last("verdict")["pair"]
    # P2 can still make the other pair with the same cards
    t.advance(2000)
    tap(g, a)
    tap(g, b)
    assert t.last("verdict")["ok"] and t.said[-1][1]["pair"] == first
    t.advance(2000)
    tap(g, a)
    tap(g, b)
    assert not t.last("verdict")["ok"]


def test_passing_players_drop_out_and_the_last_one_wins_the_round():
    g, t = new_game("A", 3)
    _lay(g, [0, 1, 2])
    hold(g, t, 2)  # not on turn: status only
    assert t.said[-1][0] == "status" and g.e.out[2] == 0
    hold(g, t, 1)
    assert t.said[-1] == ("passed", {"p": 1}) and g.e.out[1] == 1
    assert t.last("claim") == {"player": 1, "pass": True}
    t.advance(2000)
    assert t.said[-1] == ("turn", {"p": 2}) and t.leds[1] == (None, "on")
    hold(g, t, 2)
    assert t.said[-1] == ("round_won", {"p": 3})
    assert t.last("score") == {"player": 3, "delta": 1, "why": "card aside"}
    assert g.e.hand[3] == 2 and g.e.turn == 3
    t.advance(2000)
    assert t.said[-1] == ("lay3", {"n": 0})
    _lay(g, [0, 1, 2])  # the stack ran out and was reshuffled: old cards may come back
    assert t.said[-1] == ("turn", {"p": 3})  # the round's winner begins
    assert g.e.out[1] == 0 and g.e.used[0] == 0


def test_turn_order_skips_players_who_are_out():
    a, b = find_two(1)
    g, t = new_game("A", 3)
    _lay(g, [b] + _others(a, b)[:2])
    hold(g, t, 1)
    t.advance(2000)
    tap(g, a)
    tap(g, b)  # P2 makes a pair
    t.advance(2000)
    assert t.said[-1] == ("turn", {"p": 3})
    hold(g, t, 3)
    assert t.said[-1] == ("round_won", {"p": 2})


def _p1_wins_round(g, t, mid):
    a, b = find_two(1)
    _lay(g, [b] + _others(a, b)[:2])
    if g.e.turn == 1:
        tap(g, a)
        tap(g, b)
        t.advance(2000)
    hold(g, t, 2)
    t.advance(2000)


def test_giving_up_the_last_card_wins():
    g, t = new_game("A", 2)
    for r in range(3):
        assert g.e.hand[1] == 3 - r and not g.done
        _p1_wins_round(g, t, r)
    s = g.summary()
    assert t.finished and g.done
    assert s == {"scores": {"1": 3, "2": 0}, "winners": [1], "reason": "last card",
                 "breakdown": {"1": {"cards_left": 0, "rounds_won": 3, "pairs": 3, "passes": 0},
                               "2": {"cards_left": 3, "rounds_won": 0, "pairs": 0, "passes": 3}}}
    assert ("game_won", {"p": 1}) in t.said and t.sounds[-1] == "win"
    assert t.leds[1] == ("red", "blink")


def test_events_after_the_end_are_ignored():
    g, t = new_game("A", 2)
    for r in range(3):
        _p1_wins_round(g, t, r)
    assert g.done
    n = len(t.records)
    tap(g, 5)
    hold(g, t, 1)
    assert len(t.records) == n + 1  # only the tap is logged


def test_taps_are_logged_with_a_lowercase_uid():
    g, t = new_game("A", 2)
    g.on_tap("mim/card/01", "04A1B2C3", 0)
    assert t.records[-1] == ("tap", {"identity": "mim/card/01", "uid": "04a1b2c3"})
    g.on_tap(None, b"\x04\xab", 0)
    assert ("tap", {"identity": None, "uid": "04ab"}) in t.records
    assert t.said[-1][0] == "unknown_card"
