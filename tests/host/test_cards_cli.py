"""`mausbox cards`: catalog check, printable sheet, and enrolment / writing through the virtual unit's pty.

Through the pty the unit runs the real firmware on the sim board: its emulated MFRC522 and NTAG tags, put on
the pad through the virtual unit's control FIFO when the command asks for the next card.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from mausbox.cli import main
from mausbox.paths import BOARDS_DIR, FIRMWARE_DIR, FIRMWARE_PKG, micropython_binary


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
    """A virtual unit with the sim board's emulated MFRC522; `place(text)` puts a tag on its pad when the
    command asks for the next card (the prompt answers itself)."""
    if micropython_binary() is None:
        pytest.skip("MicroPython unix port not installed")
    from maus.sim.mfrc522_emu import MFRC522Emu
    from mausbox.sim.serial import SerialUnit

    if "self.reader.put(" in (FIRMWARE_PKG / "hw" / "sim.py").read_text() and not hasattr(MFRC522Emu, "put"):
        pytest.xfail("the virtual unit cannot put a tag on its pad yet (hw/sim.py calls MFRC522Emu.put)")
    root = tmp_path / "unit"
    root.mkdir()
    shutil.copy(BOARDS_DIR / "sim.json", root / "board.json")
    fifo = root / "sim-ctl"  # inside the unit's flash: the unit's "/" is its folder
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    queue: list[str | None] = []
    prompts: list[str] = []

    def fake_input(text=""):
        prompts.append(text)
        tag = queue.pop(0)
        if tag is not None:  # None: leave the pad empty
            os.write(fd, (json.dumps({"tap": tag}) + "\n").encode())
        return ""

    monkeypatch.setattr("builtins.input", fake_input)
    # 192k as `mausbox sim` uses: the firmware plus the simulated chips (emulator, tag models) in source form
    with SerialUnit(root, heapsize="192k", extra_path=[str(FIRMWARE_DIR)], env={"MAUSBOX_SIM_CTL": "/sim-ctl"}) as u:
        u.root_dir = root
        u.queue = queue
        u.prompts = prompts
        yield u
    os.close(fd)


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
    assert "cannot open" in capsys.readouterr().err
