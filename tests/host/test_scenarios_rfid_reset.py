"""The reader chip resets itself in the middle of a game (a brown-out: reset values, antenna off, nothing
said): the unit notices, sets it up again and reads the next cards, so the game ends as without resets."""

import json

from mausbox.sim import run as simrun
from scenariokit import SCENARIOS, check_log, first_end, play

# mg-2p-cheese with the reader resetting: while a card is held, just before a card is tapped, between
# two clothing taps, and right after a mouse is put down (while it is being identified).
RESETS_MS = (7250, 9000, 17000, 21420)


def test_reader_reset_mid_game_and_the_next_cards_are_read(tmp_path):
    base = SCENARIOS / "mg-2p-cheese.jsonl"
    expect = json.loads(base.with_suffix(".expect.json").read_text())
    lines = base.read_text().splitlines()
    lines += [json.dumps({"at_ms": t, "rfid": "reset"}) for t in RESETS_MS]
    s = tmp_path / "mg-2p-cheese-resets.jsonl"
    s.write_text("\n".join(lines) + "\n")
    logs, out = play(s, tmp_path / "unit")
    assert sum(1 for line in out if line.startswith("SIM rfid reset")) == len(RESETS_MS), out[-20:]
    for log in logs:
        check_log(log)
    end = first_end(logs)
    assert end["scores"] == expect["scores"] and sorted(end["winners"]) == sorted(expect["winners"])
    assert end.get("why", end.get("reason")) == expect["reason"]


def test_the_rfid_action_takes_only_reset():
    assert simrun.parse_scenario('{"at_ms": 5, "rfid": "reset"}\n') == [{"at_ms": 5, "rfid": "reset"}]
    try:
        simrun.parse_scenario('{"at_ms": 5, "rfid": "unplug"}\n', "s.jsonl")
    except simrun.ScenarioError as e:
        assert str(e).startswith("s.jsonl:1:") and "reset" in str(e)
    else:
        raise AssertionError("an unknown rfid action was accepted")
