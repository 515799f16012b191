# Mausgeflippt: protected mice, cheeses, unclaimed mice and claim timeouts.
# One test per rule and per written decision (docs/games/mausgeflippt.md).
from test_mausgeflippt_kit import (
    T0,
    call,
    check_totals,
    mice_where,
    new_game,
    play_item,
    race,
    reveal,
    settle,
    unworn_cards,
    worn_cards,
)


def test_protected_mouse_right_item_is_discarded_and_the_cheese_taken():
    g, t = new_game()
    m = mice_where(True)[0]
    play_item(g, t, m, 1)
    assert g.s.cheeses[1] == 1 and g.s.up[1] == 0 and g.s.mice[1] == 0 and g.s.score(1) == -2
    assert g.s.penalty[worn_cards(m)[0]] == 0  # discarded, not a penalty
    assert t.sounds[-1] == "cheese" and "Discard" in t.said[-1][1]["more"]
    assert g.s.open_cheese == 0 and g.phase == 5
    settle(t)
    assert t.said[-1][0] == "next_cheese"


def test_protected_mouse_wrong_item_is_cheese_plus_penalty():
    g, t = new_game()
    play_item(g, t, mice_where(True)[0], 1, ok=False)
    assert g.s.cheeses[1] == 1 and g.s.up[1] == 1 and g.s.score(1) == -3
    check_totals(g)


def test_protected_mouse_collection_cheese_plus_matching_penalties():
    g, t = new_game()
    m = mice_where(True)[0]
    reveal(g, t, m)
    race(g, t, (1, 5000))
    call(g, t, 1, worn_cards(m)[:2] + unworn_cards(m)[:2])
    assert g.s.cheeses[1] == 1 and g.s.down[1] == 1 and g.s.up[1] == 1 and g.s.score(1) == -4
    g2, t2 = new_game()
    reveal(g2, t2, m)
    race(g2, t2, (1, 5000))
    call(g2, t2, 1, unworn_cards(m)[:7])
    assert g2.s.cheeses[1] == 1 and g2.s.penalty_points(1) == 2 and g2.s.mice[1] == 0


def test_after_a_cheese_the_unit_asks_for_the_next_and_refuses_used_ones():
    g, t = new_game()
    play_item(g, t, mice_where(True)[0], 1)
    settle(t)
    reveal(g, t, mice_where(False)[0], T0 * 5)
    assert t.said[-1][0] == "want_cheese"
    g.on_tap("mg/cheese/1", "c", 0)
    assert t.said[-1][0] == "cheese_used"
    g.on_tap("mg/cheese/5", "c", 0)
    assert g.s.open_cheese == 5 and g.s.cheese_stack == 7 and g.phase == 1
    assert t.said[-1] == ("reveal", {"p": 1})


def test_unclaimed_mouse_goes_under_and_the_same_player_reveals_again():
    g, t = new_game()
    play_item(g, t, mice_where(False)[0], 2)
    settle(t)
    m = mice_where(True)[0]
    reveal(g, t, m, T0 * 5)
    t.advance(2999)
    assert g.phase == 2
    t.advance(2)
    assert t.race is None and g.phase == 1 and g.revealer == 2 and g.under == m
    assert t.last("timeout") == {"what": "unclaimed", "outcome": "under_stack", "protected": True}
    assert g.s.penalty_points(2) == 0 and g.s.mice_left == 31


def test_unclaimed_free_mouse_also_goes_under_after_the_timeout():
    g, t = new_game()
    m = mice_where(False)[0]
    reveal(g, t, m)
    t.advance(3001)
    assert g.under == m and g.s.mice_left == 32 and t.last("timeout")["protected"] is False


def test_claim_timeout_on_a_protected_mouse_takes_the_cheese():
    g, t = new_game()
    reveal(g, t, mice_where(True)[0])
    race(g, t, (2, 5000))
    t.advance(5001)
    assert g.s.cheeses[2] == 1 and t.last("timeout")["outcome"] == "cheese"


def test_claim_timeout_on_a_free_mouse_costs_nothing():
    g, t = new_game()
    reveal(g, t, mice_where(False)[0])
    race(g, t, (2, 5000))
    t.advance(5001)
    assert g.s.penalty_points(2) == 0 and g.s.mice[2] == 0 and t.said[-1] == ("too_slow", {"p": 2})
    settle(t)
    assert g.revealer == 2
