"""`mausbox deploy` with the network unreachable: every module the firmware imports comes from this computer (the
SSD1306 driver is the project's own, maus/drivers/ssd1306.py), and the unit boots with its display. The deploy runs as
a real process whose every socket fails and is written down (a sitecustomize on its path), so the test proves no
network was tried, not only that none was needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mausbox.mpbuild import micropython_binary
from mausbox.sim.serial import SerialUnit

REPO = Path(__file__).resolve().parents[2]
SITE = '''
import os, socket
_LOG = os.environ["NET_LOG"]
def _refuse(*a, **k):
    with open(_LOG, "a") as f:
        f.write("socket %r\\n" % (a[:2],))
    raise OSError(101, "Network is unreachable (the offline deploy test)")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.getaddrinfo = _refuse
socket.create_connection = _refuse
'''


@pytest.mark.skipif(micropython_binary() is None, reason="needs the MicroPython unix port")
def test_deploy_offline_then_the_unit_boots_with_its_display(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE)
    log = tmp_path / "net.log"
    root = tmp_path / "unit"
    root.mkdir()
    (root / "settings.json").write_text("{}")
    env = dict(os.environ, NET_LOG=str(log),
               PYTHONPATH=os.pathsep.join([str(site), str(REPO / "host"), str(REPO / "firmware")]))
    # the patch works: a socket in that environment fails and is logged
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('micropython.org', 443))"],
                           env=env, capture_output=True, text=True)
    assert probe.returncode != 0 and "unreachable" in probe.stderr and log.read_text()
    log.unlink()
    with SerialUnit(root, heapsize="512k", extra_path=[]) as unit:  # the unit runs only what deploy put on it
        proc = subprocess.run([sys.executable, "-m", "mausbox", "deploy", "--port", unit.pty_path, "--json"],
                              env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report = json.loads(proc.stdout)
        assert report["ready"], report
        status = json.loads((root / "status.json").read_text())
    assert not log.exists(), log.read_text()  # no socket was even tried
    assert (root / "maus" / "drivers" / "ssd1306.mpy").is_file()
    assert not [p for p in status.get("problems", []) if p.startswith("display")], status
    assert not (root / "lib").exists()  # nothing from micropython-lib: no mip
