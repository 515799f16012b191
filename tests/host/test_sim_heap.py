"""`mausbox sim` runs the firmware in the board's heap (issue 15, item 7): on the 32-bit build its default is
the ESP32-WROOM-32's GC heap plus what the simulator itself holds (heapbudget.unit_heap), so a MemoryError
shows in the sim where the board would have one (a served unit, --serial, keeps 512k: run.board_heap says
why). Each game's largest scenario plays to its end through `mausbox sim` at that default (below);
tests/fw/test_unit_heap_*.py hold the firmware to its budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mausbox import cli, heapbudget
from mausbox.mpbuild import micropython_binary, micropython_words
from mausbox.sim import run as simrun

ON_32 = micropython_binary() is not None and micropython_words(micropython_binary() or "") == "32"


@pytest.mark.skipif(not ON_32, reason="no 32-bit MicroPython unix port (make setup)")
def test_the_default_heap_is_the_boards_plus_the_simulators_share():
    assert simrun.board_heap() == str(heapbudget.BOARD_HEAP + heapbudget.unit_share())


def test_a_64_bit_build_keeps_the_roomy_heap(tmp_path):
    exe = tmp_path / "micropython"
    exe.write_bytes(b"\x7fELF\x02" + bytes(59))  # a 64-bit ELF header: its objects are larger than a board's
    assert simrun.board_heap(binary=str(exe)) == simrun.DEFAULT_HEAP


@pytest.mark.parametrize("words", ["--scenario", "--replay"])
def test_sim_passes_the_default_to_the_firmware(monkeypatch, tmp_path, words):
    seen = {}
    path = tmp_path / "x.jsonl"
    path.write_text("")

    def fake_scenario(p, root, heap, echo=None):
        seen["heap"] = heap
        return 0, []

    def fake_replay(p, root, heap, as_json=False):
        seen["heap"] = heap
        return 0

    from mausbox.sim import replay as simreplay

    monkeypatch.setattr(simrun, "run_scenario", fake_scenario)
    monkeypatch.setattr(simreplay, "replay", fake_replay)
    cli.main(["sim", words, str(path), "--root", str(tmp_path / "unit")])
    assert seen["heap"] == simrun.board_heap()
    cli.main(["sim", words, str(path), "--root", str(tmp_path / "unit"), "--heap", "300k"])
    assert seen["heap"] == "300k"


@pytest.mark.skipif(not ON_32, reason="no 32-bit MicroPython unix port (make setup)")
@pytest.mark.parametrize("name", ["mg-6p-ties", "mim-c-5p", "mms-4p-full"])
def test_each_games_largest_scenario_plays_in_the_default_heap(tmp_path, name):
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / f"{name}.jsonl"
    proc = subprocess.run([sys.executable, "-m", "mausbox", "sim", "--scenario", str(scenario), "--root",
                           str(tmp_path / "unit"), "--json", "-v"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "MemoryError" not in proc.stdout + proc.stderr, proc.stdout[-2000:] + proc.stderr
    logs = sorted((tmp_path / "unit" / "logs").glob("*.jsonl"))
    types = [json.loads(x)["type"] for x in logs[0].read_text().splitlines()]
    assert types[0] == "game_start" and "game_end" in types, types[-5:]
