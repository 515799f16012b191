# A press the unit ignores or penalizes says why on the display (issue 20): a false start in
# Mausgeflippt, a press out of turn in M is for Mouse (variant A) and Mucks Mäuschen Still; the turn's own
# prompt comes back after it, and nothing extra is logged.
import maus.games.mim.turns  # noqa: F401  (compiled first, while the heap is in one piece)
from test_mausgeflippt_kit import T0, mice_where, race, reveal
from test_mausgeflippt_kit import new_game as new_mg
from test_mim_kit import new_game as new_mim
from test_mim_kit import tap
from test_mms_rules import click as mms_click
from test_mms_rules import new as new_mms


def test_a_press_before_the_mouse_is_out_says_false_start():
    g, t = new_mg(n=2)
    n = len(t.records)
    g.on_press(2, T0 - 400000)
    assert t.said[-1] == ("false_start", {"p": 2})
    assert len(t.records) == n  # logged at the reveal, as before
    reveal(g, t, mice_where(False)[0])
    race(g, t, (2, 1000), (1, 500000))
    assert g.queue == [1]  # and it is one: locked out


def test_a_click_out_of_turn_in_mim_a_says_whose_turn_it_is():
    g, t = new_mim("A", 3)
    for c in (0, 1, 2):
        tap(g, c)
    assert t.said[-1] == ("turn", {"p": 1})
    n = len(t.records)
    g.on_press(3, T0)
    g.on_gesture(3, "click")
    assert t.said[-1] == ("not_turn", {"p": 3, "q": 1})
    assert len(t.records) == n
    t.advance(2000)
    assert t.said[-1] == ("turn", {"p": 1})
    g.on_press(1, T0)
    g.on_gesture(1, "click")  # the player on turn: nothing to say
    assert t.said[-1] == ("turn", {"p": 1})


def test_a_click_out_of_turn_in_mms_says_whose_turn_it_is():
    g, t = new_mms(3)
    mms_click(g, 2)  # player 2 starts
    assert t.said[-1][0] == "roll" and t.said[-1][1]["p"] == 2
    roll = t.said[-1]
    n = len(t.records)
    mms_click(g, 3)
    assert t.said[-1] == ("not_turn", {"p": 3, "q": 2})
    assert not t.armed and len(t.records) == n
    t.advance(g.show_ms)
    assert t.said[-1] == roll  # the dice again
    assert "nudge" in t.timers  # the reminder still runs on its own time
