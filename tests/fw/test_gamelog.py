import io
import json
import os
import sys

import logfs
from fwtest import Rand, raises
from maus.log import check as logcheck
from maus.log import read as logread
from maus.log import repair as logrepair
from maus.log import start as logstart
from maus.log import writer as gamelog
from maus.log.store import LogStore, valid_name
from maus.ticks import PERIOD

MPY = sys.implementation.name == "micropython"
PLAYERS = [(1, "red", False), (2, "blue", True)]


class Clock:
    def __init__(self, start=0, step=250):
        self.now = start
        self.step = step

    def __call__(self):
        self.now = (self.now + self.step) % PERIOD
        return self.now


def start(store, clock=None, game="mausgeflippt", **kw):
    return logstart.start_game(store, clock or Clock(), game, None, PLAYERS, "devkitc", "a4cf12fe0b10", "0.1.0",
                              {"lang": "de"}, kw.pop("wall", None), 4242, reserve=kw.pop("reserve", 1024), **kw)


def play(log, n, seed=1):
    r = Rand(seed)
    for _ in range(n):
        log.record("press", {"player": r.randint(1, 2), "offset_us": r.randint(-9000, 900000),
                             "false_start": r.randint(0, 9) == 0})


def finish(log):
    log.end({1: 2, 2: -1}, [1], {1: {"mice": 2}, 2: {"mice": 0, "clothing_up": 1}}, "last mouse caught")


def read(store, name, keep=True):
    with open(store.path(name), "rb") as f:
        return logcheck.read_stream(f, keep)


def same_file(path, lines):
    with open(path, "rb") as f:
        for x in lines:
            if f.readline() != x:
                return False
        return f.read(1) == b""


def test_round_trip():
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        lines = []
        log = start(st, listener=lambda parts: lines.append(b"".join(parts)), wall=logstart.wall_iso((2026, 11, 30, 4, 5, 6)))
        play(log, 20)
        log.record("tap", {"identity": "mg/clothing/07", "uid": "04a1b2c3"})
        finish(log)
        assert not log.degraded and log.closed
        assert st.names() == [log.name] and log.name == "00001-mausgeflippt.jsonl"
        assert same_file(st.path(log.name), lines)  # the monitor sees exactly what is on flash
        r = read(st, log.name)
        assert r.ok, r.problems
        s = r.start
        assert s["v"] == logread.VERSION and s["ticks"] == 4242 and s["wall"] == "2026-11-30T04:05:06"
        assert s["players"][1] == {"id": 2, "colour": "blue", "young": True}
        assert r.end["scores"] == {"1": 2, "2": -1} and r.end["winners"] == [1]
        assert r.end["breakdown"]["2"]["clothing_up"] == 1
        ts = [x["t"] for x in r.records]
        assert ts[0] == 0 and ts == sorted(ts) and ts[-1] == 22 * 250


def test_time_keeps_counting_across_tick_wrap():
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        clock = Clock(PERIOD - 1000, 300)
        log = start(st, clock)
        play(log, 10)
        log.abort("test")
        r = read(st, log.name)
        assert [x["t"] for x in r.records] == [300 * i for i in range(12)]
        assert r.end == r.records[-1] and r.end["reason"] == "test"


def test_a_records_pieces_are_its_line_and_none_holds_a_whole_breakdown():
    # A long-lived unit's heap may not have a 500-byte block at a 6-player game's end: the breakdown goes
    # player by player. The bytes are those json.dumps writes for each whole field, the CRC over them all.
    bd = {}
    for p in range(1, 7):
        bd[str(p)] = {"pairs": p, "rounds_won": 2 * p, "cards_left": 3, "passes": p % 2, "why": "a" * 5}
    fields = {"breakdown": bd, "scores": {"1": 3, "2": -1}, "winners": [1, 2], "why": "last card", "none": {},
              "rows": [[1, 2], {"a": [3]}, "x"], "n": 7, "no": None, "ok": True, "empty": []}
    want = b'{"seq":9,"t":1234,"type":"game_end"'
    for k in sorted(fields):
        want += ("," + json.dumps(k) + ":" + json.dumps(fields[k], separators=(",", ":"))).encode()
    want += b',"crc":"' + gamelog.crc_hex(want) + b'"}\n'
    parts = gamelog.pieces(9, 1234, "game_end", fields)
    assert b"".join(parts) == want and gamelog.encode(9, 1234, "game_end", fields) == want
    assert max(len(p) for p in parts) < 100 < len(json.dumps(bd)), [len(p) for p in parts]
    line = json.loads(want)
    assert line["breakdown"] == bd and line["rows"] == fields["rows"] and line["none"] == {}


