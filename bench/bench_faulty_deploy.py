"""Deploys through a faulty cable: the real deploy code (plan, checked commands, writes, the check of every file
on the unit and the re-sends) over the relay of the reliability tests and of the pull bench
(host/mausbox/sim/relay.py: 2 % of kilobytes flipped, dropped or sent twice, both ways) between the host and a
virtual unit. A small set of firmware files (3, ~11 KB) is deployed again and again, each time
after removing it from the unit's folder. The figure that must stay 0: deploys that returned success while a
file on the unit differs from the host's. Two units at once, to keep it short.

    MAUSBOX_BENCH_DEPLOYS=200 (default) deploys in all."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

import mausbox  # noqa: E402,F401 - installs the micropython shim
from mausbox.cli import UserError  # noqa: E402
from mausbox.deploy import deploy  # noqa: E402
from mausbox.link import UnitLink  # noqa: E402
from mausbox.mpbuild import micropython_binary  # noqa: E402
from mausbox.paths import FIRMWARE_PKG  # noqa: E402
from mausbox.sim.relay import FaultyRelay  # noqa: E402
from mausbox.sim.serial import SerialUnit  # noqa: E402

FILES = {"maus/" + n: (FIRMWARE_PKG / n).read_bytes() for n in ("log/store.py", "log/read.py", "ticks.py")}
RATE = 0.02  # of kilobytes, each way: the pull bench's rate
TIMEOUT = 0.5  # the virtual unit answers in milliseconds; a damaged exchange costs this much


def worker(root: Path, n: int, seed: int, tally: dict, lock: threading.Lock) -> None:
    with SerialUnit(root, heapsize="512k", extra_path=[]) as unit, FaultyRelay(unit.pty_path, RATE, 1024, seed) as rl:
        for _ in range(n):
            for p in FILES:
                (root / p).unlink(missing_ok=True)
            try:
                with UnitLink(rl.port, timeout=TIMEOUT) as link:
                    rep = deploy(link, say=lambda *a: None, confirm_s=0, mip=False, only=FILES)
                ok = True
            except UserError:  # LinkError too: a loud failure, exit code 1 or 4
                ok, rep = False, None
            same = all((root / p).is_file() and (root / p).read_bytes() == d for p, d in FILES.items())
            with lock:
                tally["deploys"] += 1
                tally["ok" if ok else "failed"] += 1
                tally["mismatch"] += ok and not same
                if rep is not None:
                    tally["resent"] += sum("sent again" in x for x in rep.notes)
        with lock:
            tally["chunks"] += rl.chunks
            tally["flipped"] += rl.faults


def main() -> int:
    if micropython_binary() is None:
        print("deploy.faulty_2pct.skipped: 1 flag")
        return 0
    total = int(os.environ.get("MAUSBOX_BENCH_DEPLOYS", "200"))
    tally = dict.fromkeys(("deploys", "ok", "failed", "mismatch", "resent", "chunks", "flipped"), 0)
    lock = threading.Lock()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        roots = [Path(tmp) / f"unit{i}" for i in range(2)]
        for r in roots:
            r.mkdir()
        ts = [threading.Thread(target=worker, args=(r, total // 2 + (i < total % 2), 18 + i, tally, lock))
              for i, r in enumerate(roots)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    took = time.monotonic() - t0
    print(f"deploy.faulty_2pct.deploys: {tally['deploys']} count")
    print(f"deploy.faulty_2pct.success: {tally['ok']} count")
    print(f"deploy.faulty_2pct.success_with_mismatch: {tally['mismatch']} count")
    print(f"deploy.faulty_2pct.failed_loudly: {tally['failed']} count")
    print(f"deploy.faulty_2pct.deploys_that_resent_or_refused: {tally['resent']} count")
    print(f"deploy.faulty_2pct.kilobytes_damaged: {tally['flipped']} count")
    print(f"deploy.faulty_2pct.reads_relayed: {tally['chunks']} count")
    print(f"deploy.faulty_2pct.time_per_deploy: {took / max(1, tally['deploys']):.2f} s")
    return 0 if tally["mismatch"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
