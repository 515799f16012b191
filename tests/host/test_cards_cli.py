"""`mausbox cards`: catalog check, printable sheet, and enrolment / writing through the virtual unit's pty.

Through the pty the unit runs the real firmware on the sim board: its emulated MFRC522 and NTAG tags, put on
the pad through the virtual unit's control FIFO when the command asks for the next card.
"""

from __future__ import annotations

import json

import pytest
from mausbox.cli import main
from mausbox.mpbuild import micropython_binary
from mausbox.paths import FIRMWARE_PKG


def test_check_the_builtin_catalog(capsys):
    assert main(["cards", "check", "mg"]) == 0
    assert "good mg catalog" in capsys.readouterr().out


def test_check_finds_problems(tmp_path, capsys):
    data = json.loads((FIRMWARE_PKG / "catalogs" / "mg.json").read_text())
    data["mice"].pop()
    data["mice"][1]["wears"] = list(data["mice"][0]["wears"])
    data["clothing"][0]["item"] = "purple hat"
    f = tmp_path / "mine.json"
    f.write_text(json.dumps(data))
    assert main(["cards", "check", str(f), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    errs = " | ".join(doc["errors"])
    assert not doc["ok"] and "same outfit" in errs and "purple hat" in errs
    f.write_text("{not json")
    assert main(["cards", "check", str(f)]) == 2
    f.write_text(json.dumps({"game": "chess"}))
    assert main(["cards", "check", str(f)]) == 1
    assert "no validator" in capsys.readouterr().out
    assert main(["cards", "check", str(tmp_path / "missing.json")]) == 2


@pytest.fixture
def unit(tmp_path, monkeypatch):
    """The real firmware on a pty (tests/host/ptyunit.py), its app in the menu, the sim board's emulated MFRC522:
    when the command asks for the next card, the prompt answers itself and puts the queued tag on the pad
    (taking the last one off)."""
    if micropython_binary() is None:
        pytest.skip("MicroPython unix port not installed")
    from ptyunit import PtyUnit

    queue: list[str | None] = []
    prompts: list[str] = []
    on_pad: list[str] = []

    with PtyUnit(tmp_path / "unit") as u:
        def fake_input(text=""):
            prompts.append(text)
            while on_pad:
                u.send({"remove": on_pad.pop()})
            tag = queue.pop(0)
            if tag is not None:  # None: leave the pad empty
                u.send({"tap": tag})
                on_pad.append(tag)
            return ""

        monkeypatch.setattr("builtins.input", fake_input)
        u.root_dir = u.root
        u.pty_path = u.port
        u.queue = queue
        u.prompts = prompts
        yield u


def test_enrol_and_list_over_the_pty(unit, capsys):
    port = unit.pty_path
    assert main(["cards", "list", "--port", port]) == 0
    assert "no cards enrolled" in capsys.readouterr().out
    unit.queue += ["a tag with foreign text", "another foreign tag"]
    assert main(["cards", "enrol", "--port", port, "--timeout", "5", "mg/mouse/1", "game/mg"]) == 0
    out = capsys.readouterr().out
    assert "2 card(s) enrolled, 0 failed" in out
    assert "mg/mouse/01" in unit.prompts[0] and "game/mausgeflippt" in unit.prompts[1]
    doc = json.loads((unit.root_dir / "cards" / "enrol.json").read_text())
    assert sorted(doc["cards"].values()) == ["game/mausgeflippt", "mg/mouse/01"]
    assert all(len(uid) == 14 and uid == uid.upper() for uid in doc["cards"])  # 7-byte NTAG UIDs
    assert not (unit.root_dir / "cards" / "enrol.json.tmp").exists()
    assert main(["cards", "list", "--port", port, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == doc["cards"]

    # a tag that already carries another identity, and an empty pad: refused, the map unchanged
    unit.queue += ["mg/mouse/02", None]
    assert main(["cards", "enrol", "--port", port, "--timeout", "1", "mg/mouse/03", "mg/mouse/04"]) == 1
    out = capsys.readouterr().out
    assert "already says mg/mouse/02" in out and "no card on the pad" in out
    assert json.loads((unit.root_dir / "cards" / "enrol.json").read_text()) == doc


def test_write_over_the_pty(unit, capsys):
    unit.queue += ["foreign text", "foreign text", "mg/cheese/2"]
    port = unit.pty_path
    assert main(["cards", "write", "--port", port, "--timeout", "5", "mg/cheese/1"]) == 1
    assert "tag holds other data" in capsys.readouterr().out
    assert main(["cards", "write", "--port", port, "--timeout", "5", "--force", "mg/cheese/1"]) == 0
    assert "written: mausbox:mg/cheese/1 on tag 04" in capsys.readouterr().out
    assert main(["cards", "write", "--port", port, "--timeout", "5", "mg/cheese/02"]) == 0
    assert "already holds this identity" in capsys.readouterr().out


def test_prompt_skip_and_quit(unit, capsys, monkeypatch):
    answers = iter(["s", "q"])
    monkeypatch.setattr("builtins.input", lambda text="": next(answers))
    assert main(["cards", "write", "--port", unit.pty_path, "mg/cheese/1", "mg/cheese/2", "mg/cheese/3"]) == 0
    assert "0 card(s) written, 0 failed" in capsys.readouterr().out


def test_cards_without_a_unit_fail_cleanly(tmp_path, capsys):
    assert main(["cards", "list", "--port", str(tmp_path / "nope")]) == 3
    assert "does not exist" in capsys.readouterr().err


def test_no_cards_during_a_game(unit, capsys):
    import time

    from test_cli_unit_commands import START

    unit.play(START)
    end = time.monotonic() + 60
    while not unit.logs() and time.monotonic() < end:
        time.sleep(0.2)
    unit.queue += ["foreign text"]
    assert main(["cards", "write", "--port", unit.pty_path, "--timeout", "3", "mg/cheese/1"]) == 1
    assert "a game is in progress" in capsys.readouterr().err
    assert "game_abort" not in unit.logs()[-1].read_text()
