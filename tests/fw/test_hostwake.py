# The host link while no host talks (maus.unit.core.HostWake): the service loads at a frame's start,
# answers as it always does, and goes again, with the modules its import loaded, once the host has gone quiet.

import sys

import logfs
from fwtest import raises
from hostkit import Console, Ctx, answer, parse, request
from maus.unit.core import LINGER_MS, HostWake

# The host link as the unit holds it: the service (~17 KB), the desk and the phases' modules, at the board's heap plus
# the virtual unit's share (host/mausbox/heapbudget.py file_cap): this file needs ~110-128 KB, where the RAM flash's
# share alone left it 2-8 % of its cap, passing or failing by the heap's layout (bench/bench_harness.py)
HEAP_BUDGET = "board"


def _wake(root):
    import maus

    maus.unload("maus.host.service")  # as after a boot: nothing of the service loaded yet
    con = Console()
    ctx = Ctx(root)
    return HostWake(ctx, inp=con.inp, out=con.out, ready=con.ready), con, ctx


def _answer(w, con, seq):
    class Poll:  # hostkit.answer polls svc.poll(0); the unit's loop calls serve()
        def poll(self, _w):
            w.serve()

    return answer(Poll(), con, seq)


def test_chatter_loads_nothing_and_a_frame_loads_the_service():
    with logfs.Fs() as fs:
        w, con, ctx = _wake(fs.root)
        con.send(b"ets Jun  8 2016\r\n>>> print(1)\r\n\x00\xff")
        for _ in range(5):
            assert w.serve() is None
        assert w.svc is None and "maus.host.service" not in sys.modules and not con.rx
        con.send(request(7, "hello", host="test", proto=1))
        r, parts, text = _answer(w, con, 7)
        assert r["ok"] and r["proto"] == 1 and r["app"] is True
        assert w.svc is not None and "maus.host.service" in sys.modules
        assert w.event([b'{"type":"note"}\n']) is False  # no monitor subscribed


def test_the_service_goes_when_the_host_is_quiet_and_counts_on():
    with logfs.Fs() as fs:
        w, con, ctx = _wake(fs.root)
        con.send(request(1, "events", s=30))
        assert _answer(w, con, 1)[0]["ok"]
        ctx.hw.t += LINGER_MS + 1
        w.serve()
        assert w.svc is not None  # a monitor subscribed: the service stays while its lease runs
        assert w.event([b'{"type":"note"}\n']) is True and parse(con.take())[0][0][0] == "E"
        con.send(request(2, "events", s=0))
        assert _answer(w, con, 2)[0]["ok"]
        ctx.hw.t += LINGER_MS - 1
        w.serve()
        assert w.svc is not None
        ctx.hw.t += 2
        assert w.serve() is None
        assert w.svc is None and "maus.host.service" not in sys.modules and w.requests == 2
        con.send(request(3, "status"))
        r = _answer(w, con, 3)[0]
        assert r["requests"] == 3 and w.svc is not None  # loaded again; its counters went on


def test_ctrl_c_and_an_input_at_its_end():
    with logfs.Fs() as fs:
        w, con, ctx = _wake(fs.root)
        con.send(b"ab\x03\x03")  # the app stops at two (tests/fw/test_hostsvc_robust.py: one is a stray)
        raises(KeyboardInterrupt, w.serve)
        reads = [0]

        def eof(b):
            reads[0] += 1
            return 0

        con.readinto = eof
        w.ready = lambda: True
        for _ in range(20):
            w.serve()
        assert reads[0] == 1
        ctx.hw.t += 1001
        w.serve()
        assert reads[0] == 2 and w.svc is None


def test_a_host_session_idles_on_the_console_not_in_1_ms_passes():
    # While a host session is on, the loop's idle gets the console's poller (hw.idle looks at it each ms and
    # ends the wait on a request), so the service no longer cuts every idle to 1 ms: the same latency in a
    # tenth of the passes. Only a console the idle cannot look at (the scenarios' line model) keeps 1 ms passes.
    with logfs.Fs() as fs:
        w, con, ctx = _wake(fs.root)
        assert w.waker() is None  # no session
        con.send(request(1, "hello", host="test", proto=1))
        assert _answer(w, con, 1)[0]["ok"]
        svc = w.svc
        assert svc.poller is None and w.waker() is None  # the line model: nothing to look at
        assert svc.poll(50) == 1  # so a pass each ms while the session is on
        p = svc.poller = object()  # what select.poll on sys.stdin gives the unit
        assert w.waker() is p
        assert svc.poll(50) == 50
        svc.dead = True
        assert w.waker() is None  # stdin at its end polls ready for ever: it would end every idle
        svc.dead = False
        ctx.log = object()  # a game: the desk reads the console at its passes
        assert w.waker() is None
        ctx.log = None
        svc.awake_until = -1  # the session is over: the loop idles as the game needs
        assert w.waker() is None


