# One game with a host pulling all through it, at the board's heap with the board-only modules held
# (tests/fw/unitheap.py pull_run): `micropython -m pullpeak SCENARIO GAME OFFSET_MS` prints `PULLPEAK <result>`.
# bench/bench_pull_peak.py runs it at 20 offsets for each game's largest scenario.
import sys

import unitheap

print("PULLPEAK", unitheap.pull_run(sys.argv[1], sys.argv[2], int(sys.argv[3])))
