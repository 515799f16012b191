# Mausgeflippt: the end, scoring, prompts and the display.
# One test per rule and per written decision (docs/games/mausgeflippt.md).
from maus.games.mausgeflippt.rules import Mausgeflippt
from test_mausgeflippt_kit import (
    CAT,
    T0,
    check_totals,
    cheese_type,
    mice_where,
    new_game,
    play_item,
    reveal,
    settle,
    trim,
)


def test_game_ends_when_the_last_cheese_is_taken():
    g, t = new_game(n=2)
    for i in range(9):
        cheese = g.s.open_cheese
        m = [x for x in mice_where(True, cheese) if x != g.under][0]  # not the one just put under
        play_item(g, t, m, 1 + i % 2, ok=True, at=T0 * (i + 1))
        settle(t)
        if not g.done:
            nxt = [c for c in range(1, 10) if not g.s.cheese_used[c]][0]
            g.on_tap("mg/cheese/%d" % nxt, "c", 0)
    assert g.done and t.finished and g.reason == "last_cheese"
    s = g.summary()
    assert s["scores"] == {"1": -10, "2": -8} and s["winners"] == [2]
    assert s["breakdown"]["1"]["cheeses"] == 5


def test_game_ends_when_the_last_mouse_is_caught():
    g, t = new_game(n=3)
    for i, m in enumerate(mice_where(False) + mice_where(True)):
        if CAT.mouse_cheese[m - 1] == cheese_type(g.s.open_cheese):
            continue
        play_item(g, t, m, 1 + i % 3, at=T0 * (i + 1))
        settle(t)
        trim(t)
    # the protected ones under cheese 1: swap the cheese by taking it once
    left = [m for m in range(1, 33) if not g.s.caught[m]]
    assert left and not g.done
    play_item(g, t, left[0], 1, at=T0 * 50)
    settle(t)
    g.on_tap("mg/cheese/4", "c", 0)  # gouda: no longer protects the emmental mice
    for i, m in enumerate(left[1:] + left[:1]):  # left[0] lies under the stack: it comes last
        assert not g.done
        trim(t)
        play_item(g, t, m, 2, at=T0 * (60 + i))
        settle(t)
    assert g.done and g.reason == "last_mouse" and g.s.mice_left == 0
    assert t.said[-1][0] == "end_mouse" and t.sounds[-1] == "win"
    check_totals(g)
    s = g.summary()
    assert sum(b["mice"] for b in s["breakdown"].values()) == 32


def test_winner_most_points_then_fewest_penalty_points_then_shared():
    g, t = new_game(n=4)
    g.s.mice[1], g.s.up[1] = 5, 1  # 4 points, 1 penalty point
    g.s.mice[2], g.s.cheeses[2] = 6, 1  # 4 points, 2 penalty points
    g.s.mice[3] = 2
    s = g.summary()
    assert s["winners"] == [1] and s["scores"]["2"] == 4
    g.s.mice[4], g.s.down[4] = 5, 1  # 4 points, 1 penalty point: shares the win with player 1
    assert g.summary()["winners"] == [1, 4]


def test_young_players_are_marked_in_the_breakdown():
    g, t = new_game(n=3, young=(3,))
    b = g.summary()["breakdown"]
    assert b["3"]["young"] is True and b["1"]["young"] is False


def test_events_after_the_end_are_ignored():
    g, t = new_game()
    g._finish("last_mouse")
    n = len(t.records)
    reveal(g, t, 1, T0 * 5)
    g.on_press(1, 0)
    t.advance(100000)
    assert g.phase == 6 and t.types()[n:] == ["tap"]


def test_a_prompt_nobody_answers_is_repeated_and_logged():
    g, t = new_game(settings={"prompt_timeout_s": 10})
    n = len(t.said)
    t.advance(10001)
    assert t.said[n:] == [("reveal_any", {"p": 0})] and g.phase == 1
    assert t.last("timeout") == {"what": "reveal_any", "outcome": "repeated"} and t.sounds[-1] == "prompt"
    t.advance(10000)
    assert len(t.said) == n + 2


def test_every_text_fits_the_display():
    worst = {"p": 6, "n": 7, "pts": -18, "m": 32, "c": 9, "d": 3, "more": "", "text": ""}
    for lang in ("en", "de"):
        texts = Mausgeflippt.TEXT[lang]
        assert sorted(texts) == sorted(Mausgeflippt.TEXT["en"])
        t = texts
        more = t["cheese_more"].format(n=7) + t["discard"]
        for key, fmt in texts.items():
            kw = dict(worst)
            if key == "cheese":
                kw["more"] = more
            out = fmt.format(**kw)
            lines = out.split("\n")
            assert len(lines) <= 6, (lang, key)
            for line in lines:
                assert len(line) <= 16, (lang, key, line)
                for ch in line:
                    assert 32 <= ord(ch) < 127, (lang, key, line)


def test_status_fits_six_players():
    for n in (2, 5, 6):
        g, t = new_game(n=n)
        g.s.mice[1] = 0
        g.s.up[1], g.s.cheeses[1], g.s.down[1] = 6, 5, 3
        lines = g.status()
        assert len(lines) <= 6
        for line in lines:
            assert len(line) <= 16, line
    assert g.status()[1] == "1:-19d3 2:0d0"


def test_german_prompts():
    g, t = new_game(settings={"lang": "de"})
    g.on_gesture(1, "long")
    assert t.said[-1][1]["text"].startswith("Maeuse 32 Kaese9")