def test_bad_fields_are_programming_errors():
    raises(ValueError, gamelog.encode, 0, 0, "x", {"seq": 1})
    raises(ValueError, gamelog.encode, 0, 0, "x", {"crc": "1"})
    raises(ValueError, gamelog.encode, 0, 0, "x", {1: 2})
    raises(ValueError, gamelog.encode, 0, 0, 5, {})
    raises(ValueError, gamelog.encode, 0, 0, "", {})


def test_names_count_up_and_survive_deletion():
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        names = []
        for g in ("mausgeflippt", "m-is-for-Mouse", "mucks"):
            log = start(st, game=g)
            finish(log)
            names.append(log.name)
        assert names == ["00001-mausgeflippt.jsonl", "00002-m_is_for_mouse.jsonl", "00003-mucks.jsonl"]
        for n in names:
            st.delete(n)
        log = start(LogStore(fs.root))  # "reboot": the counter file remembers
        assert log.name == "00004-mausgeflippt.jsonl"
        log.close()


class FailingFile:
    # a log file whose writes fail once `ok` records are in it, as on a full flash (what was written stays)
    def __init__(self, path, ok, errno=28):
        self.ok = ok
        self.errno = errno
        self.f = open(path, "wb")
        self.n = 0  # records written whole

    def write(self, b):
        if self.n >= self.ok:
            raise OSError(self.errno)
        self.f.write(b)
        self.n += bytes(b).count(b"\n")

    def flush(self):
        self.f.flush()

    def close(self):
        self.f.close()
        raise OSError(self.errno)


def test_write_failure_degrades_and_game_goes_on():
    # The flash fills mid-game: the game goes on, the records that fitted stay, numbering stays contiguous,
    # and the room kept in logs/reserve takes a note of the loss and game_end.
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        st.create = lambda name: FailingFile(st.path(name), 5)
        seen = []
        log = start(st, listener=seen.append)
        assert logfs.read(st.reserve_path()) == bytes(len(logfs.read(st.reserve_path())))
        play(log, 20)
        assert log.degraded and log.error.args[0] == 28 and log.lost == 21 - 5 and log.seq == 5
        finish(log)  # no exception reaches the game
        rep = read(st, log.name)
        assert rep.ok and [r["seq"] for r in rep.records] == list(range(7)), rep.problems
        assert rep.records[5]["type"] == "note" and rep.records[5]["lost"] == 16
        assert rep.end["type"] == "game_end" and len(seen) == 23
        raises(OSError, os.stat, st.reserve_path())  # used up: made again before the next game
        start(st).close()
        os.stat(st.reserve_path())


def test_a_full_flash_mid_game_still_ends_the_log():
    # littlefs on a RAM device (MicroPython) or a quota (CPython) filled by another writer during the game
    for fill_at in (3, 40, 120):
        with logfs.Fs(blocks=48) as fs:
            st = QuotaStore(fs.root, 20000) if not MPY else LogStore(fs.root)
            log = start(st)
            for i in range(200):
                if i == fill_at:
                    _fill(st, fs.root)
                log.record("press", {"player": 1 + i % 2, "offset_us": i * 1000})
            finish(log)
            rep = read(st, log.name, False)
            assert not rep.damaged() and rep.end is not None and rep.end["type"] == "game_end", (fill_at, rep.problems)
            kept = 0
            last = None
            with open(st.path(log.name), "rb") as f:
                for line in f:
                    rec = logread.check_line(line[:-1])[0]
                    if rec["type"] == "press":
                        assert rec["offset_us"] == kept * 1000  # the records before the flash filled, in order
                        kept += 1
                    elif rec["type"] == "note":
                        last = rec
            assert kept >= fill_at and log.degraded and kept < 200, (fill_at, kept)
            if log.degraded:
                assert last["lost"] == 200 - kept and rep.last["seq"] == kept + 2, (kept, last)


