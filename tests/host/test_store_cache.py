"""The log store is a cache of the folders of pulled logs: rebuilt when it is missing or damaged (in any of the
ways a file gets damaged), checked row by row against the log files, and it says in one line what it did."""

from __future__ import annotations

import json
import os
import random
import sqlite3

import loopback
import pytest
from mausbox import logpull
from mausbox.cli import main
from mausbox.store import Store
from test_logs_pull import make_log, write_unit


def _unit_logs(n=5, seed=3):
    rng = random.Random(seed)
    return {"%05d-mg.jsonl" % (i + 1): make_log(rng, 40 + 20 * i) for i in range(n)}


def _pull(tmp_path, store, dest=None):
    link, _ser = loopback.link(tmp_path / "unit")
    return logpull.pull_unit(link, store, dest)


def _listed(capsys, store_path) -> tuple[list[str], str]:
    assert main(["logs", "list", "--json", "--store", str(store_path)]) == 0
    out = capsys.readouterr()
    return sorted(g["name"] for g in json.loads(out.out)), out.err


@pytest.fixture
def pulled(tmp_path, capsys):
    """A unit with five logs, all pulled (and marked pulled on the unit) into a fresh store."""
    write_unit(tmp_path / "unit", _unit_logs())
    path = tmp_path / "store" / "logs.sqlite"
    st = Store.open(path)
    res = _pull(tmp_path, st)
    assert res.ok and sum(o.status == "pulled" for o in res.outcomes) == 5
    st.close()
    capsys.readouterr()
    return path


NAMES = ["%05d-mg.jsonl" % (i + 1) for i in range(5)]


def test_a_removed_store_is_rebuilt_and_a_re_pull_sees_every_game(pulled, tmp_path, capsys):
    pulled.unlink()
    names, err = _listed(capsys, pulled)
    assert names == NAMES
    assert len(err.strip().splitlines()) == 1 and "was missing" in err and "rebuilt" in err and "5 games" in err
    pulled.unlink()  # and through a pull: the unit says they are pulled already, the store still has them all
    st = Store.open(pulled)
    res = _pull(tmp_path, st)
    assert [o.status for o in res.outcomes] == ["skipped"] * 5
    assert sorted(g.name for g in st.games()) == NAMES
    st.close()
    names, err = _listed(capsys, pulled)
    assert names == NAMES and err == ""  # nothing to do: nothing said


def _random_middle(p, rng):
    b = bytearray(p.read_bytes())
    at = len(b) // 2 - 2048
    b[at:at + 4096] = rng.randbytes(4096)
    p.write_bytes(bytes(b))


def _old_format(p, rng):
    db = sqlite3.connect(p)
    db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    db.commit()
    db.close()


