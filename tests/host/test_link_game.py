"""Host commands against a unit in a game: with a Mausgeflippt game waiting for its first reveal (held back
until the commands are done, not for a fixed minute), `ports`, `doctor` and `config get` succeed, `clock set`
says a game is in progress and `logs pull` waits for the game's end, then pulls it whole; the game goes on to
its game_end with no game_abort. The firmware runs as on a board with its console on a pty (tests/host/ptyunit.py); the same
check through `mausbox sim --serial --headless --scenario` is in test_sim_serial_game.py."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from mausbox.cli import main
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun
from ptyunit import PtyUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")
SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "mg-3p-wait.jsonl"


def records(unit: PtyUnit) -> list[dict]:
    logs = unit.logs()
    return unit.records(logs[-1]) if logs else []


def wait_for(pred, what: str, unit: PtyUnit, timeout: float = 240.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        assert unit.alive(), "the unit stopped:\n" + unit.text()[-3000:]
        time.sleep(0.2)
    raise AssertionError(f"no {what} within {timeout:.0f} s; the unit said:\n" + unit.text()[-3000:])


def test_host_commands_during_a_game_leave_it_running(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    actions = simrun.parse_scenario(SCENARIO.read_text(), SCENARIO.name)
    # The players wait with the first mouse until the host is done: the commands land while the game waits for
    # its reveal however slow the machine, and the test waits for no fixed minute.
    reveal_ms = min(a["at_ms"] for a in actions if "mg/mouse/" in str(a.get("tap")))
    before = [a for a in actions if a["at_ms"] < reveal_ms]
    after = [dict(a, at_ms=a["at_ms"] - reveal_ms) for a in actions if a["at_ms"] >= reveal_ms]
    with PtyUnit(tmp_path / "unit") as unit:
        assert unit.ready, unit.text()
        unit.register(tmp_path / "data")
        unit.play(before)
        wait_for(lambda: any(r["type"] == "game_start" for r in records(unit)), "game_start", unit)
        wait_for(lambda: not unit.fifo._pending and any(r["type"] == "note" and r.get("text") == "open cheese"
                                                         for r in records(unit)), "the open cheese", unit)
        capsys.readouterr()

        assert main(["ports", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [(r["device"], r["state"], r["mode"], r["game"]) for r in rows] == [(unit.port, "unit", "play", "mg")]
        assert main(["doctor", "--port", unit.port]) == 0
        assert "doctor: all good" in capsys.readouterr().out
        assert main(["config", "--port", unit.port, "get"]) == 0
        assert "claim_window_ms" in capsys.readouterr().out
        assert main(["clock", "--port", unit.port, "set"]) != 0
        assert "a game is in progress" in capsys.readouterr().err
        types = [r["type"] for r in records(unit)]
        assert "reveal" not in types and "game_end" not in types and "game_abort" not in types, types
        unit.play(after, time.monotonic() + 0.5)  # the first mouse now, and the rest of the game as planned
        dest = tmp_path / "pulled"
        # the pull waits for the game's end (the unit serves no pull in a game), then pulls the whole game
        assert main(["logs", "pull", "--port", unit.port, "--dest", str(dest), "--timeout", "60",
                     "--store", str(tmp_path / "store.sqlite")]) == 0
        out = capsys.readouterr()
        assert "1 pulled" in out.out and "waiting for its end" in out.out + out.err, out

        end = wait_for(lambda: [r for r in records(unit) if r["type"] in ("game_end", "game_abort")], "game end",
                       unit)
        assert unit.rx > 0  # the commands did talk to the unit
    assert end[0]["type"] == "game_end", end
    expect = json.loads(SCENARIO.with_suffix(".expect.json").read_text())
    assert end[0]["scores"] == expect["scores"] and end[0]["why"] == expect["reason"]
    pulled = next(dest.rglob("*.jsonl"))
    log = unit.logs()[-1]
    assert log.read_bytes() == pulled.read_bytes()  # the finished log, whole
    assert "KeyboardInterrupt" not in unit.text() and "Traceback" not in unit.text()
