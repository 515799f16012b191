# Mausgeflippt: "Mausgeflippt!" with a whole collection.
# One test per rule and per written decision (docs/games/mausgeflippt.md).
from maus.games.mausgeflippt.catalog import outfit
from test_mausgeflippt_kit import (
    CAT,
    T0,
    call,
    check_totals,
    cloth_id,
    mice_where,
    new_game,
    race,
    reveal,
    settle,
    unworn_cards,
    verdicts,
    worn_cards,
)


def test_clean_collection_catches_the_mouse():
    g, t = new_game()
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (1, 200000))
    call(g, t, 1, unworn_cards(m)[:7])
    assert g.s.mice[1] == 1 and verdicts(t)[-1]["reason"] == "collection_clean"
    check_totals(g)


def test_collection_with_matches_one_face_down_rest_face_up():
    g, t = new_game()
    m = [x for x in mice_where(False) if len(outfit(CAT, x)) >= 2][0]
    hand = worn_cards(m)[:2] + unworn_cards(m)[:5]
    reveal(g, t, m)
    race(g, t, (2, 200000))
    call(g, t, 2, hand)
    assert g.s.down[2] == 1 and g.s.up[2] == 1 and g.s.score(2) == -2 and g.s.mice_left == 32
    assert g.s.penalty[hand[0]] == 2 and g.s.penalty[hand[1]] == 2 and g.s.penalty[hand[2]] == 0
    assert t.said[-1][0] == "wrong_coll" and t.said[-1][1]["n"] == 2
    check_totals(g)


def test_three_face_down_block_the_call_but_a_card_may_still_be_played():
    g, t = new_game()
    free = mice_where(False)
    used = set()
    for i in range(3):
        m = free[i]
        c = [x for x in worn_cards(m) if x not in used][0]
        used.add(c)
        reveal(g, t, m, T0 * (i + 1))
        race(g, t, (1, 1000), at=T0 * (i + 1))
        call(g, t, 1, [c])
        settle(t)
    assert g.s.down[1] == 3
    m = free[3]
    reveal(g, t, m, T0 * 9)
    race(g, t, (1, 1000), at=T0 * 9)
    g.on_gesture(1, "double")
    assert t.said[-1][0] == "blocked" and t.sounds[-1] == "error" and g.phase == 3  # still claiming
    assert verdicts(t)[-1]["reason"] == "blocked_3_face_down"
    g.on_tap(cloth_id([x for x in worn_cards(m) if x not in used][0]), "x", 0)
    assert g.s.mice[1] == 1


def test_collection_hand_limit_is_seven_and_four_for_young_players():
    g, t = new_game(n=2, young=(2,))
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (2, 5000))
    g.on_gesture(2, "double")
    assert t.said[-1] == ("collect", {"p": 2, "n": 4})
    cards = unworn_cards(m)
    for c in cards[:5]:
        g.on_tap(cloth_id(c), "x", 0)
    assert g.ncoll == 4 and t.said[-1] == ("too_many", {"n": 4})
    g.on_press(2, 0)
    assert g.s.mice[2] == 1
    g2, t2 = new_game()
    reveal(g2, t2, m)
    race(g2, t2, (1, 5000))
    g2.on_gesture(1, "double")
    for c in cards[:8]:
        g2.on_tap(cloth_id(c), "x", 0)
    assert g2.ncoll == 7


def test_a_card_read_twice_in_a_collection_counts_once():
    g, t = new_game()
    m = mice_where(False)[0]
    w = worn_cards(m)[0]
    reveal(g, t, m)
    race(g, t, (1, 5000))
    call(g, t, 1, [w, w, w])
    assert g.s.down[1] == 1 and g.s.up[1] == 0


def test_finishing_an_empty_collection_is_refused():
    g, t = new_game()
    reveal(g, t, mice_where(False)[0])
    race(g, t, (1, 5000))
    g.on_gesture(1, "double")
    g.on_press(1, 0)
    assert t.said[-1][0] == "no_cards" and g.phase == 4


def test_collection_timeout_judges_the_cards_tapped():
    g, t = new_game()
    m = mice_where(False)[0]
    reveal(g, t, m)
    race(g, t, (1, 5000))
    g.on_gesture(1, "double")
    g.on_tap(cloth_id(worn_cards(m)[0]), "x", 0)
    t.advance(4999)
    assert g.phase == 4  # each card restarts the window
    t.advance(2)
    assert g.s.down[1] == 1
    assert t.last("timeout")["outcome"] == "collection_judged"


def test_collection_timeout_with_no_card_is_no_claim():
    g, t = new_game()
    reveal(g, t, mice_where(False)[0])
    race(g, t, (1, 5000))
    g.on_gesture(1, "double")
    t.advance(5001)
    assert g.s.penalty_points(1) == 0 and verdicts(t)[-1]["reason"] == "timeout"