class _Log:
    name = "00002-mg.jsonl"


def test_a_request_half_read_when_a_game_begins_is_answered_by_the_desk():
    # The service has read part of a request when a game begins (HostWake.lull): the desk reads on from it, so
    # the request is answered (cut in its header, in its payload, before its newline), not lost with the service.
    with logfs.Fs() as fs:
        w, con, ctx = _wake(fs.root)
        req = request(2, "status")
        for seq, cut in ((2, 5), (4, 30), (6, len(req) - 1)):
            con.send(request(seq - 1, "hello"))
            assert _answer(w, con, seq - 1)[0]["ok"] and w.svc is not None  # a session on: the service reads
            req = request(seq, "status")
            con.send(req[:cut])
            w.serve()
            assert not con.rx  # the service has read those bytes
            ctx.log = _Log()
            ctx.mode = "play"
            w.lull()  # the game's start (maus.unit.play)
            assert w.svc is None and w.desk is not None
            con.send(req[cut:])
            r = _answer(w, con, seq)[0]
            assert r["ok"] and r["mode"] == "play", (cut, r)
            ctx.log = None  # the game over: the desk goes
            ctx.mode = "end"
            w.serve()
            assert w.desk is None


def test_a_request_in_progress_when_a_game_begins_is_answered_game():
    # a log being read when a game begins: its stream stops (the service goes) and the request is answered
    # `game`, as the desk answers it, so the host waits for the game's end and reads it then
    with logfs.Fs() as fs:  # a log of more than the 8 KB frame a pass sends (~10 KB)
        w, con, ctx = _wake(fs.root)
        with open(ctx.store.path("00001-mg.jsonl"), "wb") as f:
            for i in range(70):
                f.write(b'{"seq":%d,"t":0,"type":"note","text":"%s"}\n' % (i, b"x" * 100))
        con.send(request(1, "read", name="00001-mg.jsonl", off=0))
        import gc

        gc.collect()  # (the log's lines are garbage: the stream's 8 KB blocks come from a heap that was collected)
        con.keep = False  # the 8 KB data frame counted, not kept: its copy would be the test's heap, not the unit's
        w.serve()
        con.keep = True
        assert w.svc is not None and w.svc.job is not None  # still streaming
        assert con.dropped > 8192 and not con.tx  # a data frame of it went out
        ctx.log = _Log()
        ctx.mode = "play"
        w.lull()
        r, _parts, _ = _answer(w, con, 1)
        assert not r["ok"] and r["error"] == "game", r



def test_a_status_with_no_memory_at_the_games_peak_is_answered_on_a_later_pass():
    # The desk's status answer found no memory (a game's peak for a moment): tried again on the next passes, not
    # "busy" at once; "busy" only once _AGAIN_MS have gone by without room. (No room: the answer's making raises
    # MemoryError, as it does at the board's heap in a season's games, bench/bench_season.py.)
    from maus.host import frame

    def no_room(*_a):
        raise MemoryError

    with logfs.Fs() as fs:
        w, con, ctx = _wake(fs.root)
        ctx.log = _Log()
        ctx.mode = "play"
        w.lull()
        assert w.desk is not None
        status = frame.status
        for seq, ms, want in ((1, 100, "ok"), (2, 300, "nomem")):
            con.send(request(seq, "status"))
            frame.status = no_room
            try:
                w.serve()  # the request read; its answer finds no room
                ctx.hw.t += ms
                w.serve()  # nor now (within _AGAIN_MS, or past it: "busy")
            finally:
                frame.status = status
            if want == "ok":
                assert not con.tx  # not answered yet
                ctx.hw.t += 10
            r = _answer(w, con, seq)[0]  # the next passes, with room again
            if want == "ok":
                assert r["ok"] and r["mode"] == "play", r
            else:
                assert not r["ok"] and r["error"] == "nomem", r
