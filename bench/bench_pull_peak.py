"""A `logs pull` at the heaviest moment of each game's largest scenario (issue 27): `season.pull_at_peak_*` lines.

Each game's largest scenario (mg-6p-ties, mim-b-5p, mim-c-5p, mms-4p-full) is played RUNS times on the 32-bit
MicroPython build at the board's heap (the virtual unit's: heapbudget.unit_heap) with the board-only modules held
(heapbudget.BOARD_ONLY), a host pulling all through it: the listing and a read of the log being written every
500 ms, starting 25 ms later in each run (tests/fw/unitheap.py pulling), so that over the runs a pull lands at
every moment of the game, its heaviest among them. Each run also has its own work folder, so its own heap layout.

Printed: season.pull_at_peak_runs, season.pull_at_peak_memory_errors (a MemoryError out of the firmware),
season.pull_at_peak_unanswered (a request without its answer), season.pull_at_peak_other (the game did not end as
alone, or its scores differ); each failure named on stderr. season.pull_at_peak_slow_runs: runs where a request
was answered only after the line's quick wait (3 s): a race window (the unit reads nothing but the buttons until
it closes) held it; the host waits longer (mausbox.link.bounds.IDLE, 10 s). season.pull_at_peak_busy_runs: runs
where a request was answered "nomem" (no room for the answer just then: the host asks again after 0.25 s).

The margin: the heaviest scenario's 20 runs again with MARGINS bytes more held beside the unit (as a firmware that
took that much more would hold them): season.pull_at_peak_margin.held_<n>_bytes_failed_runs. A run that passes at
the board's heap only by its layout's luck fails here first.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "fw")]

from mausbox.mpbuild import micropython_binary  # noqa: E402

RUNS = 20
STEP_MS = 25
GAMES = (("mg-6p-ties", "mg"), ("mim-b-5p", "mim"), ("mim-c-5p", "mim"), ("mms-4p-full", "mms"))
MARGINS = (2000, 4000)


def one(job: tuple) -> tuple[str, int, str]:
    import conftest

    scen, game, k, *held = job
    p = conftest.run_micropython(conftest.FWTESTS / "pullpeak.py", scen, game, str(k * STEP_MS), *map(str, held),
                                 budget="board")
    out = p.stdout.decode(errors="replace")
    got = [ln.split()[1] for ln in out.splitlines() if ln.startswith("PULLPEAK ")]
    if got:
        return scen, k, got[-1]
    return scen, k, "memory" if "MemoryError" in out + p.stderr.decode(errors="replace") else "crash"


def main() -> int:
    if micropython_binary() is None:
        print("season.pull_at_peak_skipped: 1 flag (no MicroPython unix port)")
        return 0
    import conftest

    conftest.MAIN.tree()  # the firmware compiled once, before the runs share it
    jobs = [(s, g, k) for s, g in GAMES for k in range(RUNS)]
    held = [(*GAMES[0], k, b) for b in MARGINS for k in range(RUNS)]
    with ThreadPoolExecutor(2) as pool:  # each run is its own MicroPython process
        results = list(pool.map(one, jobs))
        margin = list(pool.map(one, held))
    slow = sum(1 for r in results if r[2] == "slow")
    busy = sum(1 for r in results if r[2] == "busy")
    bad = [r for r in results if r[2] not in ("ok", "slow", "busy")]
    for scen, k, what in bad:  # named among the figures too: make bench shows a bench's stderr only when it fails
        print(f"pull at peak: {scen} offset {k * STEP_MS} ms: {what}", file=sys.stderr)
        print(f"season.pull_at_peak_failed.{scen}.offset_{k * STEP_MS}_ms: 1 flag ({what})")
    count = {w: sum(1 for r in bad if r[2] == w) for w in ("memory", "unanswered")}
    print(f"season.pull_at_peak_runs: {len(results)} count")
    print(f"season.pull_at_peak_memory_errors: {count['memory']} count")
    print(f"season.pull_at_peak_unanswered: {count['unanswered']} count")
    print(f"season.pull_at_peak_other: {len(bad) - count['memory'] - count['unanswered']} count")
    print(f"season.pull_at_peak_slow_runs: {slow} count")
    print(f"season.pull_at_peak_busy_runs: {busy} count")
    for i, b in enumerate(MARGINS):
        runs = margin[i * RUNS:(i + 1) * RUNS]
        failed = sum(1 for r in runs if r[2] not in ("ok", "slow", "busy"))
        print(f"season.pull_at_peak_margin.held_{b}_bytes_failed_runs: {failed} count ({GAMES[0][0]}, of {RUNS})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
