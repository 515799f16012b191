"""Log pull through the virtual unit's pseudo-terminal: the real raw REPL, the real firmware logstore.

The unit's flash is a tmp folder; the firmware package is on its path. Faults are injected on the host
side of the real link (a wrapped ReplLink), so the unit's stream, Ctrl-C, resume and reconnect are real.
"""

from __future__ import annotations

import hashlib
import os
import random
import time

import pytest
from mausbox import logpull
from mausbox.logpull import LinkLost, ReplLink, pull_unit
from mausbox.paths import FIRMWARE_DIR, micropython_binary
from mausbox.store import Store

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

from test_logs_pull import make_log  # noqa: E402
from test_logs_pull import write_unit as write_logs  # noqa: E402

UID = "5e1d00000abc"  # the virtual unit's machine.unique_id(), which the firmware writes into its logs


def write_unit(root, logs, uid=UID):
    """A unit folder with these logs, its machine.unique_id() the one in them (as on a board)."""
    write_logs(root, logs)
    (root / ".sim").mkdir(exist_ok=True)
    (root / ".sim" / "unique_id").write_text(uid + "\n")


def serial_unit(root, **kw):
    from mausbox.sim.serial import SerialUnit

    return SerialUnit(root, extra_path=[str(FIRMWARE_DIR)], **kw)


class FaultyLink(ReplLink):
    """The real link, with the host's view of the byte stream damaged on demand."""

    def __init__(self, port, plan=None, rate=0.0, seed=0, **kw):
        self.plan = dict(plan or {})  # stream number -> ("flip" | "lost" | "drop", byte index in that stream)
        self.rate = rate
        self.rng = random.Random(seed)
        self.streams: list[int] = []
        self.faults = 0
        self._pos = 0
        super().__init__(port, **kw)

    def stream(self, path, offset, end):
        self.streams.append(offset)
        self._pos = 0
        super().stream(path, offset, end)

    def read(self, n):
        got = super().read(n)
        fault = self.plan.get(len(self.streams))
        if fault and self._pos <= fault[1] < self._pos + len(got):
            del self.plan[len(self.streams)]
            got = self._damage(fault[0], got, fault[1] - self._pos)
        elif self.rate and n > 64 and self.rng.random() < self.rate:
            got = self._damage(self.rng.choice(("flip", "lost", "drop")), got, self.rng.randrange(max(1, len(got))))
        self._pos += len(got)
        return got

    def _damage(self, kind, got, i):
        self.faults += 1
        if kind == "flip":
            b = bytearray(got)
            b[i] ^= 0x20
            return bytes(b)
        if kind == "drop":
            return got[:i] + got[i + 1:]
        raise LinkLost("cable pulled (test)")


def logs_for(seed, sizes, unit=UID):
    rng = random.Random(seed)
    return {"%05d-mg.jsonl" % (i + 1): make_log(rng, n, unit=unit) for i, n in enumerate(sizes)}


def check_pulled(store, unit_root, logs, res):
    assert not res.error, res.error
    assert sorted(o.name for o in res.outcomes if o.status == "pulled") == sorted(logs)
    for name, data in logs.items():
        raw = store.raw_dir(res.unit) / name
        assert raw.read_bytes() == data
        assert (unit_root / "logs" / (name + ".pulled")).read_text() == hashlib.sha256(data).hexdigest()
    assert sorted(os.listdir(store.raw_dir(res.unit))) == sorted(logs)  # no temp or partial files
    assert {g.name for g in store.games()} == set(logs)


def test_pull_over_the_pty(tmp_path):
    logs = logs_for(1, [30, 400])
    # an older log damaged on the unit, holding 0x04 (which ends raw-REPL output) and other binary bytes
    logs["00000-mg.jsonl"] = logs["00001-mg.jsonl"][:500] + bytes(range(256)) * 40 + b"\x04\n"
    root = tmp_path / "unit"
    write_unit(root, logs)
    store = Store(tmp_path / "store" / "logs.sqlite")
    with serial_unit(root) as u:
        link = ReplLink(u.pty_path)
        try:
            res = pull_unit(link, store)
            check_pulled(store, root, logs, res)
            assert res.unit == u.unique_id == UID  # machine.unique_id(): each virtual unit has its own
            damaged = [o for o in res.outcomes if o.damage]
            assert [o.name for o in damaged] == ["00000-mg.jsonl"] and not res.ok
            again = pull_unit(link, store)
            assert [o.status for o in again.outcomes] == ["skipped", "skipped", "skipped"]
        finally:
            link.close()


def test_resume_after_the_link_drops_mid_file(tmp_path):
    logs = logs_for(2, [700])
    data = logs["00001-mg.jsonl"]
    assert len(data) > 4 * logpull.CHUNK
    root = tmp_path / "unit"
    write_unit(root, logs)
    store = Store(tmp_path / "store" / "logs.sqlite")
    with serial_unit(root) as u:
        link = FaultyLink(u.pty_path, plan={1: ("lost", 2 * (logpull.CHUNK + logpull.FRAME_HDR) + 300)})
        try:
            res = pull_unit(link, store)
        finally:
            link.close()
    check_pulled(store, root, logs, res)
    assert link.streams == [0, 2 * logpull.CHUNK]  # resumed at the last verified frame, after a reconnect
    assert res.outcomes[0].retries == 1


def test_corrupted_chunk_rejected_and_fetched_again(tmp_path):
    logs = logs_for(3, [500])
    root = tmp_path / "unit"
    write_unit(root, logs)
    store = Store(tmp_path / "store" / "logs.sqlite")
    with serial_unit(root) as u:
        link = FaultyLink(u.pty_path, plan={1: ("flip", logpull.CHUNK + 2 * logpull.FRAME_HDR + 1000)})
        try:
            res = pull_unit(link, store)
        finally:
            link.close()
    check_pulled(store, root, logs, res)
    assert link.streams == [0, logpull.CHUNK]  # the damaged 2nd frame was refused and streamed again


