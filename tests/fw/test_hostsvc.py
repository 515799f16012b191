# The host service over an in-memory console: frames, stray bytes, every request, streaming with resume,
# and a listing of 2,000 logs in constant memory.
import hashlib
import json
import os
import sys

import logfs
from fwtest import raises, rmtree, tmpdir
from hostkit import Console, Ctx, answer, frame, parse, request
from maus.host.service import HostService
from maus.log.store import LogStore

# The service as the unit holds it (~17 KB) and its streams' 8 KB frames, at the board's heap plus the virtual unit's
# share (host/mausbox/heapbudget.py file_cap): this file needs ~116 KB, where the RAM flash's share alone left it 13 %
# of its cap, under bench/bench_harness.py's 15 % (a pass or a failure by the heap's layout)
HEAP_BUDGET = "board"

MPY = sys.implementation.name == "micropython"


def _svc(root):
    con = Console()
    ctx = Ctx(root)
    return HostService(ctx, inp=con.inp, out=con.out, ready=con.ready), con, ctx


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def test_hello_and_status():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        con.send(request(7, "hello", host="test", proto=1))
        r, parts, text = answer(svc, con, 7)
        assert r["ok"] and r["proto"] == 1 and r["fw"] == "9.9.9" and r["unit"] == "010203040506"
        assert r["mode"] == "menu" and r["app"] is True and not parts and text == b""
        con.send(request(8, "status"))
        r = answer(svc, con, 8)[0]
        assert r["status"]["board"] == "sim" and r["free_bytes"] > 0 and (not MPY or r["mem_free"] > 0)


def test_stray_bytes_echoes_and_damage_are_not_requests():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        good = request(3, "hello")
        bad_crc = bytearray(request(4, "status"))
        bad_crc[20] = 0x30 if bad_crc[20] != 0x30 else 0x31
        echo = frame("R", 5, b'{"ok":true}')  # a unit's own kind of frame is never a request
        chatter = b"ets Jun  8 2016 00:22:57\r\n\r\nrst:0x1 (POWERON_RESET),boot:0x13\r\n#MB#M#MB1X\r\n>>> \x00\xff"
        con.send(chatter + bytes(bad_crc) + echo + b"#MB1Q 00zz" + good[:30])
        for _ in range(20):
            svc.poll(0)
        assert parse(con.take())[0] == [] and svc.requests == 0
        con.send(good[30:])
        r = answer(svc, con, 3)[0]
        assert r["ok"] and svc.requests == 1 and svc.bad_frames >= 1


def test_errors_are_answers():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        con.send(request(1, "fly"))
        r = answer(svc, con, 1)[0]
        assert not r["ok"] and r["error"] == "op"
        con.send(frame("Q", 2, b"not json"))
        assert answer(svc, con, 2)[0]["error"] == "args"
        con.send(frame("Q", 3, b'{"op":"hello"}', version=2))  # a newer host
        r = answer(svc, con, 3)[0]
        assert r["error"] == "proto" and "update the unit" in r["msg"]
        con.send(request(4, "read", name="../settings.json"))
        assert answer(svc, con, 4)[0]["error"] == "args"
        con.send(request(5, "read", name="00001-mg.jsonl"))
        assert answer(svc, con, 5)[0]["error"] == "nofile"
        con.send(request(6, "exit"))  # only the REPL's service ends
        assert answer(svc, con, 6)[0]["error"] == "op"


def test_ctrl_c_is_a_keyboard_interrupt():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        con.send(b"\r\x03")
        raises(KeyboardInterrupt, svc.poll, 0)


def test_read_streams_every_byte_with_resume_and_digest():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        # 2,882 bytes: three frames in a game, one outside (a test at the board's heap holds several copies of an
        # answer while it checks it: the test's copies, not the unit's, so the log is kept small)
        blob = bytes(range(256)) * 9 + b"\r\n\x10\x04\x03" * 100 + b"#MB1R 0001 0000 00000000 \n" * 3
        _write(ctx.store.dir + "/00001-mg.jsonl", blob)
        for mode, chunk in (("play", 1024), ("menu", 8192)):  # small frames in a game: the loop goes on
            ctx.mode = mode
            for off in (0, 1, 1023, 1024, len(blob) - 1, len(blob)):
                con.send(request(10 + off, "read", name="00001-mg.jsonl", off=off))
                r, parts, text = answer(svc, con, 10 + off)
                got = b"".join(p[2][8:] for p in parts if p[0] == "D")
                offs = [int(p[2][:8], 16) for p in parts if p[0] == "D"]
                assert r["size"] == len(blob) and got == blob[off:], off
                assert r["sha256"] == _hex(hashlib.sha256(blob).digest())
                assert offs == list(range(off, len(blob), chunk))[:len(offs)] and text == b"", (mode, off)
        con.send(request(99, "read", name="00001-mg.jsonl", off=len(blob) + 1))
        assert answer(svc, con, 99)[0]["error"] == "range"


