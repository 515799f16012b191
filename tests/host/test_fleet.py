"""`--all` on the commands that talk to one unit: every connected unit at once, one process each, a table of
name, result and time; a unit that fails is its row and never stops the others (mausbox/fleet.py)."""

from __future__ import annotations

import json

import pytest
from mausbox.cli import main
from mausbox.mpbuild import micropython_binary
from ptyunit import PtyUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


def test_every_unit_at_once_and_one_failure_stops_none(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    units = [PtyUnit(tmp_path / f"u{i}", env={"MAUSBOX_UNIT_ID": f"5e1db13400b{i}"}) for i in range(2)]
    try:
        for i, u in enumerate(units):
            u.start()
            u.register(tmp_path / "xdg")
            assert main(["name", "set", f"Tisch {i + 1}", "--port", u.port]) == 0
        capsys.readouterr()
        # a third port that is gone: its row fails, the others go on
        ports = [u.port for u in units] + [str(tmp_path / "gone")]
        monkeypatch.setattr("mausbox.fleet.all_ports", lambda: ports)
        assert main(["config", "set", "volume", "1", "--all", "--json"]) != 0
        rows = json.loads(capsys.readouterr().out)
        assert [(r["name"], r["ok"]) for r in rows] == [("Tisch 1", True), ("Tisch 2", True), (None, False)]
        for u in units:
            assert json.loads((u.root / "settings.json").read_text())["volume"] == 1
        assert main(["doctor", "--all"]) != 0
        out = capsys.readouterr().out
        assert "Tisch 1 (5e1db13400b0)" in out and "Tisch 2 (5e1db13400b1)" in out and "FAILED" in out
        assert "2 of 3 units ok, 1 failed" in out
        assert main(["clock", "set", "--all", "--port", units[0].port]) == 2
        assert "--all or --port" in capsys.readouterr().err
        for u in units:
            assert u.alive() and "Traceback" not in u.text()
    finally:
        for u in units:
            u.stop()
