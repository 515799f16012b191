"""Log pull through the real host link and the unit's real host service, in-process (tests/host/loopback.py),
with faults made at the bytes on the line: flipped, dropped, repeated, held back, or the port gone."""

from __future__ import annotations

import hashlib
import os
import random
import time
from pathlib import Path

import loopback
import pytest
from maus.log import writer as gamelog
from mausbox import logpull, pulldest
from mausbox.link import LinkLost
from mausbox.logpull import Puller


def make_log(rng: random.Random, n_records: int, finished: bool = True, unit: str = "abc") -> bytes:
    lines = [gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mg", "variant": None,
                                                   "players": [{"id": 1, "colour": "red", "young": False}],
                                                   "board": "sim", "unit": unit, "fw": "0.1", "settings": {},
                                                   "wall": None, "ticks": 0})]
    t = 0
    for seq in range(1, n_records):
        t += rng.randrange(50, 3000)
        lines.append(gamelog.encode(seq, t, "press", {"player": rng.randrange(1, 5), "us": rng.randrange(10**6),
                                                      "note": "ä~\r\x10" * rng.randrange(0, 8)}))
    if finished:
        lines.append(gamelog.encode(n_records, t + 10, "game_end", {"scores": {"1": 3}, "winners": [1],
                                                                    "breakdown": {}, "why": "last mouse"}))
    return b"".join(lines)


def write_unit(root: Path, logs: dict[str, bytes]) -> None:
    (root / "logs").mkdir(parents=True, exist_ok=True)
    for name, data in logs.items():
        (root / "logs" / name).write_bytes(data)


def pull_once(tmp_path, logs, seed=0, **faults):
    unit = tmp_path / "unit"
    write_unit(unit, logs)
    link, ser = loopback.link(unit, rng=random.Random(seed), **faults)
    p = Puller(link, tmp_path / "dest", tmp_path / "staging")
    return p, ser, p.pull_all()


def test_names_are_checked():
    ok = ["00001-mg.jsonl", "12345-mim.jsonl", "00007-_x.jsonl"]
    for n in ok:
        assert pulldest.check_name(n) == n
    bad = ["../../etc/passwd", "/etc/passwd", "..jsonl", ".hidden.jsonl", "00001-mg.jsonl/../x.jsonl",
           "00001-m\x00g.jsonl", "00001-mg.json", "", "0" * 60 + "-a.jsonl", "00001-MG.jsonl", "00001-m g.jsonl",
           "00001-mg\\..\\x.jsonl", "00001-mé.jsonl", "C:x.jsonl", "00001-mg.jsonl\n", 17, None]
    for n in bad:
        with pytest.raises(ValueError):
            pulldest.check_name(n)


def test_listing_pairs_markers_and_refuses_hostile_rows():
    rows = [("00001-mg.jsonl", 10), ("00001-mg.jsonl.pulled", 64), ("../../../home/evil.jsonl", 10),
            ("00002-mg.jsonl", -1), ("00004-mg.jsonl", 10 ** 12), ("x" * 5000, 1), ("00005-mms.jsonl", 3),
            ("00005-mms.jsonl", 3), ("00009-mg.jsonl.pulled", 64)]
    lst = pulldest.parse_listing("../x", rows)
    assert [(e.name, e.pulled) for e in lst.entries] == [("00001-mg.jsonl", True), ("00005-mms.jsonl", False)]
    assert lst.unit is None  # a unit id that is not a plain token is not used as a folder name
    assert len(lst.refused) == 4
    assert any("path escape" in r for r in lst.refused) and any("too long" in r for r in lst.refused)
    assert pulldest.parse_listing("5e1d0a0b0c0d", []).unit == "5e1d0a0b0c0d"


def test_clean_pull_marks_and_second_pull_skips(tmp_path):
    rng = random.Random(3)
    logs = {"00001-mg.jsonl": make_log(rng, 300), "00002-mim.jsonl": make_log(rng, 40)}
    p, ser, res = pull_once(tmp_path, logs)
    assert [r.status for r in res] == ["pulled", "pulled"]
    for name, data in logs.items():
        assert (tmp_path / "dest" / name).read_bytes() == data
        assert (tmp_path / "unit" / "logs" / (name + ".pulled")).read_text() == hashlib.sha256(data).hexdigest()
        assert not [r for r in res if r.damage]
    p2 = Puller(p.link, tmp_path / "dest", tmp_path / "staging")
    assert [r.status for r in p2.pull_all()] == ["skipped", "skipped"]
    assert b"\x03" not in ser.written  # never a Ctrl-C


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
    link, _ = loopback.link(unit)
    real = link.listing
    evil = ["../../outside.jsonl", "/tmp/abs.jsonl", ".x.jsonl", "a" * 300 + ".jsonl", "00002-m\x1bg.jsonl"]
    link.listing = lambda: real() + [(n, 5) for n in evil]  # type: ignore[method-assign]  # a hostile unit
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert sorted(r.status for r in res) == ["pulled"] + ["refused"] * len(evil)
    assert sorted(os.listdir(tmp_path / "dest")) == ["00001-mg.jsonl"]
    assert not (tmp_path / "outside.jsonl").exists()


