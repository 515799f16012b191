# A host's requests never delay a player's input (issue 27). The ESP32 port's console write stays in C until all it
# was given is in the UART's 128-byte transmit FIFO (maus.sim.uart Uart.tx), so a frame written at once held the
# buttons' soft IRQs off until the FIFO had room, tick by tick: a press during a ~300-byte `status` answer in a game
# got its first edge up to ~10 ms late (9.5 ms here), one while a log streams up to ~90 ms (a 1 KB data frame; 84
# ms here). The desk (maus.unit.desk) and the service (maus.host.service) write their frames in slices that fit and spin
# between them, where the handlers run.
import json

import logfs
from fwtest import repo_path
from hostkit import Ctx


class _Log:
    name = "00001-mg.jsonl"


def _press_while_answering(ctx, req, lates, least):
    """For each µs in lates: a press that long after the unit starts writing its answer to req; -> the µs from
    each press's edge to its first-edge time. The answer must be ok and over `least` bytes."""
    from maus.capture.irq import EV_PRESS, Capture
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
    from maus.sim import hw as sim

    return sim.Hardware(_board())


def _board():
    # The sim board's file read as JSON: maus.hw.board (the board checker, ~10 KB) is a boot step a unit unloads
    # again (maus.unit.boot), never held while it answers a host in a game; this file ran near its cap holding it.
    # Without the card reader: these tests time buttons against the console, and its emulator and tags (~25 KB,
    # maus.sim.mfrc522_emu) took room they do not use.
    with open(repo_path("boards") + "/sim.json") as f:
        board = json.load(f)
    del board["parts"]["rfid"]
    return board


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
            assert 0 <= d <= 100, d  # the handler's dispatch at a branch, not a tick


def test_a_press_while_a_log_streams_is_timed_at_its_edge():
    hw = _hw()
    if hw is None:
        return
    with logfs.Fs() as fs:
        ctx = Ctx(fs.root)
        ctx.hw = hw
        with open(ctx.store.dir + "/00001-mg.jsonl", "wb") as f:
            for _ in range(9):
                f.write(b"x" * 1000)  # 9 KB: data frames of 1 KB (a UART console), a pass each
        req = {"op": "read", "name": "00001-mg.jsonl"}
        for d in _press_while_answering(ctx, req, (5000, 150000, 600000), 9000):
            assert 0 <= d <= 300, d


def test_a_double_press_while_a_log_streams_is_a_double():
    # A log's 1 KB data frame holds the loop ~90 ms at 115,200 baud: a join's double press (two 80 ms clicks 200 ms
    # apart) behind a pull was taken for clicks, and a season's game never started. The stream waits while a
    # player's input is being taken (maus.host.service _players).
    hw = _hw()
    if hw is None:
        return
    from maus.capture.buttons import Gestures
    from maus.capture.irq import EV_PRESS, EV_RELEASE, Capture
    from maus.unit.core import HostWake

    w = hw.world
    u = hw._uart()
    seen = []
    gest = Gestures(len(hw.buttons), lambda i, kind: seen.append((i + 1, kind)))

    def event(kind, i, t):  # as maus.unit.core's _cap_event
        if kind == EV_PRESS:
            gest.press(i, hw.ticks_ms())
        elif kind == EV_RELEASE:
            gest.release(i, hw.ticks_ms())

    cap = Capture(hw.buttons, hw.ticks_us, hw.levels, emit=event)
    cap.start()
    with logfs.Fs() as fs:
        ctx = Ctx(fs.root)
        ctx.hw = hw
        ctx.mode = "join"  # the next game's players join while the last pull goes on
        ctx.capture = cap
        ctx.gest = gest
        with open(ctx.store.dir + "/00001-mg.jsonl", "wb") as f:
            for _ in range(12):
                f.write(b"x" * 1000)  # ~1 s on the line
        wake = HostWake(ctx, inp=hw, out=hw, ready=hw.console_ready)
        write = u.write
        started = [False]

        def writing(b):
            if not started[0]:  # the stream's first bytes: a double press 0.3 s into it
                started[0] = True
                t = w.now + 300000
                for dt, act in ((0, hw.press), (80000, hw.release), (200000, hw.press), (280000, hw.release)):
                    w.at(t + dt, act, 1)
            return write(b)

        u.write = writing
        u.request({"op": "read", "name": "00001-mg.jsonl"})
        for _ in range(20000):  # main-loop passes, as maus.unit.core's step runs them
            cap.service()
            gest.poll(hw.ticks_ms())
            wake.serve()
            if u.answers:
                break
            w.sleep_until(w.now + 1000)
        for _ in range(100):
            cap.service()
            gest.poll(hw.ticks_ms())
            w.sleep_until(w.now + 10000)
    assert u.results.get("ok") == 1, u.results  # the log went out whole
    assert started[0] and seen == [(1, "double")], seen


def test_a_press_while_a_host_session_idles_is_timed_at_its_edge():
    # With a host session on, the idle loop looks at the console each ms (maus.hw.esp32 idle). It slept 1 ms at a time
    # in time.sleep_ms, whose last 155 µs run no handler (mp_hal_delay_us): a press there got its first edge up to
    # ~160 µs late, in ~15 % of a session's idle time (issue 27: the season's capture p99 with a host polling). It
    # spins in bytecode between looks now: the handler runs at a branch within µs.
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only
    except ImportError:
        return
    from maus.capture.irq import EV_PRESS, Capture
    from maus.sim import hw as sim

    hw = sim.Hardware(_board())
    w = hw.world
    got = []
    cap = Capture(hw.buttons, hw.ticks_us, hw.levels, emit=lambda kind, i, t: got.append((kind, i, t)))
    cap.start()

    class Quiet:  # the console's poller: no request comes
        def ipoll(self, timeout):
            return ()

    late = []
    for k in range(20):  # edges all through a ms of the idle, 50 µs apart
        w.sleep_until(w.now + 100000)
        edge = w.now + 3000 + 50 * k
        w.at(edge, hw.press, 1)
        t = hw.ticks_us() - w.now  # ticks_us = now + t
        hw.idle(10, Quiet())
        cap.service()
        presses = [g for g in got if g[0] == EV_PRESS]
        assert presses, k
        late.append(presses[0][2] - t - edge)
        hw.release(1)
        for _ in range(40):  # the release taken in, the pin's IRQ armed again
            w.sleep_until(w.now + 10000)
            cap.service()
        got.clear()
    assert max(late) <= 60, late  # the handler's dispatch at a branch, not a delay's blind tail