def _fill(st, root):
    # another writer takes every free byte
    try:
        with open(root + "/filler", "wb") as f:
            for _ in range(4000):
                f.write(b"z" * 256)
                f.flush()  # committed: littlefs gives back what a failed file never synced
                if isinstance(st, QuotaStore):
                    st.quota = st.used() + 40  # CPython: the quota is the flash
    except OSError:
        pass


def test_no_log_directory_degrades():
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        st.dir = fs.root + "/missing/logs"
        log = start(st)
        play(log, 3)
        finish(log)
        assert log.degraded and log.lost == 5


def test_recover_torn_tail():
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        log = start(st)
        play(log, 8)
        log.close()  # power cut: no game_end
        p = st.path(log.name)
        good = logfs.read(p)
        st.mark_pulled(log.name, st.sha256(log.name))
        logfs.write(p, good + gamelog.encode(9, 9, "press", {"player": 1})[:25])
        rep = logrepair.recover(st)
        assert rep == [{"name": log.name, "cut_bytes": 25, "records": 9, "aborted": True}]
        data = logfs.read(p)
        assert data.startswith(good)
        r = logcheck.read(data)
        assert r.ok, r.problems
        assert [x["type"] for x in r.records[-2:]] == ["recovered", "game_abort"]
        assert r.records[-2]["cut_bytes"] == 25 and r.records[-2]["records"] == 9
        assert r.end["reason"] == gamelog.POWER_LOSS
        assert not st.is_pulled(log.name)  # the bytes changed: the host must pull again
        assert logrepair.recover(st) == []  # idempotent


def test_recover_unfinished_and_finished_and_empty():
    # Only the newest log can be open at boot (one game at a time), and the one before it when the newest
    # is a start cut before its first record: those alone are read.
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        done = start(st)
        play(done, 3)
        finish(done)
        open_ = start(st)
        play(open_, 3)
        open_.close()
        logfs.write(st.dir + "/00003-x.jsonl.tmp", b"half a copy")
        rep = logrepair.recover(st)
        assert rep == [{"name": open_.name, "cut_bytes": 0, "records": 4, "aborted": True}], rep
        assert logrepair.recover(st) == []  # closed now
        early = start(st)
        play(early, 2)
        early.close()  # left open by a cut
        empty = st.create("00009-mucks.jsonl")  # a start cut before its first record (logs/index names it)
        empty.close()
        assert logrepair.recover(st) == [{"name": early.name, "cut_bytes": 0, "records": 3, "aborted": True},
                                       {"name": "00009-mucks.jsonl", "cut_bytes": 0, "records": 0,
                                        "deleted": True}]  # the one before an empty start is read too
        # that took a pass over logs/ (the index named a log that went): it removed the temp file a cut left
        assert "00003-x.jsonl.tmp" not in __import__("os").listdir(st.dir)
        with st.create("00010-mucks.jsonl") as f:
            f.write(b'{"seq":0,"t":0,"type":"game_st')
        assert logrepair.recover(st) == [{"name": "00010-mucks.jsonl", "cut_bytes": 30, "records": 0,
                                        "deleted": True}]
        with st.create("00011-mucks.jsonl") as f:
            f.write(b"not a record\nnor this\n")
        assert logrepair.recover(st) == [{"name": "00011-mucks.jsonl", "cut_bytes": 0, "records": 0,
                                        "damaged": True}]
        assert st.names() == [done.name, open_.name, early.name, "00011-mucks.jsonl"]  # damage kept for the reader
        assert read(st, done.name).ok and read(st, open_.name).ok and read(st, early.name).ok


