# Boot recovery and the logs folder under hostile content, on a posix folder (MicroPython: /tmp, so a log can
# be far larger than the capped heap): every valid record of a damaged log survives whatever the damaged line
# is (longer than the heap, garbage full of newlines, NULs, a torn tail of any length), and a stray or
# foreign file in logs/ never moves the numbering or stops recovery (docs/log-format.md, "Logs on flash").
import binascii
import os
import sys

from fwtest import Rand, rmtree, tmpdir
from maus.log import check as logcheck
from maus.log import repair as logrepair
from maus.log import start as logstart
from maus.log import writer as gamelog
from maus.log.store import LogStore, log_number

MPY = sys.implementation.name == "micropython"
BIG = 300 * 1024  # more than the ESP32's whole GC heap (111,936 bytes)


class Folder:
    def __init__(self):
        self.root = tmpdir("mbxrec")
        self.store = LogStore(self.root)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        rmtree(self.root)


def _records(f, seq0, n, t0=0):
    for k in range(n):
        f.write(gamelog.encode(seq0 + k, t0 + k, "game_start" if seq0 + k == 0 else "press",
                               {"player": 1 + k % 2, "offset_us": 1000 * k}))


def _junk(f, n, kind, seed=1):
    # n bytes of one kind of damage, written in small pieces (never whole in RAM)
    r = Rand(seed)
    piece = bytearray(512)
    left = n
    while left > 0:
        k = min(left, len(piece))
        for i in range(k):
            if kind == "nul":
                piece[i] = 0
            elif kind == "noise":  # random bytes: a newline every 256 on average
                piece[i] = r.next() & 0xFF
            else:  # "line": printable, no newline
                piece[i] = 0x61 + (r.next() % 26)
        f.write(memoryview(piece)[:k])
        left -= k


def _long_record(f, seq, n):
    # A valid record whose line is n bytes long, written in pieces with its CRC computed in pieces.
    head = b'{"seq":%d,"t":%d,"type":"note","text":"' % (seq, seq)
    crc = binascii.crc32(head)
    f.write(head)
    piece = b"m" * 512
    left = n - len(head) - 1 - 18 - 1
    while left > 0:
        k = min(left, 512)
        crc = binascii.crc32(piece[:k], crc)
        f.write(piece[:k])
        left -= k
    crc = binascii.crc32(b'"', crc)
    f.write(b'"' + gamelog.CRC_KEY + b"%08x" % (crc & 0xFFFFFFFF) + b'"}\n')


def _check(store, name):
    with open(store.path(name), "rb") as f:
        return logcheck.read_chunks(f, bytearray(1024))


def _log(store, name, parts):
    with open(store.path(name), "wb") as f:
        for p in parts:
            p(f)


def _recover(store):
    return logrepair.recover(store)


def test_every_valid_record_survives_a_damaged_line_of_any_length():
    cases = [
        ("short garbage", lambda f: f.write(b"xx}{\n")),
        ("a 1500-byte line", lambda f: (_junk(f, 1500, "line"), f.write(b"\n"))),
        ("a line longer than the heap", lambda f: (_junk(f, BIG, "line"), f.write(b"\n"))),
        ("noise full of newlines", lambda f: (_junk(f, 64 * 1024, "noise", 3), f.write(b"\n"))),
        ("NULs with a newline", lambda f: (_junk(f, 8192, "nul"), f.write(b"\n"))),
    ]
    for what, damage in cases:
        with Folder() as d:
            st = d.store
            _log(st, "00001-mg.jsonl", (lambda f: _records(f, 0, 10), damage, lambda f: _records(f, 11, 20, 50)))
            reps = _recover(st)
            assert len(reps) == 1 and reps[0].get("aborted"), (what, reps)
            c = _check(st, "00001-mg.jsonl")
            # all 30 records kept, then recovered + game_abort; the damaged line stays for the reader to show
            assert c.good == 32 and c.end is not None and c.end["type"] == "game_abort", (what, c.good)
            assert c.last["seq"] == 32 and len(c.problems) <= 8, what


def test_a_torn_tail_of_any_length_is_cut_and_the_records_before_it_kept():
    for what, tail in (("a short torn record", lambda f: f.write(b'{"seq":30,"t":9,"ty')),
                       ("a torn tail longer than the heap", lambda f: _junk(f, BIG, "line")),
                       ("NULs to the end", lambda f: _junk(f, 16384, "nul")),
                       ("noise to the end", lambda f: _junk(f, 40000, "noise", 9))):
        with Folder() as d:
            st = d.store
            _log(st, "00002-mg.jsonl", (lambda f: _records(f, 0, 30), tail))
            reps = _recover(st)
            assert len(reps) == 1 and reps[0]["cut_bytes"] > 0 and reps[0]["records"] >= 30, (what, reps)
            c = _check(st, "00002-mg.jsonl")
            assert c.ok and c.good == 32 and c.end["type"] == "game_abort", (what, c.problems)


