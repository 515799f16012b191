"""The unit shell on the virtual unit, in virtual time: boot self-test and status.json, a button held at boot,
the latency self-test through the sim board's jumper, and the crash counter of a healthy run.

The firmware runs as deployed (compiled to .mpy in a flash folder) on the MicroPython unix port with the
virtual unit's heap, `simrun.DEFAULT_HEAP`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from mausbox.cmd_doctor import PIEZO_RANGE
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun
from scenariokit import live_records

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


@pytest.fixture(scope="module")
def firmware(tmp_path_factory):
    return simrun.prepare_root(tmp_path_factory.mktemp("firmware"))


@pytest.fixture
def root(tmp_path, firmware):
    dest = tmp_path / "unit"
    shutil.copytree(firmware, dest)
    return dest


def run_on_unit(root: Path, script: str, timeout: float = 60) -> str:
    """Run a script in the unit's folder, with the firmware on its path; returns what it printed."""
    (root / "t.py").write_text(script)
    exe = micropython_binary()
    assert exe is not None
    r = subprocess.run([exe, "-X", f"heapsize={simrun.DEFAULT_HEAP}", "t.py"], cwd=root, capture_output=True,
                       timeout=timeout, env=simrun.firmware_env(root))
    assert r.returncode == 0, (r.stdout + r.stderr).decode(errors="replace")[-3000:]
    return r.stdout.decode()


def scenario(root: Path, lines: list[dict]) -> tuple[int, list[str]]:
    path = root.parent / "scenario.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in lines))
    return simrun.run_scenario(path, root, timeout=120)


def records(log: Path) -> list[dict]:
    return live_records(log)


# -- boot self-test ---------------------------------------------------------------------------------------

def test_status_json_and_a_button_held_at_boot(root):
    import maus

    rc, lines = scenario(root, [
        {"at_ms": 0, "press": 3},  # held while the unit boots
        {"at_ms": 500, "tap": "game/mms"},
        {"at_ms": 900, "remove": "game/mms"},
        {"at_ms": 1000, "press": 1}, {"at_ms": 1080, "release": 1},
        {"at_ms": 2000, "release": 3},  # let go: from now on it is a button again
        {"at_ms": 2500, "press": 3}, {"at_ms": 2580, "release": 3},
        {"at_ms": 3000, "tap": "game/mms"},  # the game card again: start
        {"at_ms": 4000, "remove": "game/mms"},
    ])
    assert rc == 0, "\n".join(lines[-20:])
    st = json.loads((root / "status.json").read_text())
    assert st["version"] == maus.VERSION and st["board"] == "sim" and st["safe_mode"] is False
    assert st["rfid_version"] == 0x92  # the emulated MFRC522 v2.0
    assert PIEZO_RANGE[0] <= st["piezo_baseline"] <= PIEZO_RANGE[1]
    assert st["stuck"] == [3]
    assert st["problems"] == ["buttons held at boot (stuck, ignored until released): [3]"]
    assert "SELFTEST buttons held at boot (stuck, ignored until released): [3]" in lines
    assert any(ln.startswith("SAY Taste 3 klemmt") for ln in lines), lines[:10]
    assert lines.index("MAUSBOX READY %s" % maus.VERSION) > 0
    # ignored while held, a button again once released: players 1 and 3 joined
    log = simrun.logs_in(root)[-1]
    start = records(log)[0]
    assert start["type"] == "game_start" and [p["id"] for p in start["players"]] == [1, 3]


def test_a_healthy_boot_reports_no_problems(root):
    rc, lines = scenario(root, [{"at_ms": 100, "noise": 0.0}])
    assert rc == 0, "\n".join(lines[-20:])
    st = json.loads((root / "status.json").read_text())
    assert st["stuck"] == [] and st["problems"] == [] and st["rfid_version"] == 0x92
    assert not [ln for ln in lines if ln.startswith("SELFTEST")]


# -- latency self-test ------------------------------------------------------------------------------------

LATENCY = """import gc, json
import maus.unit
from maus.checks import latency
from maus.hw import load_board, open_hardware

board = load_board()
hw = open_hardware(board)
unit = maus.unit.Unit(hw)
unit.capture.start()
t0 = hw.world.now
res = latency.latency(hw, unit, 100)
out = {"jumper": res, "settle_us": unit.capture.settle_us, "virtual_ms": (hw.world.now - t0) // 1000,
       "pin1": hw.buttons[0].value()}
del unit, hw
gc.collect()
parts = dict(board["parts"])
del parts["jumper"]
board["parts"] = parts
hw = open_hardware(board)
unit = maus.unit.Unit(hw)
unit.capture.start()
out["none"] = latency.latency(hw, unit, 10)
print(json.dumps(out))
"""