def test_recover_keeps_good_records_after_damage_inside():
    # a flipped bit in the middle is reported by the reader, never "repaired" away
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        log = start(st)
        play(log, 6)
        log.close()
        p = st.path(log.name)
        data = bytearray(logfs.read(p))
        i = data.index(b'"seq":3') + 2
        data[i] ^= 1
        logfs.write(p, bytes(data))
        logrepair.recover(st)
        r = read(st, log.name)
        assert [(q.line, q.what) for q in r.problems] == [(4, logread.BAD_CRC)]
        assert r.good == 6 + 2 and r.end["type"] == "game_abort"


def test_listing_pulled_chunks_and_stream():
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        a = start(st)
        play(a, 8)
        finish(a)
        b = start(st, game="mucks")
        finish(b)
        data = logfs.read(st.path(a.name))
        ls = st.listing()
        assert [x[0] for x in ls] == [a.name, b.name]
        assert ls[0][1] == len(data) and not ls[0][3]
        sha = ls[0][2]
        assert len(sha) == 64
        if not MPY:
            import hashlib

            assert sha == hashlib.sha256(data).hexdigest()
        assert not st.mark_pulled(a.name, "0" * 64)
        assert not st.mark_pulled(a.name, None)
        assert st.mark_pulled(a.name, sha.upper())
        assert [x[3] for x in st.listing()] == [True, False]
        chunks = []
        off = 0
        while True:
            c = st.read_chunk(a.name, off, 700)
            if not c:
                break
            chunks.append(c)
            off += len(c)
        assert b"".join(chunks) == data
        chunks = None
        out = io.BytesIO()
        assert st.stream(a.name, 100, out, 256) == len(data) - 100
        assert out.getvalue() == data[100:]
        for off, n in ((-1, 10), (0, 0), (0, 1 << 20), ("0", 5), (0, None)):
            raises(ValueError, st.read_chunk, a.name, off, n)
        raises(ValueError, st.stream, a.name, -5, out)
        assert st.mark_pulled(b.name, st.sha256(b.name))
        with open(st.path(b.name), "ab") as f:
            f.write(b"x")
        assert not st.listing()[1][3]  # the marker vouches for other bytes: not pulled
        logfs.write(st.path(b.name) + ".pulled", b"\xff\xfe not hex")
        assert not st.listing()[1][3]  # a garbled marker means not pulled
        st.delete(a.name)
        assert [x[0] for x in st.listing()] == [b.name]


def test_names_are_never_paths():
    with logfs.Fs() as fs:
        st = LogStore(fs.root)
        for bad in ("../settings.jsonl", "a/b.jsonl", "/x.jsonl", ".jsonl", "x.txt", "", "a\\b.jsonl",
                    "x..jsonl", "x.jsonl\x00", "ä.jsonl", "x" * 70 + ".jsonl", None, 5):
            assert not valid_name(bad), bad
            raises(ValueError, st.read_chunk, bad, 0, 10)
            raises(ValueError, st.mark_pulled, bad, "0" * 64)
        assert valid_name("00001-mucks.jsonl")


class QuotaStore(LogStore):
    # CPython has no small filesystem: a store whose files may use `quota` bytes in all
    def __init__(self, root, quota):
        super().__init__(root)
        self.quota = quota

    def used(self):
        return sum(self.size(n) for n in self.names())

    def free(self):
        return self.quota - self.used()

    def create(self, name):
        store = self
        f = open(self.path(name), "wb")

        class Limited:
            def write(self, b):
                if store.used() + len(b) > store.quota:
                    raise OSError(28)
                f.write(b)

            def flush(self):
                f.flush()

            def close(self):
                f.close()

        return Limited()


