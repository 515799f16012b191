"""Log pull at the framing layer: a fake link that runs the unit's real code in-process, with faults.

The fake unit is a folder (its flash); listing and marking run the very code sent to a real unit
(`maus.logstore` under CPython); streams come from `encode_frames`, which a test below proves byte-identical
to what the unit's stream code prints under CPython and under MicroPython.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import sys
import time
import traceback
from pathlib import Path

import pytest
from maus import gamelog
from mausbox import logpull
from mausbox.logpull import DeviceError, FrameError, LinkLost, Puller


def make_log(rng: random.Random, n_records: int, finished: bool = True, unit: str = "abc") -> bytes:
    lines = [gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mg", "variant": None,
                                                   "players": [{"id": 1, "colour": "red", "young": False}],
                                                   "board": "sim", "unit": unit, "fw": "0.1", "settings": {},
                                                   "wall": None, "ticks": 0})]
    t = 0
    for seq in range(1, n_records):
        t += rng.randrange(50, 3000)
        lines.append(gamelog.encode(seq, t, "press", {"player": rng.randrange(1, 5), "us": rng.randrange(10**6),
                                                      "note": "ä~" * rng.randrange(0, 8)}))
    if finished:
        lines.append(gamelog.encode(n_records, t + 10, "game_end", {"scores": {"1": 3}, "winners": [1],
                                                                    "breakdown": {}, "why": "last mouse"}))
    return b"".join(lines)


def write_unit(root: Path, logs: dict[str, bytes]) -> None:
    (root / "logs").mkdir(parents=True, exist_ok=True)
    for name, data in logs.items():
        (root / "logs" / name).write_bytes(data)


@contextlib.contextmanager
def on_unit(root: Path):
    old = os.getcwd()
    os.chdir(root)
    try:
        yield
    finally:
        os.chdir(old)


def run_on_unit(root: Path, code: str) -> bytes:
    """Exec unit code in-process with cwd = the unit's flash; its stdout bytes, DeviceError on a traceback."""
    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8", write_through=True)
    old = sys.stdout
    sys.stdout = out
    try:
        with on_unit(root):
            exec(compile(code, "<unit>", "exec"), {"__name__": "__unit__"})
    except Exception:
        raise DeviceError(traceback.format_exc()) from None
    finally:
        sys.stdout = old
        out.flush()
    return buf.getvalue()


class FakeLink(logpull.Link):
    """A link to a folder-unit at the framing layer; `fault` of frames are dropped, duplicated, bit-flipped,
    cut short (the line stalls) or the connection is lost. Reads never block: silence returns b""."""

    def __init__(self, root: Path, rng: random.Random, fault: float = 0.0, exec_fault: float = 0.0):
        self.root = root
        self.rng = rng
        self.fault = fault
        self.exec_fault = exec_fault
        self.buf = bytearray()
        self.lost_at: int | None = None  # the link breaks after this many more bytes
        self.streaming = False
        self.faults = {"drop": 0, "dup": 0, "flip": 0, "stall": 0, "lost": 0}
        self.execs = 0

    def exec(self, code: str, timeout: float = 10.0) -> bytes:
        self.execs += 1
        if self.rng.random() < self.exec_fault:
            self.faults["lost"] += 1
            raise LinkLost("cable pulled")
        return run_on_unit(self.root, code)

    def stream(self, path: str, offset: int, end: int) -> None:
        assert not self.streaming, "stream started while another is running"
        data = (self.root / path).read_bytes()
        self.buf = bytearray()
        self.lost_at = None
        self.streaming = True
        for fr in logpull.encode_frames(data, offset, end):
            if self.rng.random() < self.fault:
                kind = self.rng.choice(("drop", "dup", "flip", "stall", "lost"))
                self.faults[kind] += 1
                if kind == "drop":
                    continue
                if kind == "dup":
                    self.buf += fr + fr
                    continue
                if kind == "flip":
                    fr = bytearray(fr)
                    fr[self.rng.randrange(len(fr))] ^= 1 << self.rng.randrange(8)
                    self.buf += fr
                    continue
                cut = self.rng.randrange(len(fr))
                self.buf += fr[:cut]
                if kind == "lost":
                    self.lost_at = len(self.buf)
                break  # stall: the rest never comes
            else:
                self.buf += fr

    def read(self, n: int) -> bytes:
        if self.lost_at is not None and self.lost_at <= 0:
            raise LinkLost("device disconnected")
        if self.lost_at is not None:
            n = min(n, self.lost_at)
            self.lost_at -= min(n, len(self.buf))
        got = bytes(self.buf[:n])
        del self.buf[:n]
        return got

    def finish(self) -> None:
        assert self.streaming
        if self.buf:
            raise FrameError("trailing bytes")
        self.streaming = False

    def abort(self) -> None:
        self.buf = bytearray()
        self.lost_at = None
        self.streaming = False

    def reconnect(self) -> None:
        self.abort()


