# Mausgeflippt: setup, catching with a clothing item, cards the unit can check.
# One test per rule and per written decision (docs/games/mausgeflippt.md).
from maus.games.mausgeflippt.catalog import outfit
from test_mausgeflippt_kit import (
    CAT,
    T0,
    check_totals,
    cloth_id,
    mice_where,
    new_game,
    play_item,
    race,
    reveal,
    settle,
    unworn_cards,
    verdicts,
)


def test_setup_asks_for_the_first_cheese_and_refuses_a_mouse():
    g, t = new_game(cheese=0)
    assert t.said[-1][0] == "first_cheese"
    reveal(g, t, 1)
    assert t.sounds[-1] == "error" and t.said[-1][0] == "want_cheese"
    assert t.race is None
    g.on_tap("mg/cheese/4", "c", 0)
    assert g.s.open_cheese == 4 and g.s.cheese_stack == 8
    assert t.said[-1][0] == "reveal_any"


def test_right_item_catches_the_mouse():
    g, t = new_game()
    m = mice_where(False)[0]
    play_item(g, t, m, 2)
    assert g.s.mice[2] == 1 and g.s.caught[m] == 1 and g.s.mice_left == 31
    assert verdicts(t)[-1] == {"player": 2, "ok": True, "reason": "item_worn"}
    assert t.last("score") == {"player": 2, "delta": 1, "why": "mouse"}
    assert t.sounds[-1] == "ok" and t.leds[2] == ("green", "on")
    settle(t)
    assert g.revealer == 2 and t.said[-1] == ("reveal", {"p": 2})
    check_totals(g)


def test_wrong_item_face_up_penalty_and_mouse_under_the_stack():
    g, t = new_game()
    m = mice_where(False)[0]
    play_item(g, t, m, 1, ok=False)
    assert g.s.up[1] == 1 and g.s.score(1) == -1 and g.s.mice_left == 32 and not g.s.caught[m]
    assert verdicts(t)[-1]["reason"] == "item_not_worn"
    assert t.sounds[-1] == "wrong"
    settle(t)
    reveal(g, t, m, T0 * 3)  # it lies under the stack now
    assert t.said[-1][0] == "under_stack" and t.race is None
    check_totals(g)


def test_item_must_match_colour_too():
    g, t = new_game()
    m = mice_where(False)[0]
    code = outfit(CAT, m)[0]
    # same type, another colour, not worn
    other = [c for c in range(1, 59) if CAT.clothing[c - 1] >> 4 == code >> 4
             and CAT.clothing[c - 1] != code and not CAT.worn(m, CAT.clothing[c - 1])]
    assert other
    reveal(g, t, m)
    race(g, t, (1, 100000))
    g.on_tap(cloth_id(other[0]), "x", 0)
    assert verdicts(t)[-1]["ok"] is False and g.s.up[1] == 1


def test_unknown_wrong_game_and_garbled_cards_are_signalled():
    g, t = new_game()
    for ident, key in ((None, "unknown_card"), ("mim/card/12", "wrong_game"), ("mg/mouse/99", "unknown_card"),
                       ("mg/hat/01", "unknown_card"), ("mg/mouse/x", "unknown_card"), ("junk", "unknown_card")):
        n = len(t.sounds)
        g.on_tap(ident, None, 0)
        assert t.sounds[n:] == ["error"] and t.said[-1][0] == key
    g.on_tap("game/mausgeflippt", "g", 0)  # our own game card: no fuss
    assert t.said[-1][0] == "junk" or t.sounds[-1] == "error"
    assert g.phase == 1


def test_a_penalty_card_cannot_be_played():
    g, t = new_game()
    m = mice_where(False)[0]
    bad = unworn_cards(m)[0]
    play_item(g, t, m, 1, ok=False)
    settle(t)
    m2 = mice_where(False)[1]
    reveal(g, t, m2, T0 * 5)
    race(g, t, (1, 1000), at=T0 * 5)
    g.on_tap(cloth_id(bad), "x", 0)
    assert t.said[-1][0] == "penalty_card" and g.phase == 3


def test_a_caught_mouse_cannot_be_revealed_again():
    g, t = new_game()
    m = mice_where(False)[0]
    play_item(g, t, m, 1)
    settle(t)
    reveal(g, t, m, T0 * 5)
    assert t.said[-1] == ("caught_before", {"m": m}) and g.phase == 1


def test_wrong_kind_of_card_for_the_step():
    g, t = new_game()
    g.on_tap(cloth_id(3), "x", 0)
    assert t.said[-1][0] == "want_mouse"
    reveal(g, t, mice_where(False)[0])
    race(g, t, (1, 1000))
    g.on_tap("mg/cheese/2", "c", 0)
    assert t.said[-1][0] == "want_clothing" and g.phase == 3


def test_taps_are_logged_with_a_lowercase_hex_uid():
    g, t = new_game()
    g.on_tap("mg/mouse/01", "04A1B2C3D4E5F6", 0)
    assert t.last("tap") == {"identity": "mg/mouse/01", "uid": "04a1b2c3d4e5f6"}
    g.on_tap(None, b"\x04\xab", 0)
    assert t.last("tap") == {"identity": None, "uid": "04ab"}
    g.on_tap(None, None, 0)
    assert t.last("tap")["uid"] == ""
