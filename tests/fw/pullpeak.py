# One game with a host pulling all through it, at the board's heap with the board-only modules held
# (tests/fw/unitheap.py pull_run), printing `PULLPEAK <result> ...`:
#   micropython -m pullpeak SCENARIO GAME OFFSET_MS [BALLAST]  a pull every 500 ms from 500 + OFFSET_MS (unitheap.pulling):
#                                                        tests/host/test_pull_peak.py and bench/bench_pull_peak.py run
#                                                        it at 20 offsets, 25 ms apart; BALLAST bytes held beside the unit
#   micropython -m pullpeak SCENARIO GAME sweep PHASE_MS  a pull whenever the line is free, looked at every 25 ms from
#                                                        500 + PHASE_MS (unitheap.sweeping): a denser load in one run
import sys

import unitheap

if sys.argv[3] == "sweep":
    host = unitheap.sweeping(sys.argv[2], int(sys.argv[4]))
    res = unitheap.pull_run(sys.argv[1], sys.argv[2], 0, host=host)
    print("PULLPEAK", res, "pulls", host.asked, "busy_ticks", host.skipped)
else:
    ballast = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    print("PULLPEAK", unitheap.pull_run(sys.argv[1], sys.argv[2], int(sys.argv[3]), ballast=ballast))