def test_hostile_names_refused(tmp_path):
    """Names the firmware's own check lets through but the host refuses, and a unit whose (tampered) firmware
    lists path escapes: none is fetched, written or marked; the good log still comes."""
    logs = logs_for(4, [20])
    root = tmp_path / "unit"
    write_unit(root, logs)
    odd = {"00002-EVIL.jsonl": b"x", "a.b.jsonl": b"x", "00003-" + "a" * 50 + ".jsonl": b"x"}
    write_unit(root, odd)
    store = Store(tmp_path / "store" / "logs.sqlite")
    with serial_unit(root) as u:
        link = ReplLink(u.pty_path)
        try:
            res = pull_unit(link, store)
        finally:
            link.close()
    assert sorted(o.status for o in res.outcomes) == ["pulled"] + ["refused"] * 3
    assert not any((root / "logs" / (n + ".pulled")).exists() for n in odd)

    # A unit whose logstore lists escapes (a shadowing maus package on its flash).
    evil = tmp_path / "evil"
    write_unit(evil, logs)
    (evil / "maus").mkdir()
    (evil / "maus" / "__init__.py").write_text("")
    sha = hashlib.sha256(logs["00001-mg.jsonl"]).hexdigest()
    (evil / "maus" / "logstore.py").write_text(
        "class LogStore:\n"
        "    def listing(self):\n"
        "        return [('../../../../tmp/pwned.jsonl', 20, %r, False), ('/etc/passwd', 20, %r, False),\n"
        "                ('logs/../../x.jsonl', 5, %r, False), ('00001-mg.jsonl', %d, %r, False)]\n"
        "    def mark_pulled(self, name, sha):\n"
        "        return True\n" % (sha, sha, sha, len(logs["00001-mg.jsonl"]), sha))
    store2 = Store(tmp_path / "store2" / "logs.sqlite")
    with serial_unit(evil) as u:
        link = ReplLink(u.pty_path)
        try:
            res = pull_unit(link, store2)
        finally:
            link.close()
    assert sorted(o.status for o in res.outcomes) == ["pulled", "refused", "refused", "refused"]
    assert any("path escape" in o.detail for o in res.outcomes)
    assert not os.path.exists("/tmp/pwned.jsonl")
    files = sorted(str(p.relative_to(tmp_path / "store2")) for p in (tmp_path / "store2").rglob("*") if p.is_file())
    assert files == ["logs.sqlite", f"raw/{UID}/00001-mg.jsonl"]


def test_a_handful_of_faulty_pulls_through_the_pty(tmp_path):
    """Random flips, dropped bytes and lost links on 5 % of the reads that carry frame payloads."""
    logs = logs_for(5, [300, 50, 600, 10, 200])
    root = tmp_path / "unit"
    write_unit(root, logs)
    store = Store(tmp_path / "store" / "logs.sqlite")
    t0 = time.monotonic()
    faults = 0
    with serial_unit(root) as u:
        for seed in range(3):
            for f in (root / "logs").glob("*.pulled"):
                f.unlink()
            for p in store.raw_dir(UID).glob("*") if store.raw_dir(UID).exists() else []:
                p.unlink()
            link = FaultyLink(u.pty_path, rate=0.05, seed=seed)
            try:
                res = pull_unit(link, store)
            finally:
                link.close()
            faults += link.faults
            check_pulled(store, root, logs, res)
    assert faults >= 1
    assert time.monotonic() - t0 < 120


def test_the_link_reports_a_dead_port(tmp_path):
    with pytest.raises(LinkLost):
        ReplLink(str(tmp_path / "no-such-port"), open_tries=1)


def test_cli_pull_all_units_in_parallel(tmp_path, monkeypatch, capsys):
    """`mausbox logs pull --all`: every running virtual unit (they announce themselves), one thread each."""
    import json

    from mausbox.cli import main

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    roots = []
    for i, sizes in enumerate(([40, 200], [100], [5, 5, 5])):
        root = tmp_path / ("unit%d" % i)
        logs = logs_for(10 + i, sizes, unit="5e1d0000000%d" % i)
        write_unit(root, logs, "5e1d0000000%d" % i)
        roots.append((root, logs))
    from mausbox.sim.serial import SerialUnit

    units = [SerialUnit(r, extra_path=[str(FIRMWARE_DIR)], register=True) for r, _ in roots]
    for u in units:
        u.start()
    try:
        store = tmp_path / "store" / "logs.sqlite"
        rc = main(["logs", "pull", "--all", "--store", str(store), "--json", "--no-restart"])
        out = json.loads(capsys.readouterr().out)
    finally:
        for u in units:
            u.stop()
    assert len(out) == 3 and all(not r["error"] for r in out)
    assert rc == 0
    pulled = sorted((r["unit"], log["name"]) for r in out for log in r["logs"] if log["status"] == "pulled")
    assert pulled == sorted(("5e1d0000000%d" % i, n) for i, (_, logs) in enumerate(roots) for n in logs)
    for i, (root, logs) in enumerate(roots):
        for n, data in logs.items():
            assert (store.parent / "raw" / ("5e1d0000000%d" % i) / n).read_bytes() == data
            assert (root / "logs" / (n + ".pulled")).exists()
    assert main(["logs", "list", "--store", str(store), "--json"]) == 0
    assert sorted(g["unit"] for g in json.loads(capsys.readouterr().out)) == ["5e1d00000000"] * 2 + ["5e1d00000001"] + ["5e1d00000002"] * 3
