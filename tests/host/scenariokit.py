"""Running scenario files through the virtual unit for the end-to-end tests."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from conftest import MICROPYTHON, ROOT
from maus.log import check as logcheck
from mausbox.sim import run as simrun

SCENARIOS = ROOT / "tests" / "scenarios"  # the folder
SCHEMA = json.loads((ROOT / "docs" / "log-schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def scenario_files(prefix: str) -> list[Path]:
    return sorted(p for p in SCENARIOS.glob(f"{prefix}-*.jsonl") if p.with_suffix(".expect.json").exists())


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def live_records(path: Path) -> list[dict]:
    """The records of a log the unit may be writing: a line without its newline yet is not a record."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[:-1] if line.strip()]


def check_log(path: Path) -> None:
    """A produced log: every line valid against the schema, and the reader finds no damage."""
    data = path.read_bytes()
    for n, line in enumerate(data.decode().splitlines(), 1):
        errors = sorted(VALIDATOR.iter_errors(json.loads(line)), key=str)
        assert not errors, f"{path.name}:{n}: {errors[0].message}"
    report = logcheck.read(data)
    assert report.ok, f"{path.name}: {[(p.line, p.what) for p in report.problems]}"


def play(scenario: Path, root: Path) -> tuple[list[Path], list[str]]:
    assert MICROPYTHON is not None, "the MicroPython unix port is needed for end-to-end tests"
    rc, lines = simrun.run_scenario(scenario, root)
    assert rc == 0, "the virtual unit failed:\n" + "\n".join(lines[-30:])
    logs = simrun.logs_in(root)
    assert logs, "no game log written"
    return logs, lines


def first_end(logs: list[Path]) -> dict:
    for log in logs:
        for rec in records(log):
            if rec["type"] == "game_end":
                return rec
    raise AssertionError("no game_end in " + ", ".join(p.name for p in logs))


def check_scenario(scenario: Path, tmp_path: Path) -> None:
    expect = json.loads(scenario.with_suffix(".expect.json").read_text())
    logs, lines = play(scenario, tmp_path / "unit")
    # the simulator's flash layer and heap watch (maus.sim.world): nothing is written or collected in a race
    window = [ln for ln in lines if "in a race window" in ln]
    assert not window, f"{scenario.name}: {window[:3]}"
    for log in logs:
        check_log(log)
    # logs/index (docs/log-format.md, "The index"): once a game has ended, it names that log finished, at its size
    # (the unit writes it after the game's code has gone: maus.unit.play)
    last = logs[-1]
    recs = records(last)
    if recs and recs[-1]["type"] in ("game_end", "game_abort"):
        ix = (tmp_path / "unit" / "logs" / "index").read_text().split()
        assert ix[1:4] == [last.name, "d", str(last.stat().st_size)], f"{scenario.name}: index {ix}"
    end = first_end(logs)
    assert end["scores"] == expect["scores"], f"{scenario.name}: scores {end['scores']} != {expect['scores']}"
    assert sorted(end["winners"]) == sorted(expect["winners"])
    if "reason" in expect:
        assert end.get("why", end.get("reason")) == expect["reason"]
