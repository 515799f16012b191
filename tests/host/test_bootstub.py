"""The boot stub (firmware/main.py) on its own: every kind of boot failure counts from its first lines (a broken or
missing module, a corrupt board.json, an exception at import), three in a row start safe mode whatever is broken,
a clean end clears the count, status.json names the boot it describes, and a hang at boot is ended by the
watchdog the stub starts and counted (the virtual unit in real time)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import serial
from conftest import MAIN
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


def _rtc(root: Path) -> tuple[int, str]:
    data = (root / ".rtcmem").read_bytes()
    assert len(data) >= 7 and data[1] == 0xA5, data
    return data[0], data[3:7].hex()


def _boot(root: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """One boot: main.py run by the 32-bit port as the virtual unit runs it (ROOT as the board's flash)."""
    return subprocess.run([MAIN.binary, "-X", f"heapsize={simrun.DEFAULT_HEAP}", "main.py"], cwd=root,
                          capture_output=True, timeout=300, env=simrun.firmware_env(root, **(env or {})))


def _breakers():
    def bad_mpy(root):
        (root / "maus" / "unit" / "__init__.mpy").write_bytes(b"M\x06garbage")  # a corrupt deploy

    def missing(root):
        (root / "maus" / "unit" / "core.mpy").unlink()  # an ImportError inside main()

    def raising(root):
        (root / "maus" / "checks" / "selftest.mpy").unlink()
        (root / "maus" / "checks" / "selftest.py").write_text("raise RuntimeError('broken at import')\n")

    def board(root):
        (root / "board.json").write_text('{"name": "sim", "family": ')  # a corrupt board file

    def no_maus(root):
        (root / "maus" / "__init__.mpy").write_bytes(b"")  # even the package is broken

    return {"bad .mpy": bad_mpy, "missing module": missing, "raising at import": raising, "corrupt board.json": board,
            "broken package": no_maus}


@pytest.mark.parametrize("kind", list(_breakers()))
def test_every_boot_failure_counts_and_three_start_safe_mode(tmp_path, kind):
    root = simrun.prepare_root(tmp_path / "unit")
    _breakers()[kind](root)
    ids = set()
    for n in (1, 2, 3):
        r = _boot(root)
        assert r.returncode != 0 and b"Traceback" in r.stdout + r.stderr, (kind, r.stdout, r.stderr)
        count, boot = _rtc(root)
        assert count == n, (kind, n, r.stdout + r.stderr)
        ids.add(boot)
    assert len(ids) == 3  # each boot has its own id
    r = _boot(root)
    out = r.stdout.decode()
    assert r.returncode == 0 and "MAUSBOX SAFE MODE: 3 crashes in a row" in out, (kind, out, r.stderr)
    count, boot = _rtc(root)
    assert count == 3  # safe mode is no crash of its own
    if kind in ("corrupt board.json", "missing module", "raising at import"):  # maus.unit itself imports
        st = json.loads((root / "status.json").read_text())
        assert st["safe_mode"] is True and st["crashes"] == 3 and st["boot"] == boot, st


def test_a_clean_boot_clears_the_count_and_status_names_its_boot(tmp_path):
    root = simrun.prepare_root(tmp_path / "unit")
    (root / ".rtcmem").write_bytes(bytes((2, 0xA5)))  # two crashes before (an older layout: no boot id)
    scen = tmp_path / "idle.jsonl"
    scen.write_text('{"at_ms": 500, "tap": "game/mms"}\n{"at_ms": 900, "remove": "game/mms"}\n')
    r = _boot(root, {"MAUSBOX_SIM_SCENARIO": str(scen)})
    assert r.returncode == 0 and b"MAUSBOX READY" in r.stdout, r.stdout + r.stderr
    count, boot = _rtc(root)
    assert count == 0  # the app ended cleanly
    assert json.loads((root / "status.json").read_text())["boot"] == boot


HANG_HOOK = """# test hook: the boot hangs once (the file `hang`), as a firmware bug in a boot step would
import os

import maus.hw

maus.hw.keep_watchdog()
try:
    os.stat("hang")
    os.remove("hang")
    import maus.checks.selftest

    def _hang(unit):
        print("HANGING AT BOOT")
        while True:
            pass

    maus.checks.selftest.boot = _hang
except OSError:
    pass
"""


def test_a_hang_at_boot_is_reset_by_the_watchdog_and_counted(tmp_path):
    from test_watchdog import RealTimeUnit

    root = tmp_path / "unit"
    with RealTimeUnit(root) as rt:
        unit = rt.unit
        (root / "boot.py").write_text(HANG_HOOK)
        (root / "hang").write_text("")
        rtc = (root / ".rtcmem").read_bytes()
        (root / ".rtcmem").write_bytes(bytes((0, 0xA5)) + rtc[2:])  # as if the first boot had run healthy
        before = unit.resets
        with serial.Serial(unit.pty_path, timeout=0.2) as p:
            unit.reset()  # the EN button: a hard reset, RTC memory kept
            out = b""
            end = time.monotonic() + 180  # a ceiling for a loaded machine, not a speed figure
            while out.count(b"MAUSBOX READY") < 1 and time.monotonic() < end:
                out += p.read(4096)
        assert b"HANGING AT BOOT" in out and b"task_wdt" in out, out[-1500:]
        assert out.index(b"task_wdt") < out.index(b"MAUSBOX READY"), out[-1500:]
        assert unit.resets >= before + 2
        count, _ = _rtc(root)
        assert count == 2  # the hung boot, and this one until it runs healthy
