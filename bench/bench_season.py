"""A unit that lives a season (issue 27), the part built so far: boot time with 2,000 finished logs beside an
empty unit, on the virtual unit (`mausbox sim --serial`'s interpreter at the default heap, real time).

- season.boot_ms_empty: power-on to MAUSBOX READY (status.json written) with no logs.
- season.boot_ms_2000_logs: the same with 2,000 finished logs, a third of them pulled, filling the virtual
  flash (tests/host/fullflash.py). Boot recovery reads only the newest log (docs/log-format.md), so this stays
  within 10 % of the empty boot. Each is the median of --runs boots (default 3).

Not built yet: the 300-game season itself (games, crashes, memory_errors, watchdog_resets, unpulled_lost,
records_lost, capture p99 with and without polling); nothing of it is printed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "tests" / "host"), str(ROOT / "firmware")]

from mausbox.paths import micropython_binary  # noqa: E402


def boot_ms(root: Path) -> float:
    from mausbox.cmd_sim import wait_ready
    from mausbox.sim import run as simrun
    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit

    (root / "status.json").unlink(missing_ok=True)
    (root / ".sim").mkdir(exist_ok=True)
    ctl = simtui.Link(root)
    since = time.time() - 1
    t0 = time.monotonic()
    with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env=ctl.env()):
        assert wait_ready(root, since, timeout=600), "the virtual unit did not boot"
        return (time.monotonic() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if micropython_binary() is None:
        print("season.skipped: 1 flag")
        return 0
    from fullflash import fill
    from mausbox.sim import run as simrun

    with tempfile.TemporaryDirectory() as d:
        base = Path(d) / "fw"
        simrun.prepare_root(base)
        empty = Path(d) / "empty"
        full = Path(d) / "full"
        shutil.copytree(base, empty)
        shutil.copytree(base, full)
        fill(full, 2000)
        e, f = [], []
        for _ in range(args.runs):  # interleaved: a busy machine weighs on both alike
            e.append(boot_ms(empty))
            f.append(boot_ms(full))
        me, mf = statistics.median(e), statistics.median(f)
        print(f"season.boot_ms_empty: {me:.0f} ms", flush=True)
        print(f"season.boot_ms_2000_logs: {mf:.0f} ms", flush=True)
        print(f"season.boot_2000_logs_over_empty: {100 * (mf - me) / me:.1f} %", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
