"""`mausbox logs pull --watch`: three units plugged in one after another are each pulled the moment they appear
(the unit shows "logs copied"), a running table line each; Ctrl-C (SIGINT) ends it with a summary."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT
from mausbox.mpbuild import micropython_binary
from ptyunit import PtyUnit
from test_logs_pull import make_log, write_unit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


class Lines:
    """The watcher's stdout, line by line as it comes; wait() for a line holding a word (an event, no clock:
    the ceiling is only for a hung process)."""

    def __init__(self, proc):
        self.lines: list[str] = []
        self.cv = threading.Condition()
        self.t = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.t.start()

    def _read(self, proc) -> None:
        for line in proc.stdout:
            with self.cv:
                self.lines.append(line.rstrip("\n"))
                self.cv.notify_all()
        with self.cv:
            self.lines.append("<eof>")
            self.cv.notify_all()

    def wait(self, word: str, count: int = 1) -> list[str]:
        with self.cv:
            ok = self.cv.wait_for(lambda: sum(word in ln for ln in self.lines) >= count or "<eof>" in self.lines,
                                  timeout=300)
            assert ok and sum(word in ln for ln in self.lines) >= count, self.lines
            return list(self.lines)


def test_watch_pulls_three_units_as_they_come_and_sums_up_on_ctrl_c(tmp_path):
    rng = random.Random(7)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"), COLUMNS="200")
    store = tmp_path / "store" / "logs.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "mausbox", "logs", "pull", "--watch", "--store", str(store)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    out = Lines(proc)
    units = []
    try:
        out.wait("watching for units")
        for i in range(3):
            root = tmp_path / f"u{i}"
            write_unit(root, {"%05d-mg.jsonl" % (k + 1): make_log(rng, 30) for k in range(i + 1)})
            u = PtyUnit(root, env={"MAUSBOX_UNIT_ID": "5e1db13400c%d" % i})
            units.append(u)
            u.start()
            booted = _tones(u)
            u.register(tmp_path / "xdg")  # plugged in: the watcher sees it
            lines = out.wait("%d pulled" % (i + 1))
            assert any("5e1db13400c%d" % i in ln for ln in lines)
            _wait_for(lambda u=u, booted=booted: _tones(u) > booted)  # the unit beeped: "logs copied" (maus.settings.classroom op_copied)
        os.killpg(proc.pid, signal.SIGINT)
        lines = out.wait("summary:")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for u in units:
            u.stop()
    summary = [ln for ln in lines if ln.startswith("summary:")][0]
    assert "3 units, 6 logs pulled" in summary and "no problems" in summary
    for i in range(3):
        assert len(list((store.parent / "raw" / ("5e1db13400c%d" % i)).glob("*.jsonl"))) == i + 1
        assert (tmp_path / f"u{i}" / "logs" / "00001-mg.jsonl.pulled").exists()


def _tones(u) -> float:
    with u._lock:
        return getattr(u.fifo, "tone_at", 0.0)


def _wait_for(cond, ceiling: float = 120.0) -> None:
    end = time.monotonic() + ceiling  # a ceiling for a hung unit, not a speed limit
    while not cond():
        assert time.monotonic() < end, "the unit never beeped"
        time.sleep(0.05)
