# Mausgeflippt: races, ties, false starts.
# One test per rule and per written decision (docs/games/mausgeflippt.md).
from maus.ticks import PERIOD, ticks_add
from test_mausgeflippt_kit import (
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
    worn_cards,
)


def test_earliest_press_wins_whatever_the_delivery_order():
    g, t = new_game(n=3)
    reveal(g, t, mice_where(False)[0])
    race(g, t, (3, 90000), (1, 50000))
    assert g.claimant == 1 and g.queue == [1]
    assert t.said[-1] == ("claim", {"p": 1}) and t.leds[1] == ("red", "blink")


def test_tie_each_tied_player_resolves_open_mouse_first_then_the_stack():
    g, t = new_game(n=3)
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (2, 100000), (3, 101500))
    assert g.queue == [2, 3] and t.last("claim")["tied"] is True
    g.on_tap(cloth_id(worn_cards(m)[0]), "x", 0)
    assert g.claimant == 3 and g.s.mice[2] == 1 and g.s.caught[m]
    g.on_tap(cloth_id(worn_cards(m)[1]), "x", 0)
    assert g.s.mice[3] == 1 and g.s.mice_left == 30 and t.said[-1][0] == "stack_mouse"
    settle(t)
    assert g.revealer == 2
    check_totals(g)


def test_tie_first_claim_wrong_second_catches_the_open_mouse():
    g, t = new_game(n=2)
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (1, 100000), (2, 100900))
    g.on_tap(cloth_id(unworn_cards(m)[0]), "x", 0)
    g.on_tap(cloth_id(worn_cards(m)[0]), "x", 0)
    assert g.s.up[1] == 1 and g.s.mice[2] == 1 and g.s.caught[m] and g.s.mice_left == 31
    settle(t)
    assert g.revealer == 1 and g.under != m


def test_tie_on_a_protected_mouse_each_takes_a_cheese():
    g, t = new_game(n=2)
    reveal(g, t, mice_where(True)[0])
    race(g, t, (1, 100000), (2, 101000))
    g.on_tap(cloth_id(1), "x", 0)
    g.on_tap(cloth_id(2), "x", 0)
    assert g.s.cheeses[1] == 1 and g.s.cheeses[2] == 1 and g.s.cheese_stack == 7


def test_presses_outside_the_tie_window_do_not_tie():
    g, t = new_game(n=2)
    reveal(g, t, mice_where(False)[0])
    race(g, t, (1, 100000), (2, 102001))
    assert g.queue == [1]


def test_false_start_is_locked_out_for_that_reveal():
    g, t = new_game(n=2)
    reveal(g, t, mice_where(False)[0])
    g.on_press(1, T0 - 500)  # first edge before the reveal, delivered after it
    g.on_press(1, T0 + 1000)
    race(g, t, (2, 300000))
    assert g.queue == [2]
    presses = [r[1] for r in t.records if r[0] == "press"]
    assert presses[0] == {"player": 1, "offset_us": -500, "false_start": True}


def test_press_while_waiting_for_the_reveal_is_a_false_start():
    g, t = new_game(n=2)
    g.on_press(1, T0 - 400000)
    g.on_release(1, T0 - 300000)
    reveal(g, t, mice_where(False)[0])
    race(g, t, (1, 1000), (2, 500000))
    assert g.queue == [2]
    assert {"player": 1, "offset_us": -400000, "false_start": True} in [r[1] for r in t.records]


def test_long_press_between_rounds_shows_the_counts_and_is_no_false_start():
    g, t = new_game(n=2)
    play_item(g, t, mice_where(False)[0], 1, ok=False)
    settle(t)
    g.on_press(2, T0 * 3)
    g.on_gesture(2, "long")
    assert t.said[-1][0] == "status"
    text = t.said[-1][1]["text"]
    assert text.split("\n")[0] == "Mice 32 Cheese 9" and "P1 -1pt down0" in text
    reveal(g, t, mice_where(False)[1], T0 * 4)
    race(g, t, (2, 1000), at=T0 * 4)
    assert g.queue == [2]


def test_lockout_can_be_switched_off():
    g, t = new_game(n=2, settings={"lockout": False})
    reveal(g, t, mice_where(False)[0])
    g.on_press(1, T0 - 10)
    race(g, t, (1, 1000), (2, 5000))
    assert g.queue == [1]


