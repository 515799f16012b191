"""`mausbox doctor --hardware` on a virtual unit built right and built wrong: the bring-up check (maus.checks.bringup) walks a
person through every part, and each fault (faults at the pin and bus level: MAUSBOX_SIM_FAULTS, maus/sim/hw.py) is
named with its pins from the board file. The person is this test: it reads the prompts doctor prints and presses,
taps and knocks on the virtual unit's control channel, as a person at the table would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mausbox.mpbuild import micropython_binary
from ptyunit import PtyUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="needs the MicroPython unix port")
REPO = Path(__file__).resolve().parents[2]


def _doctor_hardware(unit: PtyUnit, person_presses=True) -> tuple[int, str]:
    """Run `mausbox doctor --hardware` as a process; act on each prompt it prints. -> (exit code, output)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "host") + os.pathsep + str(REPO / "firmware"))
    proc = subprocess.Popen([sys.executable, "-m", "mausbox", "doctor", "--hardware", "--port", unit.port],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = []
    assert proc.stdout is not None
    for line in proc.stdout:
        out.append(line)
        m = re.search(r"press P(\d)'s button", line)
        if m and person_presses:
            unit.send({"press": int(m.group(1))})
            time.sleep(0.3)
            unit.send({"release": int(m.group(1))})
        elif "tap any card" in line:
            unit.send({"tap": "mg/mouse/07"})
        elif "knock the castle" in line:
            unit.send({"knock": 0.6, "ms": 40})
    return proc.wait(timeout=600), "".join(out)


def _parts(root: Path) -> dict:
    with open(root / "bringup.json") as f:
        return {p["part"]: p for p in json.load(f)["parts"]}


def test_a_unit_built_right_passes_every_part(tmp_path):
    with PtyUnit(tmp_path / "unit") as unit:
        rc, out = _doctor_hardware(unit)
        parts = _parts(tmp_path / "unit")
    assert rc == 0, out
    assert all(parts[f"button{p}"]["result"] == "ok" for p in range(1, 7)), out
    assert parts["card"]["result"] == "ok" and "NTAG213" in parts["card"]["detail"], out
    assert parts["piezo"]["result"] == "ok" and parts["oled"]["result"] == "look", out
    assert parts["leds"]["result"] == "look" and parts["buzzer"]["result"] == "look", out
    assert parts["latency"]["result"] == "ok", out
    assert "bring-up: every part works" in out


def test_each_fault_is_named_with_its_pins(tmp_path):
    # boards/sim.json (the pins of esp32-devkitc-6p): buttons on GPIO 13, 14, 27, 33, 32, 35, the reader on SCK 18,
    # MOSI 23, MISO 19, CS 17, RST 16, the OLED on SDA 21 / SCL 22, the piezo on 34.
    with PtyUnit(tmp_path / "unit", env={"MAUSBOX_SIM_FAULTS": "no-reader,swap-buttons,no-display,piezo-high"}) as unit:
        rc, out = _doctor_hardware(unit)
        parts = _parts(tmp_path / "unit")
        # The summary saved on the unit is pulled with the logs, checked as a log is, and kept beside them.
        env = dict(os.environ, PYTHONPATH=str(REPO / "host") + os.pathsep + str(REPO / "firmware"))
        pulled = subprocess.run([sys.executable, "-m", "mausbox", "logs", "pull", "--port", unit.port, "--store",
                                 str(tmp_path / "host" / "logs.sqlite"), "--json"],
                                capture_output=True, text=True, env=env, timeout=300)
    got = json.loads(pulled.stdout)[0]["bringup"]
    assert got["status"] == "pulled" and got["detail"] == "5 part(s) failed", pulled.stdout + pulled.stderr
    kept = Path(got["path"])
    assert kept.name == "bringup.json" and kept.parent.parent == tmp_path / "host" / "raw", kept
    assert kept.read_bytes() == (tmp_path / "unit" / "bringup.json").read_bytes()
    assert rc == 1, out
    b1, b2 = parts["button1"], parts["button2"]
    assert b1["result"] == "FAIL" and "GPIO 14" in b1["detail"] and "swapped" in b1["hint"], out
    assert b2["result"] == "FAIL" and "GPIO 13" in b2["detail"], out
    assert parts["button3"]["result"] == "ok", out
    card = parts["card"]
    assert card["result"] == "FAIL" and "RFID reader not found" in card["detail"], out
    assert "SCK 18, MOSI 23, MISO 19, CS 17, RST 16" in card["hint"], out
    oled = parts["oled"]
    assert oled["result"] == "FAIL" and "SDA (GPIO 21)" in oled["hint"] and "SCL (GPIO 22)" in oled["hint"], out
    pz = parts["piezo"]
    assert pz["result"] == "FAIL" and "stuck high" in pz["detail"] and "GPIO 34" in pz["hint"], out
    assert "!!  card" in out and "4 part(s) failed" not in out  # five: both swapped buttons, reader, display, piezo
    assert "5 part(s) failed" in out, out


def test_no_reader_fails_the_boot_self_test_on_the_display_and_in_doctor(tmp_path):
    with PtyUnit(tmp_path / "unit", env={"MAUSBOX_SIM_FAULTS": "no-reader"}) as unit:
        env = dict(os.environ, PYTHONPATH=str(REPO / "host") + os.pathsep + str(REPO / "firmware"))
        proc = subprocess.run([sys.executable, "-m", "mausbox", "doctor", "--port", unit.port], capture_output=True,
                              text=True, env=env, timeout=300)
        screen = (tmp_path / "unit" / "status.json").read_text()
        printed = bytes(unit.out).decode("utf-8", "replace")
    assert proc.returncode == 1, proc.stdout
    assert "RFID reader not found: check SPI wiring, pins SCK 18, MOSI 23, MISO 19, CS 17, RST 16" in proc.stdout
    assert '"rfid_ok": false' in screen
    assert "SAY RFID reader | not found:" in printed or "RFID reader not" in printed, printed[-2000:]


def test_doctor_names_the_chip_or_the_pins():
    from mausbox.cmd_doctor import diagnose

    base = {"version": "1.0", "board": "sim", "free_bytes": 1 << 20, "piezo_baseline": 30000, "stuck": []}
    clone = {f["check"]: f for f in diagnose(dict(base, rfid_version=0x89, rfid_chip="FM17522E", rfid_ok=True),
                                             "1.28.0", None, "1.0")}
    assert clone["rfid"]["ok"] and clone["rfid"]["detail"] == "reader version 0x89 (FM17522E)"
    gone = {f["check"]: f for f in diagnose(dict(base, rfid_version=0, rfid_chip="none", rfid_ok=False, problems=[
        "rfid: RFID reader not found: check SPI wiring, pins SCK 18, MOSI 23, MISO 19, CS 17, RST 16"]),
        "1.28.0", None, "1.0")}
    assert not gone["rfid"]["ok"] and "pins SCK 18, MOSI 23, MISO 19, CS 17, RST 16" in gone["rfid"]["detail"]
