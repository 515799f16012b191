"""A classroom's names: `mausbox name set` on the real firmware (a pty unit), shown by `ports`, `doctor`,
`logs list`, the report and the pulled logs' folder; `class seats` kept on the unit and written into the next
game's start, so the report counts that game for the children who sat there; two units with one name flagged."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT
from mausbox.cli import main
from mausbox.mpbuild import micropython_binary
from ptyunit import PtyUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")
SCENARIO = ROOT / "tests" / "scenarios" / "mim-a-3p.jsonl"


def test_a_name_and_seats_go_round_and_into_the_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    root = tmp_path / "unit"
    uid = "5e1db1340001"
    with PtyUnit(root, env={"MAUSBOX_UNIT_ID": uid}) as unit:
        unit.register(tmp_path / "xdg")
        assert main(["name", "set", "Tisch 3", "--port", unit.port]) == 0
        assert "named 'Tisch 3'" in capsys.readouterr().out
        assert main(["name", "show", "--port", unit.port, "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == {"unit": uid, "name": "Tisch 3"}
        assert main(["ports", "--json"]) == 0
        assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["Tisch 3"]
        assert main(["ports"]) == 0
        assert "unit Tisch 3 (%s)" % uid in capsys.readouterr().out
        assert main(["doctor", "--port", unit.port]) == 0
        assert "Tisch 3 (unit %s)" % uid in capsys.readouterr().out
        # the seats by the unit's name, found among the connected units
        assert main(["class", "seats", "Tisch 3", "P1=Anna", "P2=Ben", "P3=Cleo"]) == 0
        assert "Tisch 3 (%s): P1=Anna, P2=Ben, P3=Cleo" % uid in capsys.readouterr().out
        assert main(["class", "seats", "Tisch 9", "P1=Anna"]) == 3
        assert "no connected unit is named 'Tisch 9'" in capsys.readouterr().err
        assert main(["name", "set", "x" * 17, "--port", unit.port]) == 2
        assert "16 characters" in capsys.readouterr().err
        assert unit.alive() and "Traceback" not in unit.text()
    assert (root / "name.txt").read_text() == "Tisch 3"
    # a game on that unit: its start records the name and the seats
    assert main(["sim", "--scenario", str(SCENARIO), "--root", str(root)]) == 0
    capsys.readouterr()
    start = json.loads(sorted((root / "logs").glob("*.jsonl"))[-1].read_text().splitlines()[0])
    assert start["name"] == "Tisch 3" and start["seats"] == {"1": "Anna", "2": "Ben", "3": "Cleo"}
    store = tmp_path / "store" / "logs.sqlite"
    with PtyUnit(root, env={"MAUSBOX_UNIT_ID": uid}, prepare=False) as unit:
        assert main(["logs", "pull", "--port", unit.port, "--store", str(store)]) == 0
        capsys.readouterr()
    link = store.parent / "raw" / ("Tisch 3 (%s)" % uid)
    assert link.is_symlink() and (link / sorted((root / "logs").glob("*.jsonl"))[-1].name).is_file()
    assert main(["logs", "list", "--store", str(store)]) == 0
    assert "Tisch 3 (5e1db134)" in capsys.readouterr().out
    assert main(["logs", "list", "--store", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["unit_name"] == "Tisch 3"
    assert main(["logs", "stats", "--store", str(store), "--json"]) == 0
    players = {p["name"] for p in json.loads(capsys.readouterr().out)["players"]}
    assert players == {"Anna", "Ben", "Cleo"}
    html = tmp_path / "class.html"
    assert main(["report", "--store", str(store), "-o", str(html)]) == 0
    text = html.read_text()
    assert "Tisch 3 (5e1db134)" in text and "Anna" in text and "Cleo" in text
    # the store rebuilt from its folders reads the id's folder only: the name's link adds no game twice
    assert main(["logs", "rebuild", "--store", str(store)]) == 0
    assert "1 game" in capsys.readouterr().out


def test_two_units_with_one_name_are_flagged(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    units = [PtyUnit(tmp_path / f"u{i}", env={"MAUSBOX_UNIT_ID": f"5e1db13400a{i}"}) for i in range(2)]
    try:
        for u in units:
            u.start()
            u.register(tmp_path / "xdg")
            assert main(["name", "set", "Tisch 1", "--port", u.port]) == 0
        capsys.readouterr()
        assert main(["ports"]) == 0
        assert capsys.readouterr().out.count("another unit has this name") == 2
        assert main(["name", "show", "--all"]) == 0
        assert capsys.readouterr().out.count("another unit is also named 'Tisch 1'") == 2
        assert main(["class", "seats", "Tisch 1", "P1=Anna"]) == 2
        assert "2 units are named 'Tisch 1'" in capsys.readouterr().err
    finally:
        for u in units:
            u.stop()
