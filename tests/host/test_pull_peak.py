"""A `logs pull` at the heaviest moment of every game's largest scenario (issue 27, "Must show"): at the board's heap
with the board-only modules held, 20 runs each, 0 MemoryError.

Each run is one process on the 32-bit MicroPython build (tests/fw/pullpeak.py, tests/fw/unitheap.py pull_run): the
game's largest scenario with a host pulling all through it (the listing and a read of the log being written every
500 ms), starting 25 ms later in each run, so that over the 20 runs a pull lands at every moment of the game, its
heaviest among them. bench/bench_pull_peak.py prints the same runs' counts.
"""

from __future__ import annotations

import pytest
from conftest import FWTESTS, MAIN, run_micropython

RUNS = 20
STEP_MS = 25  # bench/bench_pull_peak.py
GAMES = (("mg-6p-ties", "mg"), ("mim-b-5p", "mim"), ("mim-c-5p", "mim"), ("mms-4p-full", "mms"))

pytestmark = pytest.mark.skipif(MAIN.binary is None, reason="no 32-bit MicroPython (make setup)")


@pytest.mark.parametrize("scen,game", GAMES)
def test_a_pull_at_every_moment_of_the_largest_scenario_leaves_the_game_whole(scen, game):
    bad = []
    for k in range(RUNS):
        p = run_micropython(FWTESTS / "pullpeak.py", scen, game, str(k * STEP_MS), budget="board")
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        got = [ln.split()[1] for ln in out.splitlines() if ln.startswith("PULLPEAK ")]
        res = got[-1] if got else "memory" if "MemoryError" in out else "crash"
        # ok, or every request answered but one after the line's quick wait (slow: a race window held it) or
        # answered "nomem" (busy: the host asks again); anything else is a failure (unitheap.pull_run)
        if res not in ("ok", "slow", "busy"):
            bad.append("offset %d ms: %s\n%s" % (k * STEP_MS, res, out[-1500:]))
    assert not bad, "\n".join(bad)
