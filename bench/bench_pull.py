"""Log-pull throughput over the virtual unit at 115200 baud with a 20 ms exec delay, beside `mpremote fs cp`;
then a pull of many small logs (MAUSBOX_BENCH_PULL_LOGS, default 2,000) through the faulty cable of the
reliability tests (host/mausbox/sim/relay.py: 2 % of kilobytes flipped, dropped or sent twice, both ways), beside
the same pull through the same relay with no faults: every log must arrive, each byte for byte.

The link carries at most 11,520 B/s (10 bits a byte). The unit runs its app (real time, in the menu); `mausbox
logs pull` asks its host service, end to end: open, hello, listing, one stream, verification, store, pulled
mark. Then `mpremote fs cp` copies the same 60 kB log in the same run over the same pty (it stops the app and
works in the raw REPL, where every exec pays the delay).
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "host"), str(HERE.parent / "firmware")]

import mausbox  # noqa: E402,F401  (installs the micropython shim)
from maus.log import writer as gamelog  # noqa: E402
from mausbox.cmd_sim import served_unit  # noqa: E402
from mausbox.link import LinkError, UnitLink  # noqa: E402
from mausbox.logpull import pull_unit  # noqa: E402
from mausbox.sim import run as simrun  # noqa: E402
from mausbox.sim.relay import FaultyRelay  # noqa: E402
from mausbox.sim.serial import SerialUnitError  # noqa: E402
from mausbox.store import Store  # noqa: E402

BAUD = 115200
LINK = BAUD / 10
SIZE = 60_000


def make_log(size: int) -> bytes:
    rng = random.Random(60)
    lines = [gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mg", "variant": None, "board": "sim",
                                                   "unit": "bench", "fw": "0.1", "settings": {}, "wall": None,
                                                   "ticks": 0, "players": [{"id": 1, "colour": "red", "young": False}]})]
    seq = t = 0
    while sum(map(len, lines)) < size - 200:
        seq += 1
        t += rng.randrange(100, 3000)
        lines.append(gamelog.encode(seq, t, "press", {"player": rng.randrange(1, 5), "offset_us": rng.randrange(10**6),
                                                      "kind": "valid"}))
    lines.append(gamelog.encode(seq + 1, t, "game_end", {"scores": {"1": 1}, "winners": [1], "breakdown": {},
                                                         "why": "bench"}))
    return b"".join(lines)


@contextmanager
def virtual_unit(tmp: Path, logs: dict[str, bytes], **kw):
    """A fresh virtual unit holding `logs`, its app running in real time (idling between passes as on a
    board) once it has booted: the SerialUnit."""
    root = tmp / "unit"
    simrun.prepare_root(root)
    (root / "logs").mkdir(parents=True)
    for name, data in logs.items():
        (root / "logs" / name).write_bytes(data)
    (root / "logs" / "counter").write_text(str(len(logs) + 1))
    try:
        with served_unit(root, simrun.DEFAULT_HEAP, **kw) as unit:
            time.sleep(0.5)  # the boot's console output has gone out
            yield unit
    except SerialUnitError:
        raise SystemExit("pull.failed: 1 flag (the app did not start)") from None


def main() -> int:
    data = make_log(SIZE)
    name = "00001-mg.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store" / "logs.sqlite")
        with virtual_unit(Path(tmp), {name: data}, baud=BAUD, exec_delay_ms=20) as unit:
            t0 = time.monotonic()
            with UnitLink(unit.pty_path, timeout=10) as link:
                res = pull_unit(link, store)
            t_pull = time.monotonic() - t0
            assert not res.error and res.outcomes[0].status == "pulled", res
            assert (store.raw_dir(res.unit) / name).read_bytes() == data

            dest = Path(tmp) / "cp.jsonl"
            t0 = time.monotonic()
            proc = subprocess.run([str(Path(sys.executable).parent / "mpremote"), "connect", unit.pty_path,
                                   "fs", "cp", ":logs/" + name, str(dest)], capture_output=True, timeout=600)
            t_cp = time.monotonic() - t0
            ok_cp = proc.returncode == 0 and dest.read_bytes() == data
    n = len(data)
    print("pull.log_size: %d bytes" % n)
    print("pull.logs_pull_time: %.2f s" % t_pull)
    print("pull.logs_pull_rate: %.0f B/s" % (n / t_pull))
    print("pull.logs_pull_link_fraction: %.1f %%" % (100 * n / t_pull / LINK))
    if ok_cp:
        print("pull.mpremote_cp_time: %.2f s" % t_cp)
        print("pull.mpremote_cp_rate: %.0f B/s" % (n / t_cp))
        print("pull.mpremote_cp_link_fraction: %.1f %%" % (100 * n / t_cp / LINK))
        print("pull.speedup_over_mpremote_cp: %.2f x" % (t_cp / t_pull))
    else:
        print("pull.mpremote_cp_failed: 1 flag")
        sys.stderr.write(proc.stderr.decode("utf-8", "replace")[-2000:])
    return 0


FLASH_16MB = 16 * 1024 * 1024 - 0x200000  # the vfs partition of a 16 MB module (app and the rest: 2 MiB)
TIMEOUT = 3.0  # s, the pulls' --timeout: a virtual unit's pass on a busy machine can take a second


def small_logs(n: int) -> dict[str, bytes]:
    out = {}
    for i in range(n):
        rng = random.Random(i)
        lines = [gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mg", "variant": None, "board": "sim",
                                                       "unit": "bench", "fw": "0.1", "settings": {}, "wall": None,
                                                       "ticks": 0, "players": [{"id": 1, "colour": "red",
                                                                                "young": False}]})]
        t = 0
        for seq in range(1, rng.randrange(4, 12)):
            t += rng.randrange(100, 3000)
            lines.append(gamelog.encode(seq, t, "press", {"player": 1, "offset_us": rng.randrange(10**6),
                                                          "kind": "valid"}))
        lines.append(gamelog.encode(len(lines), t, "game_end", {"scores": {"1": 1}, "winners": [1],
                                                                "breakdown": {}, "why": "bench"}))
        out["%05d-mg.jsonl" % (i + 1)] = b"".join(lines)
    return out


def _say(msg: str) -> None:
    import os

    if os.environ.get("MAUSBOX_BENCH_VERBOSE"):
        sys.stderr.write("%.3f %s\n" % (time.monotonic(), msg))


def service_up(port: str) -> bool:
    """Bring the unit's host service up before the timed pull (a unit that just booted may still be busy):
    the app's, or the one started from the REPL when the app is not running, left running for the pull.
    True if the app serves."""
    with UnitLink(port, timeout=120) as first:
        first.hello()
        try:
            first.listing()  # the app's listing, or the served one
        except LinkError as e:
            _say("the first listing: %s" % e)
            first.info = None
            first.hello()
        app = not first.served
        _say("the service runs %s" % ("in the app" if app else "from the REPL"))
        first.served = False  # no `exit`: the served service stays for the pull
    return app


def pull_through(relay: FaultyRelay, store: Store, logs: dict[str, bytes]) -> tuple[float, dict]:
    """One whole pull of `logs` through `relay` (a clean one has rate 0), as a user would: `mausbox logs
    pull` again until nothing is left (each run resumes), at most 3 runs: (seconds, tally)."""
    links: list[UnitLink] = []

    def connect():
        for old in links:
            old.close()
        links[:] = [UnitLink(relay.port, timeout=TIMEOUT)]
        return links[0]

    tally = {"pulled": 0, "wrong": 0, "missing": 0, "failed": 0, "retries": 0, "runs": 0}
    t0 = time.monotonic()
    res = None
    unit_id = None
    for _ in range(3):
        res = pull_unit(connect(), store, reconnect=connect, log=_say)
        tally["runs"] += 1
        unit_id = res.unit or unit_id  # the unit's id from any pull that got as far as the listing
        tally["retries"] += sum(o.retries for o in res.outcomes)
        _say("pull run %d: %s" % (tally["runs"], res.error or "%d failed" % sum(
            o.status not in ("pulled", "skipped") for o in res.outcomes)))
        if not res.error and all(o.status in ("pulled", "skipped") for o in res.outcomes):
            break
    took = time.monotonic() - t0
    for lk in links:
        lk.close()
    assert res is not None
    if res.error:
        sys.stderr.write("pull through the relay: %s\n" % res.error)
    tally["failed"] = sum(o.status not in ("pulled", "skipped") for o in res.outcomes)
    for name, data in logs.items():
        got = store.raw_dir(unit_id or "unknown") / name
        if not got.exists():
            tally["missing"] += 1
        elif got.read_bytes() != data:
            tally["wrong"] += 1
        else:
            tally["pulled"] += 1
    tally["faults"], tally["kilobytes"] = relay.faults, relay.kilobytes
    return took, tally


def faulty() -> None:
    import os

    n = int(os.environ.get("MAUSBOX_BENCH_PULL_LOGS", "2000"))
    logs = small_logs(n)
    got = {}
    with tempfile.TemporaryDirectory() as tmp:
        for tag, rate in (("clean", 0.0), ("faulty_2pct", 0.02)):
            # 2,000 logs of a 4 KB block each: the flash of a 16 MB module (its vfs partition), as
            # tests/host/test_boot_many_logs.py; the virtual unit's 2 MiB default holds ~480 and does not boot
            with virtual_unit(Path(tmp) / tag, logs, env={"MAUSBOX_FLASH_BYTES": str(FLASH_16MB)}) as unit:
                app = service_up(unit.pty_path)
                with FaultyRelay(unit.pty_path, rate=rate, seed=2) as relay:
                    took, tally = pull_through(relay, Store(Path(tmp) / tag / "store" / "logs.sqlite"), logs)
            got[tag] = took, tally, app
    (t_clean, clean, app_clean), (t_bad, bad, app_bad) = got["clean"], got["faulty_2pct"]
    print("pull.clean.logs: %d count" % clean["pulled"])
    print("pull.clean.time: %.1f s" % t_clean)
    print("pull.faulty_2pct.logs: %d count" % bad["pulled"])
    print("pull.faulty_2pct.wrong_files: %d count" % bad["wrong"])
    print("pull.faulty_2pct.missing_files: %d count" % bad["missing"])
    print("pull.faulty_2pct.time: %.1f s" % t_bad)
    print("pull.faulty_2pct.time_ratio_vs_clean: %.2f x" % (t_bad / t_clean))
    print("pull.faulty_2pct.pull_runs: %d count" % bad["runs"])
    print("pull.faulty_2pct.retries: %d count" % bad["retries"])
    print("pull.faulty_2pct.faults: %d count" % bad["faults"])
    print("pull.faulty_2pct.kilobytes_relayed: %d count" % bad["kilobytes"])
    # 1: the unit's app served the pull; 0: it was not running (a unit whose app crashed at boot sits in safe
    # mode), and the service started from the REPL did
    print("pull.faulty_2pct.served_by_app: %d flag" % app_bad)
    print("pull.clean.served_by_app: %d flag" % app_clean)


if __name__ == "__main__":
    if "--faulty-only" in sys.argv:
        faulty()
        raise SystemExit(0)
    rc = main()
    faulty()
    raise SystemExit(rc)
