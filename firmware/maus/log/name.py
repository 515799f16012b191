# A log's name as this unit writes it (NNNNN-slug.jsonl): a leaf of the log package, which the store, its index
# and boot recovery all read names with (the index is loaded for its moments only, and needs nothing else).
from micropython import const

NAME_MAX = const(64)  # the longest log name (the store checks names against it too)
_SLUG = b"abcdefghijklmnopqrstuvwxyz0123456789_"
GAME_MAX = const(9999999)  # highest game number: 5 to 7 digits (the host takes up to 10), a small int


def log_number(name):
    """The game number of a log name this unit writes (NNNNN-slug.jsonl, str or bytes), -1 for any other
    name: a stray or foreign file in logs/ never counts for numbering and is not listed (docs/log-format.md)."""
    b = name.encode() if isinstance(name, str) else name
    n = len(b)
    if not 13 <= n <= NAME_MAX or b[n - 6:] != b".jsonl":
        return -1
    i = b.find(b"-")
    if not 5 <= i <= 7 or not 1 <= n - 6 - i - 1 <= 24:
        return -1
    v = 0
    for k in range(i):
        c = b[k]
        if not 0x30 <= c <= 0x39:
            return -1
        v = v * 10 + c - 0x30
    for k in range(i + 1, n - 6):
        if b[k] not in _SLUG:
            return -1
    return v if 0 < v <= GAME_MAX else -1
