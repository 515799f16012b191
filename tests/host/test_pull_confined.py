"""Nothing a pull writes lands outside its folders: every component below `--dest` and the store's folder (the
unit's folder, the partial folders, the partial, temporary and final names) is opened without following a link,
and a planted link is refused with one line, the victim untouched (the real `mausbox logs pull`, against a unit
on a pty)."""

from __future__ import annotations

import os
import random

import pytest
from hostile import HELLO, Hostile, log_answers
from mausbox.cli import main
from test_logs_pull import make_log

LOG = make_log(random.Random(7), 40)
UNIT = HELLO["unit"]


def _pull(capsys, tmp_path, dest, store):
    dev = Hostile("answers", log_answers({"00001-mg.jsonl": LOG}))
    try:
        rc = main(["logs", "pull", "--port", dev.port, "--timeout", "2", "--store", str(store),
                   *(["--dest", str(dest)] if dest else [])])
    finally:
        dev.close()
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("where", ["unit folder", "raw folder", "partial folder", "partial unit folder",
                                   "partial file", "final name"])
def test_a_planted_link_is_refused_in_one_line(where, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    store = tmp_path / "store" / "s.sqlite"
    store.parent.mkdir()
    dest = tmp_path / "dest" if where in ("unit folder", "final name") else None
    at = {"unit folder": tmp_path / "dest" / UNIT,
          "raw folder": store.parent / "raw",
          "partial folder": store.parent / "partial",
          "partial unit folder": store.parent / "partial" / UNIT,
          "partial file": store.parent / "partial" / UNIT / "00001-mg.jsonl.part",
          "final name": tmp_path / "dest" / UNIT / "00001-mg.jsonl"}[where]
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(victim / "keep.txt" if where in ("partial file", "final name") else victim, at)
    rc, out, err = _pull(capsys, tmp_path, dest, store)
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"], list(victim.iterdir())
    assert (victim / "keep.txt").read_text() == "precious"
    assert at.is_symlink()
    assert rc != 0, (out, err)
    said = [ln for ln in (out + err).splitlines() if "symbolic link" in ln]
    assert len(said) == 1 and str(at) in said[0] and "refused" in said[0], out + err


def test_without_a_link_the_same_pull_lands_in_its_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store = tmp_path / "store" / "s.sqlite"
    rc, out, err = _pull(capsys, tmp_path, tmp_path / "dest", store)
    assert rc == 0, out + err
    assert (tmp_path / "dest" / UNIT / "00001-mg.jsonl").read_bytes() == LOG
    assert not list((store.parent / "partial" / UNIT).iterdir())
