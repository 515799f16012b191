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
HASH_SLICE = 8192  # firmware/maus/hostsvc.py _HASH_SLICE: one empty P frame per slice hashed (progress, bounded)
MAX_ENTRIES = 20000  # lines of a listing (a unit's flash holds a few thousand logs at most)
MAX_ANSWER = 1 << 20  # bytes of P frames in one answer (a listing of MAX_ENTRIES is ~500 KB)
READ_SLACK = 256 * 1024  # bytes a read may bring past the listed size (a log still being written grows)
MAX_LOG_BYTES = 16 * 1024 * 1024  # no log of a unit is larger

# Retries of a pull (logpull.py): a request that failed on the line is asked again after a pause that
# doubles from BACKOFF to BACKOFF_MAX; a log is given up after MAX_STALLS attempts in a row that brought no
# byte, and the unit counts as gone after MAX_SILENT of them in a row with no answer at all.
BACKOFF = 0.05  # s
BACKOFF_MAX = 2.0  # s
MAX_STALLS = 8
MAX_SILENT = 4
RESYNC_PAD = 481  # newlines sent before the first request after a wait that failed: more than the unit's largest
#                 request payload (firmware/maus/hostsvc.py _RX_MAX), so a header damaged on the way that made
#                 it wait for more bytes is filled, fails its check, and the unit listens for a new frame
LIST_TRIES = 4  # hello and the listing, each: attempts before the pull gives up on the unit
LIST_RESUMES = 8  # a listing resumed after a lost part, at most this often per attempt


def request_bound(idle: float, progress_bytes: int = 0, prefix: int = 0) -> float:
    """Seconds a request may take in all: its idle bounds plus its progress at MIN_RATE (and a resumed read's
    prefix hashed at HASH_RATE)."""
    return TOTAL_IDLES * idle + progress_bytes / MIN_RATE + prefix / HASH_RATE


def backoff(attempt: int) -> float:
    """The pause before retry number `attempt` (1, 2, ...)."""
    return min(BACKOFF_MAX, BACKOFF * (2 ** max(0, attempt - 1)))