def test_a_new_request_replaces_a_stream():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        ctx.mode = "play"  # small frames: the stream takes several passes
        _write(ctx.store.dir + "/00001-mg.jsonl", b"x" * 9000)
        con.send(request(1, "read", name="00001-mg.jsonl"))
        svc.poll(0)
        svc.poll(0)
        first = parse(con.take())[0]
        assert first and all(f[0] == "D" for f in first)
        con.send(request(2, "cancel"))
        r = answer(svc, con, 2)[0]
        assert r["ok"] and svc.job is None
        for _ in range(10):
            svc.poll(0)
        assert parse(con.take())[0] == []  # nothing more of request 1


def test_mark_settings_clock():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        data = b'{"a":1}\n'
        _write(ctx.store.dir + "/00002-mg.jsonl", data)
        sha = _hex(hashlib.sha256(data).digest())
        con.send(request(1, "mark", name="00002-mg.jsonl", sha256="0" * 64))
        assert answer(svc, con, 1)[0]["marked"] is False
        con.send(request(2, "mark", name="00002-mg.jsonl", sha256=sha))
        assert answer(svc, con, 2)[0]["marked"] is True and ctx.store.is_pulled("00002-mg.jsonl", sha)
        con.send(request(3, "settings"))
        r = answer(svc, con, 3)[0]
        assert r["values"]["volume"] == 2 and r["source"] == "defaults"
        con.send(request(4, "set", key="volume", value=1))
        assert answer(svc, con, 4)[0]["changed"] is True and ctx.settings.get("volume") == 1 and ctx.changed == 1
        con.send(request(5, "set", key="volume", value=7))
        r = answer(svc, con, 5)[0]
        assert r["error"] == "value" and "0..3" in r["msg"]
        con.send(request(6, "reset_settings"))
        assert answer(svc, con, 6)[0]["ok"] and ctx.settings.get("volume") == 2
        con.send(request(7, "clock", rtc=[2025, 3, 4, 1, 5, 6, 7, 0]))
        assert answer(svc, con, 7)[0]["wall"] == "2025-03-04T05:06:07"
        con.send(request(8, "clock", rtc=[2025, 3]))
        assert answer(svc, con, 8)[0]["error"] == "args"


def test_events_only_while_subscribed():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        line = b'{"seq":3,"t":5,"type":"press","crc":"x"}\n'
        assert svc.event(line) is False and con.take() == b""
        con.send(request(1, "events", s=2))
        answer(svc, con, 1)
        assert svc.event(line) is True
        frames = parse(con.take())[0]
        assert frames == [("E", 0, line[:-1])]
        ctx.hw.t += 2001  # the lease runs out: the host went away
        assert svc.event(line) is False


def _listing(n, skip=0):
    # (entries listed, sizes of a few, the most memory the listing held between two polls, the final answer)
    import gc

    root = tmpdir("mbxsvc")
    try:
        store = LogStore(root)
        for i in range(1, n + 1):
            _write("%s/%05d-mg.jsonl" % (store.dir, i), b"x" * (i % 7))
            if i % 3 == 0:
                _write("%s/%05d-mg.jsonl.pulled" % (store.dir, i), b"s" * 64)
        _write(store.dir + "/counter", b"2001")
        # strays: foreign names, a number out of the unit's range, a directory: none listed, all counted
        for junk in ("9999999999-mg.jsonl", "notes.txt", "00012-MG.jsonl", "x.jsonl.pulled"):
            _write(store.dir + "/" + junk, b"junk")
        os.mkdir(store.dir + "/00077-dir.jsonl")
        con = Console()
        ctx = Ctx(root)
        svc = HostService(ctx, inp=con.inp, out=con.out, ready=con.ready)
        con.send(request(1, "logs", skip=skip))
        gc.collect()
        base = gc.mem_alloc() if MPY else 0
        peak = 0
        count = 0
        seen = {}
        watch = ("00007-mg.jsonl", "00006-mg.jsonl.pulled", "00200-mg.jsonl", "02000-mg.jsonl", "counter")
        done = None
        while done is None:
            svc.poll(0)
            frames, _ = parse(con.take())
            for f in frames:
                if f[0] == "P":
                    for ln in f[2].decode().split("\n"):
                        if ln.startswith("+"):
                            assert int(ln[1:]) == skip + count, (ln, count)  # where each part starts
                        elif ln:
                            k, v = ln.rsplit(" ", 1)
                            count += 1
                            if k in watch:
                                seen[k] = int(v)
                elif f[0] == "R":
                    done = json.loads(f[2])
            frames = f = None
            if MPY:
                gc.collect()  # what the listing holds between passes of the main loop (garbage goes at idle)
                peak = max(peak, gc.mem_alloc() - base)
        assert done["n"] == count and done["total"] == (count + skip if count else done["total"]) and done["strays"] == 5, done
        assert len(done["stray"]) == 3
        return count, seen, peak, done
    finally:
        rmtree(root)