def test_names_are_checked():
    ok = ["00001-mg.jsonl", "12345-mim.jsonl", "00007-_x.jsonl"]
    for n in ok:
        assert logpull.check_name(n) == n
    bad = ["../../etc/passwd", "/etc/passwd", "..jsonl", ".hidden.jsonl", "00001-mg.jsonl/../x.jsonl",
           "00001-m\x00g.jsonl", "00001-mg.json", "", "0" * 60 + "-a.jsonl", "00001-MG.jsonl", "00001-m g.jsonl",
           "00001-mg\\..\\x.jsonl", "00001-mé.jsonl", "C:x.jsonl", "00001-mg.jsonl\n", 17, None]
    for n in bad:
        with pytest.raises(ValueError):
            logpull.check_name(n)


def test_listing_refuses_hostile_lines():
    raw = json.dumps({"unit": "../x", "logs": [
        ["00001-mg.jsonl", 10, "a" * 64, False],
        ["../../../home/evil.jsonl", 10, "a" * 64, False],
        ["00002-mg.jsonl", -1, "a" * 64, False],
        ["00003-mg.jsonl", 10, "zz", False],
        ["00004-mg.jsonl", 10 ** 12, "a" * 64, False],
        ["x" * 5000, 1, "a" * 64, False],
        "garbage",
        {"name": "logs/00005-mms.jsonl", "size": 3, "sha256": "b" * 64, "pulled": True},
    ]}).encode()
    lst = logpull.parse_listing(raw)
    assert [e.name for e in lst.entries] == ["00001-mg.jsonl", "00005-mms.jsonl"]
    assert lst.unit is None  # a unit id that is not a plain token is not used as a folder name
    assert len(lst.refused) == 6
    assert any("path escape" in r for r in lst.refused)
    assert any("too long" in r for r in lst.refused)
    with pytest.raises(DeviceError):
        logpull.parse_listing(b"Traceback...")


def test_stream_code_matches_encoder_under_cpython(tmp_path):
    rng = random.Random(1)
    data = make_log(rng, 200) + b"\x00\x04raw\x04" + bytes(range(256)) * 20
    write_unit(tmp_path, {"00001-mg.jsonl": data})
    for off, end in ((0, len(data)), (100, len(data)), (4096, 9000), (len(data), len(data))):
        got = run_on_unit(tmp_path, logpull.stream_code("logs/00001-mg.jsonl", off, end))
        assert got == b"".join(logpull.encode_frames(data, off, end))
    assert b"~B" in b"".join(logpull.encode_frames(data, 0, len(data)))


