"""A `logs pull` at the heaviest moment of every game's largest scenario (issue 27, "Must show"): at the board's heap
with the board-only modules held, 20 runs each, 0 MemoryError.

Each run is one process on the 32-bit MicroPython build (tests/fw/pullpeak.py, tests/fw/unitheap.py pull_run), as a
board boots afresh: the game's largest scenario with a host pulling all through it, the listing and a read of the log
being written every 500 ms (unitheap.pulling), from 500 ms + 25 ms x the run's number on. Over the 20 runs a pull
starts within 25 ms of every moment of the game, its heaviest among them, each time in another heap (its own work
folder and pull times). Any run that ends otherwise than ok fails the test and is named: a MemoryError out of the
firmware ("memory"), a crash, a request left unanswered, another end or other scores than the game alone. "slow"
(a request answered only after the line's quick wait of 3 s: a race window held it, the host waits up to 10 s) and
"busy" (answered "nomem": the host asks again) are answers.

The games' largest scenarios (docs/build.md, the heap table: the worst of each game): mg-6p-ties, mim-b-5p (M is
for Mouse; mim-c-5p, its other five-player variant, peaks lower) and mms-4p-full. bench/bench_pull_peak.py runs the
same 20 runs for mim-c-5p too and prints the counts (`season.pull_at_peak_*`).

A run costs its game's play, 1.5-3 s of CPU: 60 runs, about 2.5 CPU minutes, two processes at a time (the file is one
xdist worker's under `make test`, --dist loadfile).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import FWTESTS, MAIN, run_micropython

RUNS = 20
STEP_MS = 25  # between the runs' first pulls: 20 x 25 ms = the 500 ms between a run's pulls
GAMES = (("mg-6p-ties", "mg"), ("mim-b-5p", "mim"), ("mms-4p-full", "mms"))

pytestmark = pytest.mark.skipif(MAIN.binary is None, reason="no 32-bit MicroPython (make setup)")


def _run(scen: str, game: str, k: int) -> tuple[int, str, str]:
    p = run_micropython(FWTESTS / "pullpeak.py", scen, game, str(k * STEP_MS), budget="board")
    out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    got = [ln.split() for ln in out.splitlines() if ln.startswith("PULLPEAK ")]
    res = got[-1][1] if got and p.returncode == 0 else "memory" if "MemoryError" in out else "crash"
    return k, res, out[-1500:]


@pytest.mark.parametrize("scen,game", GAMES)
def test_a_pull_at_every_moment_of_the_largest_scenario_leaves_the_game_whole(scen, game):
    MAIN.tree()  # the firmware compiled once, before the runs share it
    with ThreadPoolExecutor(2) as pool:  # each run is its own MicroPython process
        results = list(pool.map(lambda k: _run(scen, game, k), range(RUNS)))
    assert len(results) == RUNS
    bad = ["offset %d ms: %s\n%s" % (k * STEP_MS, res, out) for k, res, out in results
           if res not in ("ok", "slow", "busy")]
    assert not bad, "%d of %d runs failed:\n%s" % (len(bad), RUNS, "\n".join(bad))
