"""The acceptance check of issues 16 and 27 on the virtual unit: `mausbox sim --serial --headless --scenario` plays
a Mausgeflippt game that waits for its first reveal (tests/scenarios/mg-3p-wait.jsonl with its minute cut to
SHORT_WAIT_MS); meanwhile `mausbox ports`, `doctor` and `config get`
succeed, `clock set` says a game is in progress, and a `logs pull` waits for the game's end and then pulls the
whole game; the game's log goes on to its game_end with no game_abort."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mausbox.mpbuild import micropython_binary
from scenariokit import live_records

pytestmark = [
    pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed"),
]
SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "mg-3p-wait.jsonl"
SHORT_WAIT_MS = 15000  # the unit waits this long for the first mouse: the commands take a few seconds


def shorter_wait(dest: Path) -> Path:
    """The scenario with its minute's wait for the first reveal cut to SHORT_WAIT_MS, every other gap kept."""
    acts = [json.loads(x) for x in SCENARIO.read_text().splitlines() if x.startswith("{")]
    reveal = min(a["at_ms"] for a in acts if "mg/mouse/" in str(a.get("tap")))
    cut = reveal - max(a["at_ms"] for a in acts if a["at_ms"] < reveal) - SHORT_WAIT_MS
    assert cut > 0, "the scenario's wait is already short"
    dest.write_text("".join(json.dumps(dict(a, at_ms=a["at_ms"] - cut if a["at_ms"] >= reveal else a["at_ms"]))
                            + "\n" for a in acts))
    return dest


def records(root: Path) -> list[dict]:
    logs = sorted((root / "logs").glob("*.jsonl")) if (root / "logs").exists() else []
    return live_records(logs[-1]) if logs else []


def mausbox(env, *args, timeout=120):
    # A command that talks to the unit waits up to 60 s for each answer (its default, 10 s, is a user's
    # patience; on a machine busy with other tests the unit mid-game may take longer to load its service).
    extra = ("--timeout", "60") if "--port" in args else ()
    return subprocess.run([sys.executable, "-m", "mausbox", *args, *extra], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_host_commands_on_a_virtual_unit_in_a_game(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
    root = tmp_path / "unit"
    port = str(tmp_path / "ttyUNIT")
    sim = subprocess.Popen([sys.executable, "-m", "mausbox", "sim", "--serial", "--headless", "--root", str(root),
                            "--link", port, "--scenario", str(shorter_wait(tmp_path / "wait.jsonl"))], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        assert sim.stdout is not None
        said = []
        for line in sim.stdout:
            said.append(line)
            if "starting now" in line:
                break
        assert any("starting now" in x for x in said), "".join(said)
        end = time.monotonic() + 120
        while not any("cheese" in json.dumps(r) for r in records(root)[1:]) and time.monotonic() < end:
            time.sleep(0.2)
        assert records(root) and records(root)[0]["type"] == "game_start"

        r = mausbox(env, "ports", "--json")
        rows = [x for x in json.loads(r.stdout) if x["device"] == port]
        assert r.returncode == 0 and [(x["state"], x["mode"], x["game"]) for x in rows] == [("unit", "play", "mg")], \
            r.stdout + r.stderr
        r = mausbox(env, "doctor", "--port", port)
        assert r.returncode == 0 and "doctor: all good" in r.stdout, r.stdout + r.stderr
        r = mausbox(env, "config", "--port", port, "get")
        assert r.returncode == 0 and "claim_window_ms" in r.stdout, r.stdout + r.stderr
        r = mausbox(env, "clock", "set", "--port", port)
        assert r.returncode != 0 and "a game is in progress" in r.stderr, r.stdout + r.stderr
        pull = subprocess.Popen([sys.executable, "-m", "mausbox", "logs", "pull", "--port", port, "--timeout", "60",
                                 "--dest", str(tmp_path / "pulled"), "--store", str(tmp_path / "store.sqlite")],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        types = [x["type"] for x in records(root)]
        assert "game_end" not in types, "the game ended before the commands: the check proves nothing"

        end = time.monotonic() + 240
        while not [x for x in records(root) if x["type"] in ("game_end", "game_abort")] and time.monotonic() < end:
            assert sim.poll() is None, "the virtual unit stopped"
            time.sleep(0.5)
        types = [x["type"] for x in records(root)]
        assert "game_end" in types and "game_abort" not in types, types[-10:]
        out = pull.communicate(timeout=240)[0]  # it waited for the game's end, then pulled it whole
        assert pull.returncode == 0 and "a game is in progress: waiting for its end" in out and "1 pulled" in out, out
        pulled = next((tmp_path / "pulled").rglob("*.jsonl"))
        assert pulled.read_bytes() == sorted((root / "logs").glob("*.jsonl"))[-1].read_bytes()
    finally:
        sim.send_signal(signal.SIGTERM)
        try:
            sim.wait(timeout=20)
        except subprocess.TimeoutExpired:
            sim.kill()
