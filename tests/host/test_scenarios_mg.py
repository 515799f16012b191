"""Complete games of mg through the virtual unit: each scenario's first game_end is what the rules give."""

import pytest
from scenariokit import check_scenario, scenario_files

SCENARIOS = scenario_files("mg")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_game(scenario, tmp_path):
    check_scenario(scenario, tmp_path)


def test_there_are_scenarios():
    assert SCENARIOS, "no tests/scenarios/mg-*.jsonl with an .expect.json"
