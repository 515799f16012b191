"""Scenario parity: a scenario file chosen on the page plays as `mausbox sim --scenario` plays it, with the same
log, record by record (apart from the CRC, which covers the unit's id, and the wall clock).

Each run plays one scenario of each game; MAUSBOX_WEB_ALL=1 plays every file in tests/scenarios/."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import webkit
from mausbox.sim import run as simrun

SCEN = Path(__file__).resolve().parents[1] / "scenarios"
EVERY = sorted(p.name for p in SCEN.glob("*.jsonl"))
SOME = ["mg-4p-mice.jsonl", "mim-a-3p.jsonl", "mms-2p-draw.jsonl"]
WEB_UNIT_ID = "5e1d00000001"  # maus.sim.hw's default unique_id: the page has no MAUSBOX_UNIT_ID
SKIP_FIELDS = ("crc", "wall")


def terminal_logs(scenario: Path, root: Path) -> dict[str, list[dict]]:
    (root / ".sim").mkdir(parents=True, exist_ok=True)
    (root / ".sim" / "unique_id").write_text(WEB_UNIT_ID)
    rc, lines = simrun.run_scenario(scenario, root, heap=simrun.board_heap())
    assert rc == 0, "\n".join(lines[-20:])
    return {p.name: [json.loads(x) for x in p.read_text().splitlines()] for p in simrun.logs_in(root)}


def page_logs(drv, url: str, scenario: Path) -> dict[str, list[dict]]:
    drv.get(url)
    webkit.wait_for(drv, "window.mausbox && window.mausbox.ready", "the page's unit ready")
    drv.find_element("id", "scenariofile").send_keys(str(scenario))
    res = webkit.wait_for(drv, "window.mausbox && window.mausbox.scenario", f"{scenario.name} played on the page")
    assert "error" not in res, res
    return {n: [json.loads(x) for x in text.splitlines()] for n, text in res["logs"].items()}


def strip(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in SKIP_FIELDS}


@pytest.mark.parametrize("name", EVERY if os.environ.get("MAUSBOX_WEB_ALL") else SOME)
def test_scenario_log_matches_terminal_sim(name, page_url, browser, tmp_path):
    scenario = SCEN / name
    want = terminal_logs(scenario, tmp_path / "unit")
    got = page_logs(browser(), page_url, scenario)
    assert sorted(got) == sorted(want), f"log files: page {sorted(got)}, terminal {sorted(want)}"
    for log in want:
        a, b = want[log], got[log]
        for i, (x, y) in enumerate(zip(a, b)):
            assert strip(y) == strip(x), f"{log} record {i}: page {y} != terminal {x}"
        assert len(b) == len(a), f"{log}: page {len(b)} records, terminal {len(a)}"
