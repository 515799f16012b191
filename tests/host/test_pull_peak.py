"""A `logs pull` at the heaviest moment of every game's largest scenario (issue 27, "Must show"): at the board's heap
with the board-only modules held, 0 MemoryError.

Each run is one process on the 32-bit MicroPython build (tests/fw/pullpeak.py, tests/fw/unitheap.py pull_run): the
game's largest scenario with a host pulling all through it (the listing and a read of the log being written), as
fast as the line lets it: a pull asked whenever the line is free, looked at every 25 ms (unitheap.sweeping), so a
pull is on the wire or being answered at every moment of the game, its heaviest among them, with at most 25 ms of
quiet line between two. Two runs a game, the second's pulls looked for 12 ms later (another phase, another heap).

bench/bench_pull_peak.py runs the issue's 20 runs a game (a pull every 500 ms, each run 25 ms later than the one
before: the same moments over 20 heaps, at ten times this test's CPU: the game's play, not the pulls, is what a run
costs).
"""

from __future__ import annotations

import pytest
from conftest import FWTESTS, MAIN, run_micropython

PHASES_MS = (0, 12)
GAMES = (("mg-6p-ties", "mg"), ("mim-b-5p", "mim"), ("mim-c-5p", "mim"), ("mms-4p-full", "mms"))

pytestmark = pytest.mark.skipif(MAIN.binary is None, reason="no 32-bit MicroPython (make setup)")


@pytest.mark.parametrize("scen,game", GAMES)
def test_a_pull_at_every_moment_of_the_largest_scenario_leaves_the_game_whole(scen, game):
    bad = []
    for phase in PHASES_MS:
        p = run_micropython(FWTESTS / "pullpeak.py", scen, game, "sweep", str(phase), budget="board")
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        got = [ln.split() for ln in out.splitlines() if ln.startswith("PULLPEAK ")]
        res = got[-1][1] if got else "memory" if "MemoryError" in out else "crash"
        # ok, or every request answered but one after the line's quick wait (slow: a race window held it) or
        # answered "nomem" (busy: the host asks again); anything else is a failure (unitheap.pull_run)
        if res not in ("ok", "slow", "busy"):
            bad.append("phase %d ms: %s\n%s" % (phase, res, out[-1500:]))
        else:
            # the host kept the line busy (about a pull every 50 ms of a game a minute or more long: 1,100-1,600)
            assert int(got[-1][3]) >= 500, got[-1]
    assert not bad, "\n".join(bad)
