"""`mausbox logs import` as a user runs it on logs that came from the web page: a tar of a unit's logs/ folder
(the page's download) or single .jsonl files; checked as a pull checks them, each bad one refused in a line."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from mausbox.sim import run as simrun

SCEN = Path(__file__).resolve().parents[1] / "scenarios"


def mausbox(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mausbox", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def a_log(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("unit")
    rc, lines = simrun.run_scenario(SCEN / "mim-a-3p.jsonl", root)
    assert rc == 0, lines[-10:]
    return simrun.logs_in(root)[0]


def test_import_a_tar_then_report(a_log, tmp_path):
    tar = tmp_path / "mausbox-logs.tar"
    with tarfile.open(tar, "w") as tf:
        tf.add(a_log, arcname="logs/" + a_log.name)
    store = str(tmp_path / "s.sqlite")
    r = mausbox("logs", "import", str(tar), "--store", store, "--json")
    assert r.returncode == 0, r.stderr
    (res,) = json.loads(r.stdout)
    assert res["new"] and not res["damage"] and res["error"] is None
    uid = json.loads(a_log.read_text().splitlines()[0])["unit"]
    assert res["unit"] == uid and Path(res["path"]).read_bytes() == a_log.read_bytes()
    again = mausbox("logs", "import", str(a_log), "--store", store)
    assert again.returncode == 0 and "already here" in again.stdout
    lst = mausbox("logs", "list", "--store", store, "--json")
    assert [g["name"] for g in json.loads(lst.stdout)] == [a_log.name]
    rep = mausbox("report", "--store", store, "-o", str(tmp_path / "c.html"))
    assert rep.returncode == 0 and "(1 game)" in rep.stdout


def test_bad_files_are_refused_in_a_line(a_log, tmp_path):
    store = str(tmp_path / "s.sqlite")
    odd = tmp_path / "notes.jsonl"
    odd.write_bytes(a_log.read_bytes())
    r = mausbox("logs", "import", str(odd), "--store", store)
    assert r.returncode == 1 and "REFUSED: not a unit's log name" in r.stdout
    junk = tmp_path / "00009-mg.jsonl"
    junk.write_text('{"hello": 1}\n')
    r = mausbox("logs", "import", str(junk), "--store", store)
    assert r.returncode == 1 and "REFUSED: no game_start record" in r.stdout
    cut = tmp_path / "00010-mim.jsonl"
    cut.write_bytes(a_log.read_bytes()[:-40])  # the last record cut short: damage reported, the copy kept
    r = mausbox("logs", "import", str(cut), "--store", store)
    assert r.returncode == 1 and "damaged:" in r.stdout and "imported" in r.stdout
    r = mausbox("logs", "import", str(tmp_path / "missing.tar"), "--store", store)
    assert r.returncode == 2 and r.stderr.strip().endswith("no such file") and len(r.stderr.strip().splitlines()) == 1
