"""`mausbox sim --web` as a user runs it: a real process that serves build/web/ (built first when missing) on
localhost and prints the address; Ctrl-C stops it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request


def test_sim_web_serves_the_page():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.Popen([sys.executable, "-m", "mausbox", "sim", "--web"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "http://127.0.0.1:" in line:
                break
        url = lines[-1].split("page: ", 1)[1].split()[0]
        assert proc.stdout.readline().startswith("no graphical browser here")
        with urllib.request.urlopen(url) as r:
            assert b'<canvas id="oled"' in r.read()
        with urllib.request.urlopen(url + "unit.json") as r:
            cfg = json.load(r)
        assert "maus/unit/core.mpy" in cfg["files"] and cfg["heap"] > cfg["board_heap"]
        with urllib.request.urlopen(url + "micropython.wasm") as r:
            assert r.headers["Content-Type"] == "application/wasm"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