def test_race_across_the_tick_wrap():
    g, t = new_game(n=2)
    at = PERIOD - 1000
    reveal(g, t, mice_where(False)[0], at)
    race(g, t, (2, 3000), (1, 500), at=at)
    assert g.queue == [1] and t.last("claim")["offset_us"] == 500


def test_double_press_counts_only_from_the_claimant():
    g, t = new_game(n=2)
    reveal(g, t, mice_where(False)[0])
    race(g, t, (1, 1000))
    g.on_gesture(2, "double")
    assert g.phase == 3
    g.on_gesture(1, "double")
    assert g.phase == 4


def test_presses_of_players_not_in_the_game_are_ignored():
    g, t = new_game(n=2)
    reveal(g, t, mice_where(False)[0])
    race(g, t, (5, 1000), (0, 1000), (9, 1000))
    assert g.phase == 2 and g.queue == []


def test_every_press_of_a_reveal_is_logged_late_and_locked_ones_marked():
    g, t = new_game(n=3)
    m = mice_where(False)[0]
    g.on_press(3, ticks_add(T0, -40000))  # waiting for the mouse: a false start, locked out
    g.on_gesture(3, "click")
    reveal(g, t, m)
    race(g, t, (1, 200000), (3, 230000))
    g.on_press(2, ticks_add(T0, 800000))  # 600 ms after the winner, in the claim window
    presses = [(r[1]["player"], r[1]["offset_us"], r[1].get("late", False), r[1].get("locked", False),
                r[1]["false_start"]) for r in t.records if r[0] == "press"]
    assert presses == [(3, -40000, False, False, True), (1, 200000, False, False, False),
                       (3, 230000, False, True, False), (2, 800000, True, False, False)]


def test_claim_timeout_on_a_free_mouse_passes_to_the_next_presser():
    # The rulebook gives the mouse to the first player who PLACES a card (decision 3).
    g, t = new_game(n=3)
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (1, 200000))
    g.on_press(3, ticks_add(T0, 800000))  # late: after the race was decided
    g.on_press(2, ticks_add(T0, 500000))  # earlier than P3, delivered later: press order is by edge time
    t.advance(5001)  # P1 plays nothing
    assert verdicts(t)[-1] == {"player": 1, "ok": False, "reason": "timeout"}
    assert g.claimant == 2 and g.phase == 3
    assert t.last("claim") == {"player": 2, "offset_us": 500000, "passed": True}
    g.on_tap(cloth_id(worn_cards(m)[0]), "x", 0)
    assert g.s.mice[2] == 1 and g.s.caught[m]
    settle(t)
    assert g.revealer == 1  # the first claimant reveals next (decision 1)
    check_totals(g)


def test_the_passed_claim_goes_on_down_the_press_order_then_under_the_stack():
    g, t = new_game(n=3)
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (2, 200000))
    g.on_press(1, ticks_add(T0, 400000))
    t.advance(5001)
    assert g.claimant == 1
    t.advance(5001)  # P1 plays nothing either; P3 never pressed
    assert g.phase == 1 and g.under == m
    assert [v["player"] for v in verdicts(t)] == [2, 1]


def test_no_passing_on_a_protected_mouse():
    g, t = new_game(n=2)
    reveal(g, t, mice_where(True)[0])
    race(g, t, (1, 200000))
    g.on_press(2, ticks_add(T0, 500000))
    t.advance(5001)  # P1 tried (pressed) and takes the cheese; the mouse goes under
    assert g.s.cheeses[1] == 1 and g.s.cheeses[2] == 0 and g.claimant == 1


def test_a_tie_confirmed_after_the_decision_joins_the_claims():
    g, t = new_game(n=3)
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (1, 200000))
    g.on_press(3, ticks_add(T0, 201200))  # bounced for 20 ms: confirmed after the decision
    assert g.queue == [1, 3] and t.last("claim") == {"player": 3, "offset_us": 201200, "tied": True}
    g.on_tap(cloth_id(worn_cards(m)[0]), "x", 0)
    assert g.claimant == 3
    g.on_tap(cloth_id(worn_cards(m)[1]), "x", 0)
    assert g.s.mice[1] == 1 and g.s.mice[3] == 1
