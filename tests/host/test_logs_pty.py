"""`mausbox logs pull` from the real firmware on a pty (tests/host/ptyunit.py): the app's host service streams
its logs while it runs. Line faults are tested in-process (test_logs_pull.py); here: whole pulls, a big log,
resuming a copy cut short, several units at once, and a port that is gone."""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from mausbox.cli import main
from mausbox.mpbuild import micropython_binary
from ptyunit import PtyUnit
from test_logs_pull import make_log, write_unit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


def test_pull_while_the_app_runs_then_nothing_new(tmp_path, capsys):
    rng = random.Random(1)
    logs = {"00001-mg.jsonl": make_log(rng, 1500), "00002-mms.jsonl": make_log(rng, 30),
            "00003-mim.jsonl": make_log(rng, 3)}
    assert len(logs["00001-mg.jsonl"]) > 100_000
    root = tmp_path / "unit"
    write_unit(root, logs)
    store = str(tmp_path / "s.sqlite")
    with PtyUnit(root, env={"MAUSBOX_UNIT_ID": "0a0b0c0d0e0f"}) as unit:
        assert main(["logs", "pull", "--port", unit.port, "--store", store, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out[0]["unit"] == "0a0b0c0d0e0f" and [x["status"] for x in out[0]["logs"]] == ["pulled"] * 3
        for name, data in logs.items():
            assert (tmp_path / "raw" / "0a0b0c0d0e0f" / name).read_bytes() == data
            assert (root / "logs" / (name + ".pulled")).read_text() == hashlib.sha256(data).hexdigest()
        assert main(["logs", "pull", "--port", unit.port, "--store", store]) == 0
        assert "0 pulled, 3 already here" in capsys.readouterr().out
        assert unit.alive() and "Traceback" not in unit.text()


def test_a_copy_cut_short_is_resumed(tmp_path, capsys):
    data = make_log(random.Random(2), 800)
    root = tmp_path / "unit"
    write_unit(root, {"00001-mg.jsonl": data})
    store = tmp_path / "s.sqlite"
    part = tmp_path / "partial" / "0a0b0c0d0e01" / "00001-mg.jsonl.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(data[:30_000])  # an earlier pull that lost the port here
    with PtyUnit(root, env={"MAUSBOX_UNIT_ID": "0a0b0c0d0e01"}) as unit:
        booted = len(unit.out)
        assert main(["logs", "pull", "--port", unit.port, "--store", str(store), "--json", "-v"]) == 0
        said = capsys.readouterr()
        sent = len(unit.out) - booted
    assert sent < len(data) - 25_000, (said, unit.text()[-3000:])  # only the rest came over the line
    assert (tmp_path / "raw" / "0a0b0c0d0e01" / "00001-mg.jsonl").read_bytes() == data
    assert not part.exists()


def test_pull_every_unit_at_once(tmp_path, monkeypatch, capsys):
    """`mausbox logs pull --all`: every running unit, one thread each."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    rng = random.Random(3)
    units, expect = [], {}
    for i, sizes in enumerate(([40, 200], [100], [5, 5, 5])):
        root = tmp_path / ("unit%d" % i)
        logs = {"%05d-mg.jsonl" % (10 * i + k + 1): make_log(rng, n) for k, n in enumerate(sizes)}
        write_unit(root, logs)
        uid = "5e1d000000a%d" % i
        expect[uid] = logs
        units.append(PtyUnit(root, env={"MAUSBOX_UNIT_ID": uid}))
    try:
        for u in units:
            u.start()
            u.register(tmp_path / "xdg")
        store = tmp_path / "store" / "logs.sqlite"
        rc = main(["logs", "pull", "--all", "--store", str(store), "--json"])
        out = json.loads(capsys.readouterr().out)
    finally:
        for u in units:
            u.stop()
    assert rc == 0 and len(out) == 3 and all(not r["error"] for r in out)
    pulled = sorted((r["unit"], x["name"]) for r in out for x in r["logs"] if x["status"] == "pulled")
    assert pulled == sorted((uid, n) for uid, logs in expect.items() for n in logs)
    for uid, logs in expect.items():
        for n, data in logs.items():
            assert (store.parent / "raw" / uid / n).read_bytes() == data
    assert main(["logs", "list", "--store", str(store), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 6


def test_a_port_that_is_gone(tmp_path, capsys):
    assert main(["logs", "pull", "--port", str(tmp_path / "no-such-port"), "--store", str(tmp_path / "s")]) == 3
    assert "does not exist" in capsys.readouterr().out