def test_resume_after_a_lost_chunk(tmp_path):
    data = make_log(random.Random(6), 900)
    assert len(data) > 20 * 1024
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": data})
    link, ser = loopback.link(unit)
    asked = []
    real = ser.svc.op_read

    def op_read(req):
        asked.append(req.get("off", 0))
        if len(asked) == 1:  # the line loses a few bytes inside the second write of the stream
            n = [0]

            def mangle(chunk):
                n[0] += 1
                return chunk[:40] + chunk[50:] if n[0] == 2 else chunk
            ser._mangle = mangle
        else:
            ser._mangle = lambda chunk: chunk
        return real(req)

    ser.svc.op_read = op_read
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert res[0].status == "pulled" and res[0].retries == 1
    assert asked[0] == 0 and asked[1] > 0 and asked[1] % 1024 == 0  # resumed from the last good chunk
    assert (tmp_path / "dest/00001-mg.jsonl").read_bytes() == data


def test_a_silent_unit_fails_cleanly(tmp_path):
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": make_log(random.Random(8), 50)})
    link, ser = loopback.link(unit, timeout=0.1)
    link.hello()
    link.listing()
    p = Puller(link, tmp_path / "dest", tmp_path / "staging")
    p.fetch_listing()
    ser._mangle = lambda chunk: b""  # from now on the unit's answers never arrive
    t0 = time.monotonic()
    res = p.pull_all()
    assert res[0].status == "failed" and "no progress" in res[0].detail
    assert time.monotonic() - t0 < 5
    assert not (tmp_path / "dest" / "00001-mg.jsonl").exists()
    assert not (unit / "logs/00001-mg.jsonl.pulled").exists()


def test_a_file_changed_under_a_resumed_copy_is_fetched_whole(tmp_path):
    data = make_log(random.Random(9), 100)
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": data})
    link, ser = loopback.link(unit)
    p = Puller(link, tmp_path / "dest", tmp_path / "staging")
    p.fetch_listing()
    part = tmp_path / "staging/00001-mg.jsonl.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(data[:3000])  # a partial copy from an earlier pull
    new = data[:100] + b"X" * 5 + data[105:]  # since then the unit rewrote its start (recovered, say)
    (unit / "logs/00001-mg.jsonl").write_bytes(new)
    res = p.pull_all()
    assert res[0].status == "pulled" and res[0].path.read_bytes() == new  # never old bytes with new ones


def test_a_digest_that_never_matches_is_not_accepted(tmp_path):
    data = make_log(random.Random(10), 100)
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": data})
    link, ser = loopback.link(unit)
    real = ser.svc.reply

    def reply(seq, obj):  # a broken unit: its digests are wrong
        if "sha256" in obj:
            obj["sha256"] = "0" * 64
        return real(seq, obj)

    ser.svc.reply = reply
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert res[0].status == "failed" and "sha256" in res[0].detail
    assert os.listdir(tmp_path / "dest") == [] and not (unit / "logs/00001-mg.jsonl.pulled").exists()


def test_thousand_pulls_over_a_faulty_line(tmp_path):
    """1,000 pulls while 4 % of the unit's writes are flipped, cut, repeated or lost on the line."""
    rng = random.Random(2026)
    corrupt = partial = failed = pulls = 0
    faults = {"flip": 0, "drop": 0, "dup": 0, "stall": 0}
    t0 = time.monotonic()
    for i in range(100):
        base = tmp_path / str(i)
        logs = {"%05d-mg.jsonl" % (j + 1): make_log(rng, rng.randrange(5, 60)) for j in range(10)}
        unit = base / "unit"
        write_unit(unit, logs)
        link, ser = loopback.link(unit, timeout=0.05, rng=rng, flip=0.015, drop=0.015, dup=0.015, stall=0.015)
        p = Puller(link, base / "dest", base / "staging")
        try:
            res = p.pull_all()
        except logpull.PullError:
            res = []  # the listing itself failed three times: nothing pulled, nothing marked
        pulls += len(logs)
        for k in faults:
            faults[k] += ser.faults[k]
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
    assert all(v > 20 for v in faults.values()), faults
    assert failed <= 30  # only pulls whose listing or retries ran out; each was reported, none hung