def test_a_valid_record_longer_than_the_buffer_or_the_heap_is_a_record():
    for n in (1500, BIG):
        with Folder() as d:
            st = d.store
            _log(st, "00003-mg.jsonl", (lambda f: _records(f, 0, 5), lambda f, n=n: _long_record(f, 5, n),
                                        lambda f: f.write(b'{"seq":6,"t"')))
            c = _check(st, "00003-mg.jsonl")
            assert c.good == 6 and c.last["seq"] == 5 and c.last["type"] == "note", (n, c.problems)
            reps = _recover(st)
            assert reps[0]["records"] == 6 and reps[0]["cut_bytes"] == 12, reps
            c = _check(st, "00003-mg.jsonl")
            assert c.good == 8 and c.ok and c.end["seq"] == 7, c.problems


def test_strays_in_logs_never_move_the_numbering_nor_stop_recovery():
    with Folder() as d:
        st = d.store
        stray = ("9999999999-mg.jsonl", "99999999-mg.jsonl", "00012-MG.jsonl", "junk", "a b.jsonl", ".hidden",
                 "00004-mg.jsonl.bak", "junk.jsonl.pulled", "0-x.jsonl", "00000-mg.jsonl")
        for n in stray:
            with open(st.dir + "/" + n, "wb") as f:
                _records(f, 0, 2)  # a torn-looking log: never ours to cut
        os.mkdir(st.dir + "/00050-mms.jsonl")  # a directory with a log's name
        _log(st, "00003-mg.jsonl", (lambda f: _records(f, 0, 4),))
        with open(st.dir + "/counter", "wb") as f:
            f.write(b"99999999999")  # garbled: out of the unit's range
        reps = _recover(st)
        assert [r["name"] for r in reps] == ["00003-mg.jsonl"], reps
        assert st.stray[0] == len(stray) + 1 and len(st.stray[1]) == 3
        for n in stray:
            assert log_number(n) < 0, n
            os.stat(st.dir + "/" + n)  # left alone
        assert st.names() == ["00003-mg.jsonl"] and st.next_number() == 4
        log = logstart.start_game(st, lambda: 0, "mausgeflippt", None, [(1, "red", False)], "b", "u", "f", {},
                                 reserve=0)
        assert log.name == "00005-mausgeflippt.jsonl", log.name  # 4 went to next_number() above
        log.close()
        assert log_number(log.name) == 5 and log_number("1234567-x_y.jsonl") == 1234567


def test_the_boot_names_strays_as_a_problem():
    from maus.unit.boot import recover

    with Folder() as d:
        for n in ("9999999999-mg.jsonl", "notes.txt"):
            with open(d.store.dir + "/" + n, "wb") as f:
                f.write(b"x")
        problems = []
        recover(d.root, None, problems)
        assert len(problems) == 1 and problems[0].startswith("logs: 2 file(s)"), problems
        assert "9999999999-mg.jsonl" in problems[0] and "notes.txt" in problems[0]


def test_the_boot_recovers_a_unit_with_two_thousand_logs_in_the_heap():
    # The directory is streamed: no list of 2,000 entries in the ESP32's heap (this runs capped under MicroPython).
    # Only the newest log can be open (one game at a time): it alone is read, the finished ones are not opened.
    with Folder() as d:
        st = d.store
        done = gamelog.encode(0, 0, "game_start", {}) + gamelog.encode(1, 5, "game_end", {})
        for i in range(1, 2001):
            with open("%s/%05d-mg.jsonl" % (st.dir, i), "wb") as f:
                f.write(done if i not in (1234, 2000) else done[:-20])  # the newest torn by a power cut
            if i % 3 == 0:
                with open("%s/%05d-mg.jsonl.pulled" % (st.dir, i), "wb") as f:
                    f.write(b"0" * 64)
        for junk in ("orphan.tmp", "notes.txt"):
            with open(st.dir + "/" + junk, "wb") as f:
                f.write(b"x")
        fed = [0]

        def feed():
            fed[0] += 1

        reps = logrepair.recover(st, feed)
        assert [r["name"] for r in reps] == ["02000-mg.jsonl"] and reps[0]["records"] == 1, reps
        assert fed[0] >= 10 and st.stray == (1, ["notes.txt"]) and st.next_number() == 2001
        assert os.stat(st.path("01234-mg.jsonl"))[6] == len(done) - 20  # finished or not, never opened at boot
        try:
            os.stat(st.dir + "/orphan.tmp")
            raise AssertionError("orphan.tmp")
        except OSError:
            pass