def test_make_room_takes_pulled_first():
    with logfs.Fs() as fs:
        st = QuotaStore(fs.root, 100000)
        logs = []
        for _ in range(5):
            log = start(st)
            play(log, 10)
            finish(log)
            logs.append(log.name)
        for n in (logs[1], logs[3]):
            st.mark_pulled(n, st.sha256(n))
        size = st.size(logs[0])
        st.quota = st.used() + size // 2
        assert st.make_room(size) == 1  # the oldest pulled log was enough
        assert st.names() == [logs[0], logs[2], logs[3], logs[4]]
        with open(st.path(logs[0]) + ".pulled", "wb") as f:
            f.write(b"0" * 64)  # a marker that vouches for other bytes: not pulled
        open(st.path(logs[2]) + ".pulled", "wb").close()  # (an empty marker neither)
        st.quota = st.used()
        assert st.make_room(size * 2) == 1  # the pulled one; never an unpulled one
        assert st.names() == [logs[0], logs[2], logs[4]]
        st.quota = 0
        assert st.make_room(10) == 0 and st.names() == [logs[0], logs[2], logs[4]]


def test_make_room_takes_many_pulled_logs_oldest_first_and_drops_orphan_markers():
    with logfs.Fs(blocks=100) as fs:
        st = QuotaStore(fs.root, 10 ** 6)
        logs = []
        for _ in range(20):
            log = start(st)
            play(log, 3)
            finish(log)
            logs.append(log.name)
        for n in logs[:18]:
            st.mark_pulled(n, st.sha256(n))
        with open(st.dir + "/00999-mg.jsonl.pulled", "wb") as f:
            f.write(b"0" * 64)  # orphan: its log is gone
        fed = [0]

        def feed():
            fed[0] += 1

        st.quota = st.used() + 10
        need = sum(st.size(n) for n in logs[:14])  # 14 logs: two batches of the directory scan
        got = st.make_room(need, (logs[3],), feed)
        assert got == 14 and fed[0] >= 14
        assert st.names() == [logs[3]] + logs[15:]
        st.quota = 0
        assert st.make_room(10 ** 6) == 4 and st.names() == logs[18:]  # the unpulled ones stay
        assert not st.is_pulled("00999-mg.jsonl")


def test_disk_full_again_and_again():
    # MicroPython: littlefs on a 12 KB RAM device (real ENOSPC); CPython: a 12 KB quota.
    with logfs.Fs(blocks=24) as fs:
        st = QuotaStore(fs.root, 12000) if not MPY else LogStore(fs.root)
        r = Rand(5)
        degraded = 0
        dropped = 0
        unfinished = 0
        stuck = set()  # logs a full flash kept from being closed: only the newest is looked at again at boot
        for g in range(16):
            before = dict((n, st.is_pulled(n)) for n in st.names())
            log = start(st, reserve=r.randint(500, 6000))
            after = st.names()
            gone = [n for n in before if n not in after]
            assert all(before[n] for n in gone), (gone, before)  # only pulled logs go
            dropped += len(gone)
            k = r.randint(10, 90)
            play(log, k, g)
            finish(log)
            degraded += log.degraded
            assert log.seq + log.lost >= k + 2, (log.seq, log.lost, k)  # every record written or counted lost
            st = QuotaStore(fs.root, 12000) if not MPY else LogStore(fs.root)  # next boot
            logrepair.recover(st)
            stuck.update(st.unrecovered)
            for n in st.names():
                rep = read(st, n, False)
                assert not rep.damaged(), (n, rep.problems)
                assert rep.end is not None or n in stuck, (n, stuck)  # full: closed at the next game start
                unfinished += rep.end is None
                if r.randint(0, 3) == 0:
                    try:
                        st.mark_pulled(n, st.sha256(n))
                    except OSError:
                        pass  # flash full: the host is told and tries again later
        # the room kept in logs/reserve ends every log, full flash or not (before it, some waited for the next boot)
        assert degraded and dropped, (degraded, dropped, unfinished)


def test_a_game_is_told_before_it_starts_when_its_log_may_not_fit():
    with logfs.Fs(blocks=32) as fs:
        st = LogStore(fs.root)
        log = start(st, reserve=1024)
        assert not log.short and os.stat(st.reserve_path())[6] >= 2 * 512  # room kept for the end
        finish(log)
        log = start(st, reserve=10 ** 6 if MPY else 0)  # more than the flash (CPython: a folder, never short)
        assert log.short == MPY and not log.degraded
        finish(log)
        assert read(st, log.name).ok
