"""The virtual unit's watchdog: the ESP32's machine.WDT semantics (cannot be stopped or slowed, survives a soft
reset), kept fed through host sessions (mpremote, the raw REPL, Ctrl-C, soft reset) and still resetting a unit
whose app hangs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import serial
from conftest import FIRMWARE, FWTESTS, MAIN, run_micropython
from mausbox import heapbudget
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun
from mausbox.sim import tui as simtui
from mausbox.sim.serial import SerialUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")
MPREMOTE = str(Path(sys.executable).parent / "mpremote")


def test_watchdog_semantics_in_virtual_time(tmp_path):
    parts = tuple(heapbudget.sim_parts(FWTESTS / "wdtcheck.py", [FIRMWARE, FWTESTS]))
    # in a folder of its own: the board's watchdog start marks RTC memory, the virtual unit's file .rtcmem
    proc = run_micropython(FWTESTS / "wdtcheck.py", sim=parts, cwd=tmp_path)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert out.count("ok check_") == 4, out


def _on_unit(cwd: Path, code: str) -> str:
    script = cwd / "t.py"
    script.write_text(code)
    proc = run_micropython(script, cwd=cwd, sim=("world",))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.decode().strip()


def test_a_soft_reset_keeps_it_running(tmp_path):
    # One interpreter starts it (as the app does); the next, after a soft reset, finds it running in boot.py.
    assert MAIN.binary
    first = _on_unit(tmp_path, "from maus.sim import hw as sim\nsim._wdt.start(8000, None, True)\nprint('started')\n")
    assert first == "started" and json.loads((tmp_path / ".wdt").read_text())["ms"] == 8000
    assert _on_unit(tmp_path, "from maus.sim import hw as sim\nprint(sim.keep_watchdog(), sim._wdt.ms, sim._wdt.keep)") \
        == "True 8000 True"
    st = json.loads((tmp_path / ".wdt").read_text())
    st["fed_ms"] -= 9000  # not fed for 9 s: it would have reset the unit meanwhile, so nothing runs now
    (tmp_path / ".wdt").write_text(json.dumps(st))
    assert _on_unit(tmp_path, "from maus.sim import hw as sim\nprint(sim.keep_watchdog())") == "False"
    assert not (tmp_path / ".wdt").exists()


class RealTimeUnit:
    """The virtual unit on its pty in real time (control FIFO), its peripheral output drained."""

    def __init__(self, root: Path, main_py: str | None = None):
        simrun.prepare_root(root)
        if main_py is not None:
            (root / "main.py").write_text(main_py)
        self.fifo = simtui.Link(root)
        self.unit = SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env=self.fifo.env())
        self.root = root
        self._stop = False

    def __enter__(self):
        since = time.time() - 1
        self.unit.start()
        self._t = threading.Thread(target=self._pump, daemon=True)
        self._t.start()
        from mausbox.cmd_sim import wait_ready

        assert wait_ready(self.root, since, timeout=120), "the firmware did not boot"
        return self

    def _pump(self):
        while not self._stop:
            self.fifo.pump()
            time.sleep(0.02)

    def __exit__(self, *exc):
        self._stop = True
        self._t.join(timeout=5)
        self.unit.stop()


def _watch(port: str, seconds: float) -> bytes:
    """What the unit prints over `seconds` (a soft or hard reset would show)."""
    out = b""
    end = time.monotonic() + seconds
    with serial.Serial(port, timeout=0.2) as p:
        while time.monotonic() < end:
            out += p.read(4096)
    return out


def test_a_host_session_never_trips_it(tmp_path):
    with RealTimeUnit(tmp_path / "unit") as rt:
        unit = rt.unit
        assert (rt.root / ".wdt").exists()  # the app started it
        before = unit.resets
        # mpremote stops the app (Ctrl-C), soft-resets in the raw REPL (boot.py runs, main.py does not), runs
        # a command and leaves the unit at its REPL: with no app, only the keeper feeds the watchdog now
        r = subprocess.run([MPREMOTE, "connect", unit.pty_path, "exec", "import maus.sim.hw as s; print(s._wdt.ms, s._wdt.keep)"],
                           capture_output=True, timeout=120)
        assert r.returncode == 0 and r.stdout.split() == [b"8000", b"True"], r.stdout + r.stderr
        assert unit.resets == before + 1  # mpremote's soft reset
        seen = _watch(unit.pty_path, 30)  # half a minute at the REPL, far past the 8 s timeout
        assert b"task_wdt" not in seen and b"hard reset" not in seen, seen[-500:]
        assert unit.resets == before + 1
        r = subprocess.run([MPREMOTE, "connect", unit.pty_path, "resume", "eval", "1+1"], capture_output=True,
                           timeout=60)
        assert r.stdout.strip() == b"2", r.stdout + r.stderr
        assert (rt.root / ".wdt").exists()  # still running, kept fed: it was never stopped


HANG = """import os
import maus.unit

_step = maus.unit.Unit.step


def step(self):
    try:
        os.stat("hang")
    except OSError:
        return _step(self)
    print("HANGING")
    while True:  # a bug: the main loop never comes back
        pass


maus.unit.Unit.step = step
maus.unit.main()
"""


def test_a_hung_app_is_reset(tmp_path):
    with RealTimeUnit(tmp_path / "unit", main_py=HANG) as rt:
        unit = rt.unit
        before = unit.resets
        with serial.Serial(unit.pty_path, timeout=0.2) as p:
            (rt.root / "hang").write_text("")
            out = b""
            end = time.monotonic() + 120  # a ceiling for a loaded machine; the unit's own figure is below
            while b"hard reset" not in out and time.monotonic() < end:
                out += p.read(4096)
            os.remove(rt.root / "hang")  # the next boot runs normally
        assert b"HANGING" in out and b"task_wdt" in out and b"hard reset" in out, out[-800:]
        line = out[out.index(b"task_wdt"):].split(b"\n", 1)[0].decode()
        not_fed_ms = int(line.split("not fed for ")[1].split(" ms")[0])
        assert 8000 <= not_fed_ms < 10000, line  # reset within 10 s of the last feed
        assert unit.resets > before