def test_a_wiped_unit_reusing_a_name_never_overwrites_a_pulled_game(tmp_path):
    rng = random.Random(12)
    first, second = make_log(rng, 30), make_log(rng, 40)
    unit = tmp_path / "unit"
    write_unit(unit, {"00001-mg.jsonl": first})
    link, _ = loopback.link(unit)
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
    link, _ = loopback.link(unit)
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
    link, ser = loopback.link(unit)
    ser.ctx.mode = "play"  # a game runs: small frames, the stream takes several passes
    real = ser.svc.op_read
    sent = [0]

    def op_read(req):
        gen = real(req)
        if req["name"] != "00002-mg.jsonl":
            return gen

        def unplug_midway():
            for x in gen:
                sent[0] += 1
                if sent[0] == 1:
                    ser.gone = True  # the cable is pulled after the first frames
                yield x
        return unplug_midway()

    ser.svc.op_read = op_read

    def reconnect():
        raise LinkLost("no such port")

    t0 = time.monotonic()
    res = Puller(link, tmp_path / "dest", tmp_path / "staging", reconnect=reconnect).pull_all()
    assert [r.status for r in res] == ["pulled", "failed", "failed", "failed"]
    assert "lost the unit" in res[1].detail and "not tried" in res[3].detail
    assert time.monotonic() - t0 < 5
    assert sorted(os.listdir(tmp_path / "dest")) == ["00001-mg.jsonl"]
    kept = (tmp_path / "staging" / "00002-mg.jsonl.part").stat().st_size
    assert kept > 0 and kept % 1024 == 0  # verified chunks kept for the next pull


def test_two_thousand_logs_list_and_pull_over_a_faulty_line(tmp_path):
    """A classroom unit: 2,000 small logs and a few strays, listed and pulled while 1 % of the unit's writes are
    flipped. The listing resumes after a damaged part instead of starting over; every log arrives verified;
    the strays are named and left on the unit (tests/fw/test_hostsvc.py: the same on the 32-bit port's heap)."""
    rng = random.Random(18)
    one = make_log(rng, 3)
    logs = {"%05d-mg.jsonl" % (j + 1): one for j in range(2000)}
    unit = tmp_path / "unit"
    write_unit(unit, logs)
    for junk in ("9999999999-mg.jsonl", "notes.txt"):
        (unit / "logs" / junk).write_bytes(b"junk\n")
    (unit / "logs" / "00077-dir.jsonl.d").mkdir()
    link, ser = loopback.link(unit, timeout=0.5, rng=rng, flip=0.01)
    asked = []
    send = link.send_request

    def spy(op, **args):
        if op == "logs":
            asked.append(args.get("skip", 0))
        return send(op, **args)

    link.send_request = spy
    p = Puller(link, tmp_path / "dest", tmp_path / "staging")
    res = p.pull_all()
    got = {r.name: r for r in res}
    pulled = [n for n in logs if got.get(n) and got[n].status == "pulled"]
    assert len(pulled) >= 1990, len(pulled)  # a few may run out of retries over this line; none is wrong
    assert all((tmp_path / "dest" / n).read_bytes() == one for n in pulled)
    strays = [r for r in res if r.detail.startswith("not a log")]
    assert {r.name for r in strays} == {"9999999999-mg.jsonl", "notes.txt", "00077-dir.jsonl.d"}, strays
    assert all(r.status == "skipped" for r in strays) and (unit / "logs" / "notes.txt").exists()
    if ser.faults["flip"]:
        assert len(asked) <= 1 + 8 and (len(asked) == 1 or max(asked) > 0), asked  # resumed, not restarted


def test_a_host_copy_that_fails_its_check_is_fetched_again(tmp_path):
    """A bit flipped in the host's copy (same size) of a log marked pulled: the next pull fetches the good copy
    still on the unit, instead of "already here"."""
    logs = {"00001-mg.jsonl": make_log(random.Random(1), 30), "00002-mg.jsonl": make_log(random.Random(2), 30)}
    write_unit(tmp_path / "unit", logs)
    link, _ = loopback.link(tmp_path / "unit")
    assert [o.status for o in Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()] == ["pulled"] * 2
    bad = bytearray(logs["00001-mg.jsonl"])
    bad[len(bad) // 2] ^= 0x04
    (tmp_path / "dest" / "00001-mg.jsonl").write_bytes(bytes(bad))
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    assert [o.status for o in res] == ["pulled", "skipped"], [(o.status, o.detail) for o in res]
    assert "fetched again" in res[0].detail
    assert (tmp_path / "dest" / "00001-mg.jsonl").read_bytes() == logs["00001-mg.jsonl"]
    assert sorted(p.name for p in (tmp_path / "dest").iterdir()) == sorted(logs)  # no `~sha` copy beside it


def test_an_unreadable_entry_on_the_unit_is_skipped_and_the_rest_served(tmp_path):
    """A symlinked log that leads nowhere in the unit's logs/: the unit lists the others and reports it."""
    logs = {"00001-mg.jsonl": make_log(random.Random(1), 30), "00003-mg.jsonl": make_log(random.Random(3), 30)}
    write_unit(tmp_path / "unit", logs)
    os.symlink(tmp_path / "nowhere", tmp_path / "unit" / "logs" / "00002-mg.jsonl")
    link, _ = loopback.link(tmp_path / "unit")
    res = Puller(link, tmp_path / "dest", tmp_path / "staging").pull_all()
    got = {o.name: o.status for o in res}
    assert got == {"00001-mg.jsonl": "pulled", "00003-mg.jsonl": "pulled", "00002-mg.jsonl": "skipped"}, res
    assert "left on the unit" in [o for o in res if o.name == "00002-mg.jsonl"][0].detail
