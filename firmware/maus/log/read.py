# Game log reader: parses a log, checks every CRC and seq, says where and how it is damaged.
# Pure and shared by the unit (boot recovery), the host (`mausbox logs`) and the tests.
# Never raises on any input. The checker that reads a whole log (Checker, read, read_stream) is
# maus.log.check, loaded only when a log is read: writing a game's log needs just the line format here.
# Line layout (docs/log-format.md):
#   {"seq":N,"t":MS,"type":"NAME",...fields...,"crc":"hhhhhhhh"}\n
# The CRC32 (zlib/binascii) is over the exact bytes before ,"crc":" and is 8 lowercase hex digits.
import json

from maus.log.writer import CRC_KEY, VERSION, crc_hex  # noqa: F401 - the line format is the writer's
from micropython import const

_SUFFIX_LEN = const(18)  # ,"crc":"hhhhhhhh"}
_HEX = b"0123456789abcdef"

# What can be wrong, as reported in Problem.what.
BAD_JSON = "bad json"
BAD_CRC = "bad crc"
NO_CRC = "no crc"
BAD_RECORD = "bad record"
SEQ_GAP = "seq gap"
NO_START = "missing game_start"
TORN = "torn tail"
NO_END = "no game_end"
AFTER_END = "record after end"
EMPTY = "empty"
NOT_BYTES = "not bytes"
INTERNAL = "reader error"  # a bug in this module; tests assert it never appears

ENDS = ("game_end", "game_abort")


def split_line(line):
    # line without its newline -> (body, crc_bytes) or None when the crc suffix is malformed
    n = len(line)
    if n < _SUFFIX_LEN + 1 or line[n - 2:] != b'"}':
        return None
    cut = n - _SUFFIX_LEN
    if line[cut:cut + 8] != CRC_KEY:
        return None
    crc = line[cut + 8:n - 2]
    for c in crc:
        if c not in _HEX:
            return None
    return line[:cut], crc


def check_line(line):
    # One line without newline -> (record dict, None) or (None, (what, detail)).
    parts = split_line(line)
    if parts is None:
        if CRC_KEY in line:
            return None, (BAD_CRC, "malformed crc field")
        try:
            json.loads(line)
        except Exception:  # noqa: BLE001 - any parse failure is data damage
            return None, (BAD_JSON, "")
        return None, (NO_CRC, "valid json without a crc")
    body, crc = parts
    want = crc_hex(body)
    if crc != want:
        return None, (BAD_CRC, "stored %s, computed %s" % (crc.decode(), want.decode()))
    try:
        rec = json.loads(line)
    except Exception:  # noqa: BLE001
        return None, (BAD_JSON, "crc matches but json does not parse")
    if not isinstance(rec, dict):
        return None, (BAD_RECORD, "not an object")
    seq = rec.get("seq")
    t = rec.get("t")
    typ = rec.get("type")
    if type(seq) is not int or seq < 0 or type(t) is not int or t < 0 or not isinstance(typ, str):
        return None, (BAD_RECORD, "seq, t or type missing or wrong")
    return rec, None
