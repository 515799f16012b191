"""The sim's knock keys against a fresh unit's detector (sensitivity 5, not calibrated): a gentle knock (`k`)
never rings the alarm, in a quiet room or a noisy one; a hard knock (`K`) always does. Once through the
detector and the piezo model directly, once as a scenario on the virtual unit (the MMS game's own alarm)."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import ROOT
from maus.settings import values as settings
from mausbox.sim.run import KNOCKS

sys.path.insert(0, str(ROOT / "tests" / "fw"))
from piezo_suite import BELL_LEVEL, run_case  # noqa: E402
from scenariokit import SCENARIOS, play, records  # noqa: E402

FRESH = settings.defaults()["sensitivity"]


def _case(knock: dict, noise: bool):
    acts = [("knock", 300, knock["knock"], knock["ms"], "ring")]
    return ("k", None, 1200, ([("noise", 0.3)] if noise else []) + acts)


@pytest.mark.parametrize("noise", [False, True], ids=["quiet", "noise"])
def test_a_gentle_knock_never_rings_a_fresh_unit_and_a_hard_one_always_does(noise):
    assert KNOCKS["gentle"]["knock"] < BELL_LEVEL <= KNOCKS["hard"]["knock"]
    for seed in range(1, 21):
        assert run_case(_case(KNOCKS["gentle"], noise), seed=seed, sensitivity=FRESH)[0] == 0, seed
        assert run_case(_case(KNOCKS["hard"], noise), seed=seed, sensitivity=FRESH)[0] >= 1, seed


def _attempt_then(knock: dict, tmp_path):
    """Mucks Mäuschen Still with 2 players until player 2's attempt is armed (mms-2p-draw.jsonl's start),
    then the knock, then quiet."""
    lines = (SCENARIOS / "mms-2p-draw.jsonl").read_text().splitlines()
    head = [ln for ln in lines if ln.startswith("{") and json.loads(ln)["at_ms"] <= 9900]
    knock_at = 10900
    tmp_path.mkdir()
    scen = tmp_path / "knock.jsonl"
    scen.write_text("\n".join(head + [json.dumps({"at_ms": knock_at, **knock}),
                                      json.dumps({"at_ms": knock_at + 3000, "noise": 0})]) + "\n")
    logs, _ = play(scen, tmp_path / "unit")
    return [r for r in records(logs[-1]) if r["type"] == "alarm"]


def test_on_the_virtual_unit_a_gentle_knock_is_no_alarm_a_hard_one_is(tmp_path):
    assert _attempt_then(KNOCKS["gentle"], tmp_path / "gentle") == []
    assert len(_attempt_then(KNOCKS["hard"], tmp_path / "hard")) == 1
