# A host's requests never delay a player's input (issue 27). The ESP32 port's console write stays in C until all it
# was given is in the UART's 128-byte transmit FIFO (maus.sim.uart Uart.tx), so a frame written at once held the
# buttons' soft IRQs off until the FIFO had room, tick by tick: a press during a ~300-byte `status` answer in a game
# got its first edge up to ~10 ms late (9.5 ms here), one while a log streams up to ~90 ms (a 1 KB data frame; 84
# ms here). The desk (maus.unit.desk) and the service (maus.hostsvc) write their frames in slices that fit and sleep
# between them, where the handlers run.
import logfs
from fwtest import repo_path
from hostkit import Ctx
from maus import board


class _Log:
    name = "00001-mg.jsonl"


def _press_while_answering(ctx, req, lates, least):
    """For each µs in lates: a press that long after the unit starts writing its answer to req; -> the µs from
    each press's edge to its first-edge time. The answer must be ok and over `least` bytes."""
    from maus.capture import EV_PRESS, Capture
    from maus.unit.core import HostWake

    hw = ctx.hw
    w = hw.world
    u = hw._uart()
    got = []
    cap = Capture(hw.buttons, hw.ticks_us, hw.levels, emit=lambda kind, i, t: got.append((kind, i, t)))
    cap.start()
    wake = HostWake(ctx, inp=hw, out=hw, ready=hw.console_ready)
    edge = [0, 0, 0]  # the press's edge, bytes of the answer sent, µs after its first byte
    write = u.write

    def writing(b):
        if not edge[1]:  # the answer's first bytes: the press comes while it goes out
            edge[0] = w.now + edge[2]
            w.at(edge[0], hw.press, 1)
        edge[1] += len(b)
        return write(b)

    u.write = writing
    out = []
    for late in lates:
        w.sleep_until(w.now + 100000)
        edge[1] = 0
        edge[2] = late
        answers = u.answers
        u.request(req)
        for _ in range(3000):  # main-loop passes, as maus.unit.core's step runs them
            cap.service()
            wake.serve()
            if got and u.answers > answers:
                break
            w.sleep_until(w.now + 1000)
        assert u.answers == answers + 1 and u.results.get("ok") == u.answers, u.results
        assert edge[1] > least, edge[1]
        presses = [g for g in got if g[0] == EV_PRESS]
        assert presses, late
        out.append(presses[0][2] - w.ticks_us() + (w.now - edge[0]))  # the first-edge time less the edge's
        hw.release(1)
        for _ in range(40):  # the release taken in, the pin's IRQ armed again
            w.sleep_until(w.now + 10000)
            cap.service()
        got.clear()
    assert u.tx_blocked_us == 0  # no write waited for room in the FIFO
    return out


def _hw():
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only (this runs there)
    except ImportError:
        return None
    from maus.hw import sim

    return sim.Hardware(board.load(repo_path("boards") + "/sim.json"))


def test_a_press_while_a_status_answer_goes_out_in_a_game_is_timed_at_its_edge():
    hw = _hw()
    if hw is None:
        return
    with logfs.Fs() as fs:
        ctx = Ctx(fs.root)
        ctx.hw = hw
        ctx.log = _Log()  # a game is on: the desk answers
        ctx.mode = "play"
        # early, in the middle and late in the answer's ~30 ms; more than twice what the FIFO holds
        for d in _press_while_answering(ctx, {"op": "status"}, (1000, 6000, 15000, 25000), 256):
            assert 0 <= d <= 300, d  # the handler's dispatch (a sleep's blind tail at most), not a tick


def test_a_press_while_a_log_streams_is_timed_at_its_edge():
    hw = _hw()
    if hw is None:
        return
    with logfs.Fs(blocks=64) as fs:
        ctx = Ctx(fs.root)
        ctx.hw = hw
        with open(ctx.store.dir + "/00001-mg.jsonl", "wb") as f:
            f.write(b"x" * 9000)  # an 8 KB data frame (no game: the service's big chunk), then the rest
        req = {"op": "read", "name": "00001-mg.jsonl"}
        for d in _press_while_answering(ctx, req, (5000, 150000, 600000), 9000):
            assert 0 <= d <= 300, d