DAMAGE = {
    "random 4 KB in the middle": _random_middle,
    "cut in half": lambda p, rng: p.write_bytes(p.read_bytes()[:len(p.read_bytes()) // 2]),
    "zero bytes": lambda p, rng: p.write_bytes(b""),
    "not a database": lambda p, rng: p.write_text("hello, I am a text file\n" * 100),
    "first page zeroed": lambda p, rng: p.write_bytes(b"\0" * 4096 + p.read_bytes()[4096:]),
    "an older format": _old_format,
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_store_is_kept_aside_and_rebuilt(kind, pulled, capsys):
    DAMAGE[kind](pulled, random.Random(kind))
    names, err = _listed(capsys, pulled)
    assert names == NAMES, kind
    assert len(err.strip().splitlines()) == 1 and "rebuilt" in err and "5 games" in err, err
    if kind != "zero bytes":  # an empty file is a missing store
        assert "damaged" in err or "format" in err
        assert list(pulled.parent.glob("logs.sqlite.damaged-*"))
    assert Store.open(pulled).notes == []  # the new one is sound


def test_rows_are_checked_against_their_log_files(pulled, capsys):
    db = sqlite3.connect(pulled)
    gid = db.execute("SELECT id FROM games WHERE name='00002-mg.jsonl'").fetchone()[0]
    # A row changed in place (the file stays a sound database): found by the rows' digest when read
    db.execute("UPDATE events SET data=replace(data, 'press', 'prass') WHERE game_id=? AND seq=3", (gid,))
    # Rows lost: found by the count when the store is opened
    g3 = db.execute("SELECT id FROM games WHERE name='00003-mg.jsonl'").fetchone()[0]
    db.execute("DELETE FROM events WHERE game_id=? AND seq>5", (g3,))
    db.commit()
    db.close()
    st = Store.open(pulled)
    assert len(st.notes) == 1 and "1 re-read" in st.notes[0]
    g = st.find("00002-mg.jsonl")
    evs = st.events(g.id)
    assert all(e["type"] != "prass" for e in evs) and len(evs) == g.records
    assert len(st.notes) == 2 and "damaged" in st.notes[1]
    g3 = st.find("00003-mg.jsonl")
    assert len(st.events(g3.id)) == g3.records
    st.close()
    assert main(["logs", "show", "00002", "--store", str(pulled)]) == 0
    assert "prass" not in capsys.readouterr().out


def test_the_folder_is_the_truth_files_added_and_removed(pulled, tmp_path, capsys):
    raw = pulled.parent / "raw"
    unit_dir = next(raw.iterdir())
    (unit_dir / "00001-mg.jsonl").unlink()
    (unit_dir / "00009-mg.jsonl").write_bytes(make_log(random.Random(9), 30))
    (unit_dir / "notes.txt").write_text("not a log")
    (raw / "..evil").mkdir()
    names, err = _listed(capsys, pulled)
    assert names == NAMES[1:] + ["00009-mg.jsonl"]
    assert len(err.strip().splitlines()) == 1 and "1 new" in err and "1 whose file is gone" in err


def test_a_pull_to_another_folder_is_remembered_and_rebuild_says_what_it_did(tmp_path, capsys):
    write_unit(tmp_path / "unit", _unit_logs(3))
    path = tmp_path / "store" / "logs.sqlite"
    dest = tmp_path / "elsewhere"
    st = Store.open(path, folders=[dest])
    assert _pull(tmp_path, st, dest).ok
    st.close()
    os.remove(path)
    names, err = _listed(capsys, path)
    assert names == NAMES[:3] and str(dest) in err
    assert main(["logs", "rebuild", "--store", str(path)]) == 0
    out = capsys.readouterr()
    assert out.out.count("\n") == 1 and "3 games" in out.out and str(dest) in out.out


# --- a --store that cannot be a store: one line, exit 2, nothing renamed -------------------------------------
def _refused(capsys, store_arg) -> str:
    assert main(["logs", "list", "--store", str(store_arg)]) == 2
    out = capsys.readouterr()
    assert out.out == "", out.out
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.err, out.err
    return lines[0]


def test_a_folder_as_the_store_is_refused_and_left_alone(tmp_path, capsys):
    d = tmp_path / "mystuff"
    d.mkdir()
    (d / "letter.txt").write_text("keep")
    said = _refused(capsys, d)
    assert "is a folder" in said and str(d) in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mystuff"]
    assert (d / "letter.txt").read_text() == "keep" and sorted(p.name for p in d.iterdir()) == ["letter.txt"]


def test_a_store_that_is_no_plain_file_or_under_a_file_is_refused(tmp_path, capsys):
    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    assert "not a plain file" in _refused(capsys, fifo)
    (tmp_path / "afile").write_text("x")
    assert "not a folder" in _refused(capsys, tmp_path / "afile" / "s.sqlite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "pipe.sqlite"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any file")
@pytest.mark.parametrize("how", ["unreadable", "read-only"])
def test_an_unreadable_or_read_only_store_is_refused_and_left_alone(how, tmp_path, capsys):
    st = Store.open(tmp_path / "s.sqlite")
    st.close()
    p = tmp_path / "s.sqlite"
    p.chmod(0o000 if how == "unreadable" else 0o444)
    try:
        said = _refused(capsys, p)
    finally:
        p.chmod(0o644)
    assert ("cannot read" if how == "unreadable" else "read-only") in said
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.sqlite"]


def test_a_damaged_store_file_is_the_one_thing_moved_aside(tmp_path, capsys):
    p = tmp_path / "s.sqlite"
    p.write_bytes(b"this is no database" * 100)
    assert main(["logs", "list", "--store", str(p)]) == 0
    capsys.readouterr()
    assert len(list(tmp_path.glob("s.sqlite.damaged-*"))) == 1


def test_one_store_by_two_spellings_is_one_store(pulled, tmp_path, capsys, monkeypatch):
    """A store opened as `s.sqlite` from its folder after its absolute path: the same rows, no folder re-read."""
    monkeypatch.chdir(pulled.parent)
    names, err = _listed(capsys, pulled)
    assert len(names) == 5 and err == "", err
    for spelling in (pulled.name, "./" + pulled.name, "../%s/%s" % (pulled.parent.name, pulled.name)):
        again, err = _listed(capsys, spelling)
        assert again == names and err == "", (spelling, err)
