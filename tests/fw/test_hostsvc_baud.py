# The console's rate (docs/protocol.md, `baud`): the switch answered at the old rate, confirmed by a frame at the
# new one, and the unit's own way back to 115,200 when none comes or the host talks at another rate. The console
# garbles bytes between two different rates (hostkit.garble), so only a host at the unit's rate is heard.
import logfs
from hostkit import Console, Ctx, answer, parse, request
from maus.host.service import HostService, asleep


def _svc(root, app=True):
    con = Console()
    ctx = Ctx(root)
    ctx.hw.con = con
    return HostService(ctx, inp=con.inp, out=con.out, ready=con.ready, app=app), con, ctx


def _switch(svc, con, rate=921600, seq=1):
    con.send(request(seq, "baud", rate=rate))
    r = answer(svc, con, seq)[0]  # read at 115,200: the answer left before the switch
    assert r["ok"] and r["switch"] is True and r["baud"] == rate and r["wait_ms"] == 2000, r
    assert svc.ctx.hw.rates[-1] == rate and svc.baud == rate and con.rate == rate
    return r


def _polls(svc, n=5):
    for _ in range(n):
        svc.poll(0)


def test_a_hello_at_the_new_rate_keeps_it():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        _switch(svc, con)
        con.host_rate = 921600
        con.send(request(2, "hello", host="t", proto=1))
        r = answer(svc, con, 2)[0]
        assert r["ok"] and r["console"] == "uart"
        ctx.hw.t += 5000  # long after the 2 s: the switch was confirmed
        _polls(svc)
        assert svc.baud == 921600 and ctx.hw.rates == [921600]
        con.send(request(3, "baud", rate=115200))  # the host's end of the session: asked at 921,600
        r = answer(svc, con, 3)[0]
        assert r["switch"] is True and ctx.hw.rates == [921600, 115200] and svc.baud == 115200


def test_the_unit_falls_back_alone_when_no_frame_comes():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        _switch(svc, con)
        ctx.hw.t += 1999
        _polls(svc)
        assert svc.baud == 921600  # still waiting for the host's hello
        ctx.hw.t += 1
        _polls(svc)
        assert svc.baud == 115200 and ctx.hw.rates == [921600, 115200] and con.rate == 115200
        con.send(request(2, "hello", host="t", proto=1))  # the host never switched: it is heard again
        assert answer(svc, con, 2)[0]["ok"]


def test_a_hello_at_the_old_rate_is_noise_and_no_confirmation():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        _switch(svc, con)
        con.send(request(2, "hello", host="t", proto=1))  # at 115,200 into a UART at 921,600
        _polls(svc, 20)
        assert svc.requests == 1 and parse(con.take())[0] == []
        ctx.hw.t += 2000
        _polls(svc)
        assert svc.baud == 115200
        con.send(request(3, "hello", host="t", proto=1))
        assert answer(svc, con, 3)[0]["ok"]


def test_a_host_gone_back_to_115200_brings_the_unit_back():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        _switch(svc, con)
        con.host_rate = 921600
        con.send(request(2, "hello"))
        answer(svc, con, 2)
        con.host_rate = 115200  # the host gave up on the rate (a wait failed): its bytes make no frame here
        ctx.hw.t += 3000
        con.send(request(3, "status"))
        _polls(svc)
        ctx.hw.t += 999
        _polls(svc)
        assert svc.baud == 921600
        ctx.hw.t += 1
        _polls(svc)
        assert svc.baud == 115200 and ctx.hw.rates == [921600, 115200]
        con.send(request(4, "status"))
        assert answer(svc, con, 4)[0]["ok"]


def test_the_service_going_quiet_brings_the_console_back():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        _switch(svc, con)

        class Wake:  # what maus.host.service.asleep needs of a HostWake
            pass

        w = Wake()
        w.svc, w._mods, w._mod = svc, (), None
        asleep(w)
        assert ctx.hw.rates == [921600, 115200] and con.rate == 115200


def test_no_switch_where_there_is_nothing_to_switch():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        con.send(request(1, "baud", rate=115200))  # already
        r = answer(svc, con, 1)[0]
        assert r["ok"] and r["switch"] is False and r["baud"] == 115200
        for bad in (100, 9000000, "fast", None):
            con.send(request(2, "baud", rate=bad))
            assert answer(svc, con, 2)[0]["error"] == "args", bad
        ctx.hw.board = {"family": "esp32s3", "usb_serial": True}  # the chip's own USB port: USB-CDC
        con.send(request(3, "hello"))
        assert answer(svc, con, 3)[0]["console"] == "usb"
        con.send(request(4, "baud", rate=921600))
        r = answer(svc, con, 4)[0]
        assert r["switch"] is False and ctx.hw.rates == []
        svc, con, ctx = _svc(fs.root, app=False)  # the REPL's service: its session ends in the raw REPL
        con.send(request(5, "baud", rate=921600))
        assert answer(svc, con, 5)[0]["error"] == "busy" and ctx.hw.rates == []
