"""M is for Mouse end to end: the scenario games of every variant through the virtual unit (the firmware
as deployed, the shell, the emulated RFID pad and buttons, virtual time). The game_end must be the
.expect.json written by tests/scenarios/mim-make.py, and the whole log must be intact and follow
docs/log-schema.json."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import ROOT
from maus import logread
from mausbox import simrun

SCENARIOS = ROOT / "tests" / "scenarios"
VALIDATOR = jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "log-schema.json").read_text()))


@pytest.mark.parametrize("name", ["mim-a-3p", "mim-b-3p", "mim-c-4p"])
def test_scenario_through_the_virtual_unit(name, tmp_path):
    rc, lines = simrun.run_scenario(SCENARIOS / f"{name}.jsonl", tmp_path / "unit")
    assert rc == 0, "\n".join(lines[-30:])
    logs = simrun.logs_in(tmp_path / "unit")
    assert len(logs) == 1, logs
    data = logs[0].read_bytes()
    rep = logread.read(data)
    assert rep.ok, rep.problems
    records = [json.loads(line) for line in data.splitlines()]
    for rec in records:
        errors = [e.message for e in VALIDATOR.iter_errors(rec)]
        assert not errors, (rec, errors)
    start, end = records[0], records[-1]
    assert start["type"] == "game_start" and start["game"] == "mim" and start["variant"] == name[4].upper()
    want = json.loads((SCENARIOS / f"{name}.expect.json").read_text())
    assert end["type"] == "game_end"
    assert {"scores": end["scores"], "winners": end["winners"], "reason": end["why"]} == want
    types = {r["type"] for r in records}
    assert {"tap", "verdict", "score"} <= types
    assert not any(r["type"] == "tap" and r["identity"] is None for r in records)  # every card was read
