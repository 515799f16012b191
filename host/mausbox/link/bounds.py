"""Every time and size bound of the host link, in one place (docs/protocol.md, Timing, names each).

A request's wait ends IDLE s (the `--timeout`) after the request or after the last frame that made progress,
and the whole request within TOTAL_IDLES idle bounds plus the time its progress takes at MIN_RATE. Progress is
what the request is for, never frames as such: bytes of the log accepted (`read`), new entries (`logs`), a
part never seen before in this answer (other requests with parts); a request without parts has none but
its answer. So no stream of valid-looking frames, repeated, alternating or new, extends a wait past its own
progress, and every command ends within a bound that follows from these numbers.
"""

IDLE = 10.0  # s: the default --timeout of every command that talks to a unit (`ports` 3, `monitor` 5)
TOTAL_IDLES = 4  # a request's total bound: this many idle bounds ...
MIN_RATE = 2000  # ... plus its progress at this many bytes/s (a 115200-baud UART carries 11,500; a unit in a
#                  game two 1 KB frames a 180 ms pass)
HASH_RATE = 20000  # bytes/s of a resumed read's prefix an ESP32 hashes (it does ~400 KB/s from flash)
HASH_SLICE = 8192  # firmware/maus/host/service.py _HASH_SLICE: one empty P frame per slice hashed (progress, bounded)
MAX_ENTRIES = 20000  # lines of a listing (a unit's flash holds a few thousand logs at most)
MAX_ANSWER = 1 << 20  # bytes of P frames in one answer (a listing of MAX_ENTRIES is ~500 KB)
READ_SLACK = 256 * 1024  # bytes a read may bring past the listed size (a log still being written grows)
MAX_LOG_BYTES = 16 * 1024 * 1024  # no log of a unit is larger

# Retries of a pull (logpull.py): a request that failed on the line is asked again after a pause that
# doubles from BACKOFF to BACKOFF_MAX; a log is given up after MAX_STALLS attempts in a row that brought no
# byte of it (and tried once more after the other logs), and the unit counts as gone after MAX_SILENT attempts
# in a row, over all logs, to which it sent no byte at all.
BACKOFF = 0.05  # s
BACKOFF_MAX = 2.0  # s
MAX_STALLS = 8
MAX_SILENT = 4
RESYNC_PAD = 481  # newlines sent before the first request after a wait that failed: more than the unit's largest
#                 request payload (firmware/maus/host/service.py _RX_MAX), so a header damaged on the way that made
#                 it wait for more bytes is filled, fails its check, and the unit listens for a new frame
# A request the unit answers at once when no game runs (QUICK_OPS) whose answer came damaged is asked again
# without waiting out the timeout: once the line has been quiet for LOST_QUIET s after a damaged frame, a frame
# start left without its end, console text that is no answer, or every byte of a read with no final answer; or
# (its request lost on the way) after LOST_SILENT s of nothing at all, when the unit said it is in no game.
QUICK_OPS = frozenset(("hello", "status", "logs", "read", "mark", "cancel"))
LOST_QUIET = 0.5  # s: a unit sends an answer's frames back to back (a virtual unit's pass on a busy machine:
#                   up to a few hundred ms)
GAME_POLL = 2.0  # s: a pull asks a unit in a game again this often until the game has ended
BUSY_WAIT = 0.25  # s: before asking again a unit that answered "busy" (no memory for the answer in a game's peak)
LOST_SILENT = 1.5  # s: a unit out of a game answers within a pass (50 ms on a board)
LIST_TRIES = 4  # hello, the listing and a mark, each: attempts in a row the unit left without any byte before
#                the pull gives up on the unit
LIST_TRIES_ALIVE = 8  # ... and attempts in all while the unit sends something (it is there: the line damages
#                       its answers, or it is starting again after a reset)
MAX_FAILED_RUN = 3  # logs in a row given up (each after MAX_STALLS attempts) while the unit sends something:
#                     then it counts as gone too, and the logs left are not tried
LIST_RESUMES = 8  # a listing resumed after a lost part, at most this often per attempt


def request_bound(idle: float, progress_bytes: int = 0, prefix: int = 0) -> float:
    """Seconds a request may take in all: its idle bounds plus its progress at MIN_RATE (and a resumed read's
    prefix hashed at HASH_RATE)."""
    return TOTAL_IDLES * idle + progress_bytes / MIN_RATE + prefix / HASH_RATE


def backoff(attempt: int) -> float:
    """The pause before retry number `attempt` (1, 2, ...)."""
    return min(BACKOFF_MAX, BACKOFF * (2 ** max(0, attempt - 1)))

# The raw REPL (deploy): after a broken exchange the host sends RECOVER_PAD newlines before its Ctrl-Cs, so
# that a stretch of line damage still running (the reliability relay drops or repeats a whole kilobyte) takes
# filler, not the interrupt; the unit takes newlines as nothing at any of its prompts and in the app.
RECOVER_PAD = 1100

# The faster line (docs/protocol.md, `baud`): after hello the host asks the unit for FAST_BAUD (or `--baud`).
SWITCH_GUARD = 0.1  # s: after the switch's answer, before the first byte at the new rate (the unit waits out its
#                     128-byte TX FIFO at the old rate, 11 ms at 115200, then switches)
UNIT_FALLBACK = 2.0  # s: a unit whose switch no valid frame confirmed goes back to 115200 this long after it
#                      (firmware/maus/host/service.py BAUD_WAIT_MS; its answer says `wait_ms`)
FALLBACK_MARGIN = 0.3  # s: and the host waits this much longer before it talks at 115200 again (the unit's pass)
IDLE_PROBE = 8.0  # s: quiet this long at a switched rate, the host first checks the unit is still there (a unit's
#                   service goes back to 115200 when the host has been quiet for 10 s, maus.unit.core LINGER_MS)
PROBE_WAIT = 1.0  # s: for that check's answer
