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
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "host"), str(HERE.parent / "firmware")]

import mausbox  # noqa: E402,F401  (installs the micropython shim)
from maus import gamelog  # noqa: E402
from mausbox.cmd_sim import wait_ready  # noqa: E402
from mausbox.link import LinkError, UnitLink  # noqa: E402
from mausbox.logpull import pull_unit  # noqa: E402
from mausbox.sim import run as simrun  # noqa: E402
from mausbox.sim import tui as simtui  # noqa: E402
from mausbox.sim.relay import FaultyRelay  # noqa: E402
from mausbox.sim.serial import SerialUnit  # noqa: E402
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


def main() -> int:
    data = make_log(SIZE)
    name = "00001-mg.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "unit"
        simrun.prepare_root(root)
        (root / "logs").mkdir(parents=True)
        (root / "logs" / name).write_bytes(data)
        store = Store(Path(tmp) / "store" / "logs.sqlite")
        fifo = simtui.Link(root)  # real time: the app idles between passes as on a board
        stop = threading.Event()

        def pump():
            while not stop.is_set():
                fifo.pump()
                time.sleep(0.02)

        threading.Thread(target=pump, daemon=True).start()
        since = time.time() - 1
        with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, baud=BAUD, exec_delay_ms=20, env=fifo.env()) as unit:
            if not wait_ready(root, since):
                print("pull.failed: 1 flag (the app did not start)")
                return 1
            time.sleep(0.5)  # the boot's console output has gone out
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
        stop.set()
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
        sys.stderr.write(msg + "\n")


def pull_through(tmp: Path, tag: str, logs: dict[str, bytes], rate: float, timeout: float) -> tuple[float, dict]:
    """One whole pull of `logs` from a fresh virtual unit through a relay of this fault rate: (seconds, tally)."""
    root = tmp / tag / "unit"
    simrun.prepare_root(root)
    (root / "logs").mkdir(parents=True)
    for name, data in logs.items():
        (root / "logs" / name).write_bytes(data)
    (root / "logs" / "counter").write_text(str(len(logs) + 1))
    store = Store(tmp / tag / "store" / "logs.sqlite")
    fifo = simtui.Link(root)
    stop = threading.Event()

    def pump():
        while not stop.is_set():
            fifo.pump()
            time.sleep(0.02)

    threading.Thread(target=pump, daemon=True).start()
    since = time.time() - 1
    tally = {"pulled": 0, "wrong": 0, "missing": 0, "failed": 0, "retries": 0, "faults": 0, "kilobytes": 0}
    try:
        with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env=fifo.env()) as unit:
            if not wait_ready(root, since):
                raise SystemExit("pull.failed: 1 flag (the app did not start)")
            # With 2,000 logs the virtual unit's app stops at its first listing today (its listing does not
            # fit the unit's heap beside the app: issue 27), so the service runs from the REPL, as `mausbox`
            # starts it on a unit whose app is not running; it is left running for the pull (no `exit`).
            with UnitLink(unit.pty_path, timeout=120) as first:
                first.hello()
                try:
                    first.listing()  # the app's listing (it stops there), or the served one
                except LinkError as e:
                    _say("the first listing: %s" % e)
                first.info = None
                first.hello()
                _say("the service runs %s" % ("from the REPL" if first.served else "in the app"))
                first.served = False
            with FaultyRelay(unit.pty_path, rate=rate, seed=2) as rl:
                links = []

                def connect():
                    for old in links:
                        old.close()
                    links[:] = [UnitLink(rl.port, timeout=timeout)]
                    return links[0]

                t0 = time.monotonic()
                res = None
                unit_id = None
                for _ in range(3):  # as a user would: pull again until nothing is left (each run resumes)
                    res = pull_unit(connect(), store, reconnect=connect, log=_say)
                    unit_id = res.unit or unit_id
                    for o in res.outcomes:
                        tally["retries"] += o.retries
                    if not res.error and all(o.status in ("pulled", "skipped") for o in res.outcomes):
                        break
                took = time.monotonic() - t0
                for lk in links:
                    lk.close()
                tally["faults"], tally["kilobytes"] = rl.faults, rl.kilobytes
    finally:
        stop.set()
    assert res is not None
    unit_id = unit_id or "unknown"  # the unit's id from any pull that got as far as the listing
    for o in res.outcomes:
        tally["failed"] += o.status not in ("pulled", "skipped")
    for name, data in logs.items():
        got = store.raw_dir(unit_id) / name
        if not got.exists():
            tally["missing"] += 1
        elif got.read_bytes() != data:
            tally["wrong"] += 1
        else:
            tally["pulled"] += 1
    if res.error:
        sys.stderr.write("pull through the relay (%s): %s\n" % (tag, res.error))
    return took, tally


def faulty() -> None:
    import os

    n = int(os.environ.get("MAUSBOX_BENCH_PULL_LOGS", "2000"))
    logs = small_logs(n)
    with tempfile.TemporaryDirectory() as tmp:
        t_clean, clean = pull_through(Path(tmp), "clean", logs, 0.0, TIMEOUT)
        t_bad, bad = pull_through(Path(tmp), "faulty", logs, 0.02, TIMEOUT)
    print("pull.clean.logs: %d count" % clean["pulled"])
    print("pull.clean.time: %.1f s" % t_clean)
    print("pull.faulty_2pct.logs: %d count" % bad["pulled"])
    print("pull.faulty_2pct.wrong_files: %d count" % bad["wrong"])
    print("pull.faulty_2pct.missing_files: %d count" % bad["missing"])
    print("pull.faulty_2pct.time: %.1f s" % t_bad)
    print("pull.faulty_2pct.time_ratio_vs_clean: %.2f x" % (t_bad / t_clean))
    print("pull.faulty_2pct.retries: %d count" % bad["retries"])
    print("pull.faulty_2pct.faults: %d count" % bad["faults"])
    print("pull.faulty_2pct.kilobytes_relayed: %d count" % bad["kilobytes"])


if __name__ == "__main__":
    if "--faulty-only" in sys.argv:
        faulty()
        raise SystemExit(0)
    rc = main()
    faulty()
    raise SystemExit(rc)
