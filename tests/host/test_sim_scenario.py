"""The scenario runner itself: malformed files are refused with the line named, logs replay byte for byte."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from mausbox.sim import run as simrun
from scenariokit import SCENARIOS, play

BAD = [
    ('{"at_ms": 10, "press": 1}\n{"at_ms": 20, "press": 9}\n', "2", "player number"),
    ('{"at_ms": 10, "press": 1\n', "1", "not valid JSON"),
    ('{"at_ms": -5, "press": 1}\n', "1", "at_ms"),
    ('{"at_ms": 5, "press": 1, "tap": "mg/mouse/07"}\n', "1", "exactly one action"),
    ('{"at_ms": 5, "hold": 1}\n', "1", "hold"),
    ('{"at_ms": 5, "tap": "not a card"}\n', "1", "identity"),
    ('{"at_ms": 5, "knock": 3}\n', "1", "0..1"),
    ('[1, 2]\n', "1", "JSON object"),
    ('{"at_ms": 5, "press": 1, "colour": "red"}\n', "1", "unknown field"),
]


@pytest.mark.parametrize("text,line,word", BAD)
def test_malformed_scenario_names_the_line(text, line, word):
    with pytest.raises(simrun.ScenarioError) as e:
        simrun.parse_scenario(text, "s.jsonl")
    assert str(e.value).startswith(f"s.jsonl:{line}:") and word in str(e.value)


def test_cli_exit_code_and_message(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"at_ms": 0, "press": 1}\n{"at_ms": "soon", "press": 2}\n')
    proc = subprocess.run([sys.executable, "-m", "mausbox", "sim", "--scenario", str(bad), "--root",
                           str(tmp_path / "u")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "bad.jsonl:2:" in proc.stderr and "Traceback" not in proc.stderr


def test_comments_blank_lines_and_time_order():
    acts = simrun.parse_scenario('# a comment\n\n{"at_ms": 50, "release": 1}\n{"at_ms": 10, "press": 1}\n')
    assert [a["at_ms"] for a in acts] == [10, 50]


def test_same_scenario_same_log_bytes(tmp_path):
    scenario = sorted(SCENARIOS.glob("mms-*.jsonl"))[0]
    for r in ("a", "b"):  # the same unit (its unique_id lives in its flash folder), played twice
        (tmp_path / r / ".sim").mkdir(parents=True)
        (tmp_path / r / ".sim" / "unique_id").write_text("5e1d0000abcd")
    a, _ = play(scenario, tmp_path / "a")
    b, _ = play(scenario, tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_menu_by_buttons_and_abort_on_scenario_end(tmp_path):
    # Player 1 clicks once (to M is for Mouse), holds to choose it, holds again for variant A; two
    # players join, a double press starts; the scenario then ends mid-game and the log says so.
    s = tmp_path / "s.jsonl"
    lines = [
        {"at_ms": 300, "press": 1}, {"at_ms": 380, "release": 1},  # click: next item (M is for Mouse)
        {"at_ms": 1500, "hold": 1, "ms": 1500},  # choose it
        {"at_ms": 4000, "hold": 1, "ms": 1500},  # variant A
        {"at_ms": 7000, "press": 1}, {"at_ms": 7080, "release": 1},
        {"at_ms": 7300, "press": 2}, {"at_ms": 7380, "release": 2},
        {"at_ms": 8000, "press": 2}, {"at_ms": 8060, "release": 2},
        {"at_ms": 8200, "press": 2}, {"at_ms": 8260, "release": 2},
    ]
    s.write_text("".join(json.dumps(x) + "\n" for x in lines))
    logs, out = play(s, tmp_path / "u")
    recs = [json.loads(x) for x in logs[-1].read_text().splitlines()]
    assert recs[0]["type"] == "game_start" and recs[0]["game"] == "mim" and recs[0]["variant"] == "A"
    assert [p["id"] for p in recs[0]["players"]] == [1, 2]
    assert recs[-1]["type"] == "game_abort" and recs[-1]["reason"] == "scenario ended"


def _sim(*args):
    return subprocess.run([sys.executable, "-m", "mausbox", "sim", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_the_cli_reports_the_game_it_played_and_fails_when_none_started(tmp_path):
    root = tmp_path / "u"
    assert _sim("--scenario", SCENARIOS / "mms-2p-draw.jsonl", "--root", root).returncode == 0  # an older game
    js = _sim("--scenario", SCENARIOS / "mim-a-3p.jsonl", "--root", root, "--json")
    assert js.returncode == 0, js.stderr
    games = json.loads(js.stdout)["games"]
    assert len(simrun.logs_in(root)) == 2 and len(games) == 1 and games[0]["log"].endswith("-mim.jsonl")
    assert games[0]["end"]["type"] == "game_end"
    idle = tmp_path / "idle.jsonl"
    idle.write_text('{"at_ms": 500, "press": 2}\n{"at_ms": 580, "release": 2}\n')  # no game card, no menu choice
    proc = _sim("--scenario", idle, "--root", root)
    assert proc.returncode == 1
    assert "started no game" in proc.stderr and "jsonl" not in proc.stdout and "Traceback" not in proc.stderr


def test_the_cli_says_each_game_in_words_players_in_order_and_speaks_the_terminals_language(tmp_path):
    import os

    from mausbox.cmd_sim import ending

    end = {"type": "game_end", "scores": {"1": 8, "4": 6, "3": 5, "2": 7, "10": 1}, "winners": [1],
           "why": "last_mouse"}
    assert ending("00001-mg.jsonl", end) == "Mausgeflippt: scores P1 8, P2 7, P3 5, P4 6, P10 1; winner P1 (last mouse)"
    assert ending("00004-mms.jsonl", {"scores": {"2": 2, "1": 0}, "winners": [1, 2]}) == \
        "Mucks Mäuschen Still: sticks left P1 0, P2 2; winners P1, P2"
    for lang, want in (("en_GB.UTF-8", "en"), ("de_DE.UTF-8", "de")):
        root = tmp_path / lang
        env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES")}
        env["LANG"] = lang
        proc = subprocess.run([sys.executable, "-m", "mausbox", "sim", "--scenario",
                               str(SCENARIOS / "mms-3p-last.jsonl"), "--root", str(root)], env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == ("00001-mms.jsonl: Mucks Mäuschen Still: sticks left P1 2, P2 2, P3 0; "
                                       "winner P3 (last stick)"), proc.stdout
        saved = root / "settings.json"  # German, the default, needs no settings file
        assert (json.loads(saved.read_text())["lang"] if saved.exists() else "de") == want


def test_the_serial_units_start_up_says_what_it_waits_for(tmp_path):
    """A new unit's start: the firmware compiled into its folder (the long part), then its boot; each said
    before it is waited for, in lines that fit 80 columns."""
    import os
    import re
    import signal

    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "home"))
    proc = subprocess.Popen([sys.executable, "-m", "mausbox", "sim", "--serial", "--headless", "--root",
                             str(tmp_path / "u")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    said = []
    try:
        for line in proc.stdout:
            said.append(line.rstrip("\n"))
            if line.startswith("virtual unit on"):
                break
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    assert said[0].startswith("sim: compiling the firmware into ") and "first time" in said[0], said
    assert re.match(r"sim: firmware ready \(\d+ s\); starting MicroPython", said[1]), said
    assert "once it has booted" in said[2] and said[3].startswith("virtual unit on"), said
    assert all(len(ln) <= 80 for ln in said[1:3]), said


def test_a_tap_carries_the_text_its_card_holds():
    # Worked out on the host (the card writer's rule, maus.sim.rf_field.card_text), so the unit loads nothing to
    # make the card in the middle of a game (tests/fw/test_rfid.py, bench/bench_pull_peak.py).
    acts = simrun.parse_scenario('{"at_ms": 5, "tap": "MG/Mouse/7"}\n{"at_ms": 6, "tap": "mg/hat/1"}\n'
                                 '{"at_ms": 7, "remove": "mg/mouse/07"}\n{"at_ms": 8, "press": 1}\n')
    lines = [json.loads(x) for x in simrun.scenario_text(acts).splitlines()]
    assert lines[0] == {"at_ms": 5, "tap": "MG/Mouse/7", "card": "mausbox:mg/mouse/07"}
    assert lines[1] == {"at_ms": 6, "tap": "mg/hat/1", "card": "mg/hat/1"}  # no identity: the text as it is
    assert lines[2:] == acts[2:]
