"""A whole game of each game on `mausbox sim` in a real terminal, with keys alone (the harness and the rest of
the real-terminal story: test_sim_terminal.py). Each key is typed once the unit has taken the last one: the
OLED (read off the screen) or the unit's flash folder (its game log, which a user can look at) says so."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from termkit import SimTerm  # noqa: E402
from test_sim_terminal import _count, _quit_and_check_terminal, _records, _sim  # noqa: E402

SCEN = Path(__file__).resolve().parents[2] / "tests" / "scenarios"


def _tap(t: SimTerm, root: Path, ident: str) -> None:
    """Put a card on the pad with the card search, as a person would (the identity is the exact match)."""
    n = _count(root, "tap")
    t.type("/" + ident)
    t.wait_screen("> ", timeout=60)
    t.type("\r")
    t.wait(lambda t: _count(root, "tap") > n, f"the unit to read {ident}")


def _stable_oled(t: SimTerm) -> str:
    """The OLED once it stopped changing (a frame is drawn in pieces)."""
    def steady(t):
        a = t.oled_text()
        time.sleep(0.25)
        return a if a and a == t.oled_text() else None
    return t.wait(steady, "a steady OLED")


def _join(t: SimTerm, game_card: str, players: int, variant_hold: bool = False) -> None:
    t.wait_oled("choose")
    t.type("/" + game_card + "\r")
    if variant_hold:
        t.wait_oled("variant")
        t.type("a")  # player 1 holds: the variant shown (A) is chosen
    t.wait_oled("press to join")
    t.type("-")
    for p in range(1, players + 1):
        for attempt in range(3):
            t.type(str(p))
            try:
                t.wait_oled(f"joined: {p}", timeout=60)
                break
            except AssertionError:
                # A join click lost on a machine busy with the suite and two `yes` loops (CI runs 94 and 98, not
                # reproduced since; the unit's console, with each control line and button edge, is in the
                # failure's message): the player presses again, as at a table. Joining twice is joining once.
                if attempt == 2:
                    raise
    for _ in range(3):
        t.type("q")  # player 1 double-presses: start
        try:
            t.wait(lambda t: "double press = start" not in t.oled_text().lower(), "the game's start", timeout=20)
            return
        except AssertionError:
            # A double press's two presses came further apart than a double allows (the virtual unit in real time,
            # on a machine busy with the rest of the suite: CI run 77): two clicks, which the join screen ignores.
            # Players press again.
            pass
    raise AssertionError(f"three double presses did not start the game; OLED {t.oled_text()!r}")


def _patient_unit(root: Path) -> None:
    """A unit whose race and claim windows are the longest its settings allow. A machine busy with other tests
    can hold a typed key back longer than a window (the games are about keys, not a person's speed): in
    Mausgeflippt every mouse here is a protected one, which goes under the stack unclaimed after
    protection_timeout_ms (3 s by default); in M is for Mouse a race ends unclaimed after claim_window_ms
    (5 s), and a claimer who takes longer than that to tap two cards loses the claim."""
    root.mkdir(parents=True)
    (root / "settings.json").write_text(json.dumps({"lang": "en", "protection_timeout_ms": 30000,
                                                    "claim_window_ms": 60000, "prompt_timeout_s": 600}))


def test_a_whole_mausgeflippt_game_with_keys_alone(tmp_path):
    root = tmp_path / "unit"
    _patient_unit(root)
    t = _sim(root, 80, 24)
    try:
        _join(t, "game/mausgeflippt", 2)
        t.wait_oled("first cheese")
        rounds = [("01", "04"), ("05", "06"), ("01", "04"), ("02", "01"), ("06", "08"), ("03", "03"), ("07", "07"),
                  ("04", "05"), ("08", "14")]  # tests/scenarios/mg-3p-wait.jsonl's cards: each a protected mouse
        for i, (mouse, clothing) in enumerate(rounds):
            _tap(t, root, f"mg/cheese/{i + 1}")  # the cheese
            t.wait_oled("reveal")
            t.type("-")
            _tap(t, root, f"mg/mouse/{mouse}")  # the mouse revealed
            n = _count(root, "claim")
            t.type(str(i % 2 + 1))  # the race: P1 or P2 presses first
            t.wait(lambda t, n=n: _count(root, "claim") > n, "the race's claim")
            t.wait_oled("play a card")
            v = _count(root, "verdict")
            _tap(t, root, f"mg/clothing/{clothing}")  # the claim
            t.wait(lambda t, v=v: _count(root, "verdict") > v, "the verdict")
            t.wait(lambda t: re.search(r"^Last: (P\d|game over)", t.text(), re.M), "the verdict on the screen")
            t.type("--")
            if i < len(rounds) - 1:
                t.wait_oled("next cheese")
        t.wait_screen("Last: game over: P1 -10, P2 -8; won by P2")
        t.wait_oled("game over")
        end = _records(root)[-1]
        assert end["type"] == "game_end" and end["scores"] == {"1": -10, "2": -8}, end
        _quit_and_check_terminal(t)
    finally:
        t.close()


def test_a_whole_game_of_m_is_for_mouse_with_keys_alone(tmp_path):
    """Variant A, three players, the moves of tests/scenarios/mim-a-3p.jsonl typed as keys."""
    root = tmp_path / "unit"
    _patient_unit(root)
    acts = [json.loads(ln) for ln in (SCEN / "mim-a-3p.jsonl").read_text().splitlines() if ln.startswith("{")]
    t = _sim(root, 80, 24)
    try:
        _join(t, "game/mim", 3, variant_hold=True)
        t.wait_oled("lay 3 cards")
        i = next(k for k, a in enumerate(acts) if a.get("tap", "").startswith("mim/card"))
        while i < len(acts):
            a = acts[i]
            if "tap" in a:
                _tap(t, root, a["tap"])
            elif "remove" in a:
                t.type("-")
            else:  # a click or a hold (pass / take the pair shown): one gesture record each
                p = a.get("hold") or a.get("press")
                g = _count(root, "gesture")
                t.type(("asdfgh" if "hold" in a else "123456")[p - 1])
                t.wait(lambda t, g=g: _count(root, "gesture") > g, f"player {p}'s gesture")
                i += 1 if "press" in a else 0  # its release
            i += 1
        t.wait_screen("Last: game over: P1 3, P2 0, P3 0; won by P1")
        end = _records(root)[-1]
        assert end["type"] == "game_end" and end["winners"] == [1], end
        _quit_and_check_terminal(t)
    finally:
        t.close()


def test_a_whole_game_of_mucks_maeuschen_still_with_keys_alone(tmp_path):
    """Two players read the display and press when it asks, one hard knock (K) on the castle on the way."""
    root = tmp_path / "unit"
    t = _sim(root, 120, 40)
    try:
        _join(t, "game/mms", 2)
        t.wait_oled("who sneaks")
        asked = _stable_oled(t)
        t.type("1")
        # A press that lands within the double-press window of the start's double press is part of that
        # gesture, not a choice: the screen then still asks, and the press is given again after 20 s below.
        knocked, last, turns, since = False, asked, 0, time.monotonic()
        deadline = time.monotonic() + 900  # a whole game: generous on a busy machine, never a figure
        while "Last: game over" not in t.text():
            assert time.monotonic() < deadline, f"the game does not end; OLED {t.oled_text()!r}\n{t.text()}"
            txt = _stable_oled(t)
            if txt == last and time.monotonic() - since < 20:
                time.sleep(0.2)
                continue
            # a new screen, or one that waited 20 s for us (the press came while the unit showed the last)
            last, since = txt, time.monotonic()
            m = re.search(r"P(\d)", txt)
            if "quiet!" in txt and not knocked and turns > 3:
                a = _count(root, "alarm")
                t.type("K")  # the castle trembles while a stick goes in
                t.wait(lambda t, a=a: _count(root, "alarm") > a, "the alarm")
                knocked = True
            elif "who sneaks" in txt.lower():
                t.type("1")
            elif m and ("dice" in txt or "quiet!" in txt or "ALARM" in txt):
                turns += "dice" in txt
                t.type(m.group(1))
            assert turns < 80, "the game does not end"
        end = _records(root)[-1]
        assert end["type"] == "game_end" and knocked and _count(root, "alarm") >= 1, end
        _quit_and_check_terminal(t)
    finally:
        t.close()


