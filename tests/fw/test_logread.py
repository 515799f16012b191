import sys

from fwtest import Rand
from maus.log import check as logcheck
from maus.log import read as logread
from maus.log import writer as gamelog

MPY = sys.implementation.name == "micropython"


def make_log(n=12, end=True):
    lines = [gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mausgeflippt", "variant": None,
                                                  "players": [{"id": 1, "colour": "red", "young": False}],
                                                  "board": "devkitc", "unit": "ab", "fw": "0.1.0",
                                                  "settings": {}, "wall": None, "ticks": 5})]
    for i in range(1, n):
        lines.append(gamelog.encode(i, i * 100, "press", {"player": 1 + i % 3, "offset_us": 1000 + i,
                                                          "false_start": i == 4}))
    if end:
        lines.append(gamelog.encode(n, n * 100, "game_end", {"scores": {"1": 2}, "winners": [1],
                                                             "breakdown": {"1": {"mice": 2}}, "why": "done"}))
    return lines


def whats(r):
    return [(p.line, p.what) for p in r.problems]


def test_good_log():
    data = b"".join(make_log())
    r = logcheck.read(data)
    assert r.ok, r.problems
    assert len(r.records) == 13 and r.good == 13
    assert r.start["game"] == "mausgeflippt" and r.end["type"] == "game_end"
    assert [x["seq"] for x in r.records] == list(range(13))
    assert r.good_end == len(data)


def test_layout_is_byte_exact():
    line = gamelog.encode(3, 250, "claim", {"player": 2})
    body = b'{"seq":3,"t":250,"type":"claim","player":2'
    assert line == body + b',"crc":"' + logread.crc_hex(body) + b'"}\n'
    assert logread.split_line(line[:-1]) == (body, logread.crc_hex(body))


def test_each_damage_named_with_line_and_offset():
    lines = make_log()
    off3 = sum(len(x) for x in lines[:2])
    # bad crc: one character changed in line 3's body
    bad = list(lines)
    bad[2] = bad[2].replace(b'"player"', b'"plaxer"')
    r = logcheck.read(b"".join(bad))
    assert whats(r) == [(3, logread.BAD_CRC)], r.problems
    assert r.problems[0].offset == off3
    # line without crc
    bad = list(lines)
    bad[2] = b'{"seq":2,"t":1,"type":"press"}\n'
    assert whats(logcheck.read(b"".join(bad))) == [(3, logread.NO_CRC)]
    # not json at all
    bad = list(lines)
    bad[2] = b"\x00\xffgarbage\n"
    assert whats(logcheck.read(b"".join(bad))) == [(3, logread.BAD_JSON)]
    # seq gap: a whole record missing
    r = logcheck.read(b"".join(lines[:5] + lines[6:]))
    assert whats(r) == [(6, logread.SEQ_GAP)]
    assert "expected 5" in r.problems[0].detail
    # torn tail: the last record cut half-way
    data = b"".join(lines[:-1]) + lines[-1][:30]
    r = logcheck.read(data)
    assert whats(r) == [(13, logread.TORN), (13, logread.NO_END)]
    assert r.good_end == len(data) - 30
    # complete record, newline missing
    r = logcheck.read(b"".join(lines)[:-1])
    assert whats(r)[0] == (13, logread.TORN)
    # no game_end
    assert whats(logcheck.read(b"".join(make_log(end=False)))) == [(12, logread.NO_END)]
    # missing game_start
    r = logcheck.read(b"".join(lines[1:]))
    assert (1, logread.NO_START) in whats(r) and (1, logread.SEQ_GAP) in whats(r)
    # a record after the end
    r = logcheck.read(b"".join(lines) + gamelog.encode(13, 5, "note", {"text": "x"}))
    assert whats(r) == [(14, logread.AFTER_END)]
    assert whats(logcheck.read(b"")) == [(0, logread.EMPTY)]


def test_never_raises_on_odd_input():
    for data in (b"\n", b"\n\n\n", b"{}", b"[]\n", b'{"seq":-1,"t":0,"type":"x","crc":"00000000"}\n',
                 b'"x","crc":"00000000"}\n', b"\xff" * 40, bytearray(b"abc\n"), memoryview(b"{\n"),
                 b'{"seq":0,"t":0,"type":5' + b',"crc":"' + logread.crc_hex(b'{"seq":0,"t":0,"type":5') + b'"}\n',
                 b'[1' + b',"crc":"' + logread.crc_hex(b"[1") + b'"}\n', None, 12, "text"):
        r = logcheck.read(data)
        assert not r.ok
        assert all(p.what != logread.INTERNAL for p in r.problems), (data, r.problems)


def test_crc_valid_but_not_an_object():
    # (MicroPython's json is lenient and reads this as a list: "bad record" there, "bad json" here)
    body = b'[1,2'
    r = logcheck.read(body + b',"crc":"' + logread.crc_hex(body) + b'"}\n')
    assert whats(r)[0] in ((1, logread.BAD_JSON), (1, logread.BAD_RECORD))


def test_uppercase_crc_is_damage():
    # a single bit turns a-f into A-F: must not pass
    line = make_log()[0]
    i = len(line) - 4
    while line[i] not in b"abcdef":
        i -= 1
    flipped = line[:i] + bytes([line[i] ^ 0x20]) + line[i + 1:]
    assert logread.check_line(flipped[:-1])[1][0] == logread.BAD_CRC


def test_random_bit_flips_all_found_on_their_line():
    lines = make_log(14)
    data = b"".join(lines)
    starts = []
    pos = 0
    for x in lines:
        starts.append(pos)
        pos += len(x)
    r = Rand(2024)
    n = 300 if MPY else 1000
    for _ in range(n):
        i = r.randint(0, len(data) - 1)
        bit = 1 << r.randint(0, 7)
        bad = bytearray(data)
        bad[i] ^= bit
        rep = logcheck.read(bytes(bad))
        line = data.count(b"\n", 0, i) + 1
        assert rep.problems, (i, bit)
        p = rep.problems[0]
        assert p.line == line and p.offset == starts[line - 1], (i, bit, line, rep.problems)
        assert p.what != logread.INTERNAL


def test_fuzz_mutated_lines_never_raise():
    # the CPython host test runs 100,000 of these; here a smaller count for both interpreters
    r = Rand(77)
    base = make_log(6)
    pieces = [b"{", b"}", b'"', b",", b":", b"\n", b"\\", b"\xff", b'"crc":"', b"1e999", b"[", b"]",
              b"null", b'"seq":', b"\x00", b"-"]
    for k in range(500 if MPY else 3000):
        line = bytearray(r.choice(base))
        for _ in range(r.randint(1, 4)):
            op = r.randint(0, 3)
            j = r.randint(0, len(line))
            if op == 0 and line:
                line = line[:j] + line[j + r.randint(1, 8):]
            elif op == 1:
                line[j:j] = r.choice(pieces)
            elif op == 2 and line:
                line[min(j, len(line) - 1)] = r.randint(0, 255)
            else:
                line = line[:j]
        rec, err = logread.check_line(bytes(line))
        assert (rec is None) != (err is None)
        rep = logcheck.read(bytes(line) * (1 + k % 3))
        assert all(p.what != logread.INTERNAL for p in rep.problems), (bytes(line), rep.problems)