def test_stream_code_matches_encoder_under_micropython(tmp_path):
    from conftest import run_micropython

    rng = random.Random(2)
    data = make_log(rng, 150) + b"\x04" + bytes(range(256)) * 30
    write_unit(tmp_path, {"00001-mg.jsonl": data})
    script = tmp_path / "s.py"
    script.write_text(logpull.stream_code("logs/00001-mg.jsonl", 77, len(data)))
    proc = run_micropython(script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"".join(logpull.encode_frames(data, 77, len(data)))


def pull_once(tmp_path, logs, fault=0.0, exec_fault=0.0, seed=0):
    unit = tmp_path / "unit"
    write_unit(unit, logs)
    link = FakeLink(unit, random.Random(seed), fault, exec_fault)
    p = Puller(link, tmp_path / "dest", tmp_path / "staging")
    return p, link, p.pull_all()


def test_clean_pull_marks_and_second_pull_skips(tmp_path):
    rng = random.Random(3)
    logs = {"00001-mg.jsonl": make_log(rng, 300), "00002-mim.jsonl": make_log(rng, 40)}
    p, link, res = pull_once(tmp_path, logs)
    assert [r.status for r in res] == ["pulled", "pulled"]
    for name, data in logs.items():
        assert (tmp_path / "dest" / name).read_bytes() == data
        assert (tmp_path / "unit" / "logs" / (name + ".pulled")).read_text() == hashlib.sha256(data).hexdigest()
        assert not [r for r in res if r.damage]
    p2 = Puller(link, tmp_path / "dest", tmp_path / "staging")
    assert [r.status for r in p2.pull_all()] == ["skipped", "skipped"]


def test_unfinished_newest_log_is_copied_but_not_marked(tmp_path):
    rng = random.Random(4)
    logs = {"00001-mg.jsonl": make_log(rng, 20), "00002-mg.jsonl": make_log(rng, 20, finished=False)}
    _, _, res = pull_once(tmp_path, logs)
    assert [r.status for r in res] == ["pulled", "pulled"]
    assert not res[1].finished and "not marked" in res[1].detail
    assert (tmp_path / "unit/logs/00001-mg.jsonl.pulled").exists()
    assert not (tmp_path / "unit/logs/00002-mg.jsonl.pulled").exists()


def test_hostile_names_on_the_unit_are_refused(tmp_path):
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": make_log(random.Random(5), 10)})
    link = FakeLink(unit, random.Random(0))
    evil = ["../../outside.jsonl", "/tmp/abs.jsonl", ".x.jsonl", "a" * 300 + ".jsonl", "00002-m\x1bg.jsonl"]
    real_exec = link.exec

    def exec_(code, timeout=10.0):
        out = real_exec(code, timeout)
        if code == logpull.LISTING_CODE:  # a unit (or its firmware) that lists hostile names
            doc = json.loads(out)
            doc["logs"] += [[n, 5, "c" * 64, False] for n in evil]
            out = json.dumps(doc).encode()
        return out

    link.exec = exec_  # type: ignore[method-assign]
    p = Puller(link, tmp_path / "dest", tmp_path / "staging")
    res = p.pull_all()
    assert sorted(r.status for r in res) == ["pulled"] + ["refused"] * len(evil)
    assert sorted(os.listdir(tmp_path / "dest")) == ["00001-mg.jsonl"]
    assert not (tmp_path / "outside.jsonl").exists()


def test_resume_after_link_drops_mid_file(tmp_path):
    data = make_log(random.Random(6), 900)
    assert len(data) > 5 * logpull.CHUNK
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": data})

    class Dropper(FakeLink):
        offsets: list[int] = []

        def stream(self, path, offset, end):
            self.offsets.append(offset)
            super().stream(path, offset, end)
            if len(self.offsets) == 1:
                self.lost_at = 2 * logpull.CHUNK + 100  # cut inside the third frame

    link = Dropper(unit, random.Random(0))
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert res[0].status == "pulled" and res[0].retries == 1
    assert link.offsets == [0, 2 * logpull.CHUNK]  # resumed from the last verified offset, not from 0
    assert (tmp_path / "dest/00001-mg.jsonl").read_bytes() == data


def test_corrupted_chunk_is_rejected_and_fetched_again(tmp_path):
    data = make_log(random.Random(7), 600)
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": data})

    class Flipper(FakeLink):
        offsets: list[int] = []

        def stream(self, path, offset, end):
            self.offsets.append(offset)
            super().stream(path, offset, end)
            if len(self.offsets) == 1:
                self.buf[logpull.CHUNK + logpull.FRAME_HDR * 2 + 50] ^= 0x10  # inside the 2nd frame's payload

    link = Flipper(unit, random.Random(0))
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert res[0].status == "pulled"
    assert link.offsets == [0, logpull.CHUNK]
    assert (tmp_path / "dest/00001-mg.jsonl").read_bytes() == data


def test_a_silent_unit_fails_cleanly(tmp_path):
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": make_log(random.Random(8), 50)})
    link = FakeLink(unit, random.Random(0), fault=1.0)
    link.rng = random.Random(0)
    link.fault = 1.0
    link.stream = lambda path, off, end: None  # type: ignore[method-assign]  # the unit never answers
    t0 = time.monotonic()
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert res[0].status == "failed" and "no progress" in res[0].detail
    assert time.monotonic() - t0 < 5
    assert not (tmp_path / "dest" / "00001-mg.jsonl").exists()
    assert not (unit / "logs/00001-mg.jsonl.pulled").exists()


def test_changed_file_is_not_accepted(tmp_path):
    data = make_log(random.Random(9), 100)
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": data})
    link = FakeLink(unit, random.Random(0))
    p = Puller(link, tmp_path / "dest", tmp_path / "staging")
    p.fetch_listing()
    (unit / "logs/00001-mg.jsonl").write_bytes(data[:-5] + b"XXXXX")  # same size, other bytes
    res = p.pull_all()
    assert res[0].status == "failed" and "sha256" in res[0].detail
    assert os.listdir(tmp_path / "dest") == []


def test_thousand_pulls_over_a_faulty_link(tmp_path):
    """1,000 pulls, 5 % of frames dropped / duplicated / flipped / stalled / lost, 5 % of execs lost."""
    rng = random.Random(2026)
    corrupt = partial = failed = pulls = 0
    faults = {"drop": 0, "dup": 0, "flip": 0, "stall": 0, "lost": 0}
    t0 = time.monotonic()
    for i in range(100):
        base = tmp_path / str(i)
        logs = {"%05d-mg.jsonl" % (j + 1): make_log(rng, rng.randrange(5, 120)) for j in range(10)}
        unit = base / "unit"
        write_unit(unit, logs)
        link = FakeLink(unit, rng, fault=0.05, exec_fault=0.05)
        p = Puller(link, base / "dest", base / "staging")
        try:
            res = p.pull_all()
        except logpull.PullError:
            res = []  # the listing itself failed three times: nothing pulled, nothing marked
        pulls += len(logs)
        for k in faults:
            faults[k] += link.faults[k]
        got = {r.name: r for r in res}
        for name, data in logs.items():
            dest = base / "dest" / name
            if dest.exists():
                corrupt += dest.read_bytes() != data
            if name not in got or got[name].status != "pulled":
                failed += 1
                assert not dest.exists()
            marker = unit / "logs" / (name + ".pulled")
            if marker.exists():
                assert dest.exists() and dest.read_bytes() == data  # marked only after a verified copy
        if (base / "dest").exists():
            partial += sum(1 for n in os.listdir(base / "dest") if n not in logs)
    elapsed = time.monotonic() - t0
    print("pulls %d failed %d faults %r in %.1f s" % (pulls, failed, faults, elapsed))
    assert pulls == 1000
    assert corrupt == 0 and partial == 0
    assert all(v > 20 for v in faults.values())
    assert failed <= 30  # only pulls whose listing or retries ran out; each was reported, none hung
    assert elapsed < 120


def test_a_wiped_unit_reusing_a_name_never_overwrites_a_pulled_game(tmp_path):
    rng = random.Random(12)
    first, second = make_log(rng, 30), make_log(rng, 40)
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": first})
    link = FakeLink(unit, random.Random(0))
    assert Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()[0].status == "pulled"
    for f in (unit / "logs").iterdir():
        f.unlink()  # flash wiped: numbering starts again at 1
    write_unit(unit, {"00001-mg.jsonl": second})
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert res[0].status == "pulled" and "kept as" in res[0].detail
    assert (tmp_path / "dest/00001-mg.jsonl").read_bytes() == first
    assert res[0].path is not None and res[0].path.read_bytes() == second
    assert res[0].path.name.startswith("00001-mg~")


def test_a_growing_unfinished_log_replaces_its_earlier_copy(tmp_path):
    rng = random.Random(13)
    full = make_log(rng, 60)
    part = full[:full.index(b"\n", len(full) // 2) + 1]
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": part})
    link = FakeLink(unit, random.Random(0))
    r1 = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()[0]
    assert not r1.finished and not (unit / "logs/00001-mg.jsonl.pulled").exists()
    write_unit(unit, {"00001-mg.jsonl": full})
    r2 = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()[0]
    assert r2.finished and r2.path == tmp_path / "dest/00001-mg.jsonl" and r2.path.read_bytes() == full
    assert (unit / "logs/00001-mg.jsonl.pulled").exists()


def test_cli_pull_from_a_missing_port(tmp_path, capsys):
    from mausbox.cli import main

    assert main(["logs", "pull", "--port", str(tmp_path / "nope"), "--store", str(tmp_path / "s.sqlite")]) == 3
    assert "FAILED" in capsys.readouterr().out
    assert not (tmp_path / "raw").exists()


def test_a_unit_that_goes_away_ends_the_pull_quickly(tmp_path):
    rng = random.Random(14)
    logs = {"%05d-mg.jsonl" % (i + 1): make_log(rng, 200) for i in range(4)}
    unit = tmp_path / "unit"
    write_unit(unit, logs)

    class Unplugged(FakeLink):
        def stream(self, path, offset, end):
            super().stream(path, offset, end)
            if path.endswith("00002-mg.jsonl"):
                self.lost_at = 5000

        def reconnect(self):
            raise LinkLost("no such port")

    t0 = time.monotonic()
    res = Puller(Unplugged(unit, random.Random(0)), tmp_path / "dest", tmp_path / "staging").pull_all()
    assert [r.status for r in res] == ["pulled", "failed", "failed", "failed"]
    assert "lost the unit" in res[1].detail and "not tried" in res[3].detail
    assert time.monotonic() - t0 < 5
    assert sorted(os.listdir(tmp_path / "dest")) == ["00001-mg.jsonl"]
    assert (tmp_path / "staging" / "00002-mg.jsonl.part").stat().st_size == 4096  # kept for the next pull