def test_listing_of_two_thousand_logs_in_constant_memory():
    count, seen, peak, _ = _listing(2000)
    assert count == 2000 + 2000 // 3
    assert seen == {"00007-mg.jsonl": 0, "00006-mg.jsonl.pulled": 64, "00200-mg.jsonl": 4, "02000-mg.jsonl": 5}
    small = _listing(200)
    assert small[0] == 200 + 200 // 3
    assert peak - small[2] < 256, (peak, small[2])  # ten times the logs, no more memory held
    assert peak < 6144, peak  # the service holds ~250 bytes (iterator, generator); the rest is this test's parsing


def test_a_listing_resumes_where_the_host_asks():
    total = 300 + 300 // 3
    count, _, _, done = _listing(300, skip=123)
    assert count == total - 123 and done["skip"] == 123
    count, _, _, done = _listing(5, skip=50)
    assert count == 0 and done["total"] == 6  # past the end: nothing, and the total says so


def _hex(b):
    return "".join("%02x" % x for x in b)


def test_an_input_at_its_end_is_looked_at_once_a_second():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        reads = [0]

        def eof(b):
            reads[0] += 1
            return 0

        con.readinto = eof
        svc.ready = lambda: True  # /dev/null: always readable, never a byte
        for _ in range(50):
            svc.poll(0)
        assert reads[0] == 1 and svc.dead
        ctx.hw.t += 1001
        svc.poll(0)
        assert reads[0] == 2


def test_two_thousand_logs_are_pulled_in_the_heap():
    # List 2,000 logs and read and mark them as `mausbox logs pull` does (every 10th under MicroPython, to keep
    # the suite fast: tests/host/test_logs_pull.py pulls all 2,000 through the host link), under the capped heap
    # of the 32-bit port: nothing the service holds grows with the number of logs pulled.
    import gc

    root = tmpdir("mbxsvc")
    try:
        store = LogStore(root)
        data = b'{"seq":0,"t":0,"type":"game_start","crc":"00000000"}\n' * 3
        sha = _hex(hashlib.sha256(data).digest())
        for i in range(1, 2001):
            _write("%s/%05d-mg.jsonl" % (store.dir, i), data)
        con = Console()
        ctx = Ctx(root)
        svc = HostService(ctx, inp=con.inp, out=con.out, ready=con.ready)
        con.send(request(1, "logs"))
        listed = 0
        done = None
        while done is None:
            svc.poll(0)
            for f in parse(con.take())[0]:
                if f[0] == "P":
                    for ln in f[2].decode().split("\n"):
                        if ln and ln[0] != "+":
                            assert 0 < int(ln[:5]) <= 2000 and ln.endswith("-mg.jsonl %d" % len(data)), ln
                            listed += 1
                elif f[0] == "R":
                    done = json.loads(f[2])
            f = None
        assert listed == 2000 == done["n"]  # (the test keeps no list of names: its own heap is the ESP32's too)
        gc.collect()
        base = gc.mem_alloc() if MPY else 0
        peak = 0
        for k in range(0, 2000, 10 if MPY else 1):
            name = "%05d-mg.jsonl" % (k + 1)
            con.send(request(k + 2, "read", name=name))
            r, parts, _ = answer(svc, con, k + 2)
            assert r["sha256"] == sha and b"".join(p[2][8:] for p in parts if p[0] == "D") == data, name
            con.send(request(k + 3000, "mark", name=name, sha256=sha))
            assert answer(svc, con, k + 3000)[0]["marked"] is True
            r = parts = None
            if MPY and k % 200 == 0:
                gc.collect()
                peak = max(peak, gc.mem_alloc() - base)
        assert store.is_pulled("01991-mg.jsonl", sha) and peak < 2048, peak
        assert store.next_number() == 2001  # a game's start numbers it from the directory, streamed: no list
    finally:
        rmtree(root)