def test_latency_self_test_through_the_jumper(root):
    out = json.loads(run_on_unit(root, LATENCY).strip().splitlines()[-1])
    res = out["jumper"]
    assert res["n"] == 100  # every toggle captured
    assert 0 <= res["min"] <= res["med"] <= res["p99"] <= res["max"]
    # on the simulated scheduler the edge is taken at the next bytecode boundary: no more than the
    # settle time (the loop waits for it), never negative
    assert res["max"] <= out["settle_us"]
    assert out["pin1"] == 1  # the jumper is left high: player 1's button is released
    assert out["none"] is None  # a board without the jumper: no test


def test_latency_test_from_the_menu(root):
    # player 1: five clicks to "latency test", then a long press runs it; the result goes to the display
    acts = []
    for k in range(5):
        acts += [{"at_ms": 1000 + 600 * k, "press": 1}, {"at_ms": 1080 + 600 * k, "release": 1}]
    acts.append({"at_ms": 4500, "hold": 1, "ms": 1200})
    rc, lines = scenario(root, acts)
    assert rc == 0, "\n".join(lines[-20:])
    menu = [ln for ln in lines if ln.startswith("SAY Waehlen")]
    assert "Latenztest" in menu[-1], menu
    done = [ln for ln in lines if ln.startswith("SAY Erfassung us")]
    assert len(done) == 1, lines[-15:]
    m = re.search(r"min (\d+) med (\d+) \| p99 (\d+) \| max (\d+)", done[0])
    assert m, done[0]
    lo, med, p99, hi = map(int, m.groups())
    assert 0 <= lo <= med <= p99 <= hi <= 3000


# -- the crash counter -------------------------------------------------------------------------------------

HEALTHY = """import maus.unit
from maus.hw import load_board, open_hardware

hw = open_hardware(load_board())
maus.unit._crash_count(hw, 2)  # two crashes in a row before this boot
unit = maus.unit.Unit(hw)
seen = {}


def until():
    t = hw.ticks_ms()
    seen.setdefault(t // 1000, maus.unit._crash_count(hw))
    return t > 32000


unit.run(until=until)
print(sorted(seen.items()))
"""


def test_a_healthy_run_clears_the_crash_counter(root):
    seen = dict(eval(run_on_unit(root, HEALTHY).strip().splitlines()[-1]))  # noqa: S307 - our own output
    assert seen[0] == 2 and seen[29] == 2  # still counted after 29 s
    assert seen[31] == 0 and seen[32] == 0  # 30 s of a healthy main loop: cleared


# -- the logs folder: strays and a short flash ---------------------------------------------------------------

SHORT_FLASH = """import sys
import maus.log.store
import maus.unit
from maus.hw import load_board, open_hardware

maus.log.store.LogStore.free = lambda self: 20000  # the flash has less than a game's log may need
hw = open_hardware(load_board(), scenario=sys.argv[1])
maus.unit.main(hw=hw)
"""


def test_strays_are_reported_and_a_short_flash_is_said_before_the_game(root):
    (root / "logs").mkdir(exist_ok=True)
    (root / "logs" / "9999999999-mms.jsonl").write_text("not ours\n")
    (root / "logs" / "notes.txt").write_text("a teacher's notes\n")
    path = root.parent / "scenario.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in [
        {"at_ms": 500, "tap": "game/mms"}, {"at_ms": 900, "remove": "game/mms"},
        {"at_ms": 1000, "press": 1}, {"at_ms": 1080, "release": 1},
        {"at_ms": 1500, "press": 2}, {"at_ms": 1580, "release": 2},
        {"at_ms": 3000, "tap": "game/mms"}, {"at_ms": 4000, "remove": "game/mms"}]))
    (root / "t.py").write_text(SHORT_FLASH)
    r = subprocess.run([micropython_binary(), "-X", f"heapsize={simrun.DEFAULT_HEAP}", "t.py", str(path)], cwd=root,
                       capture_output=True, timeout=120, env=simrun.firmware_env(root))
    out = r.stdout.decode()
    assert r.returncode == 0, (out + r.stderr.decode())[-3000:]
    st = json.loads((root / "status.json").read_text())
    assert [p for p in st["problems"] if p.startswith("logs: 2 file(s) in logs/ are not logs of this unit")], st
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("EV ") and '"game_start"' in ln)
    said = [i for i, ln in enumerate(lines) if ln.startswith("SAY Speicher voll:")]
    assert said and said[0] > start and "LOG short" in out, lines[-30:]
    # said before the game's own first prompt, and the game still numbered in the unit's sequence
    game_says = [i for i, ln in enumerate(lines) if ln.startswith("SAY ") and i > said[0]]
    assert game_says, lines[-30:]
    assert [p.name for p in simrun.logs_in(root) if not p.name.startswith("99")] == ["00001-mms.jsonl"]
    assert (root / "logs" / "notes.txt").exists()
