# A host's `status` poll in a game (issue 27: "requests never delay a player's input"). The ESP32 port's console
# write stays in C until all it was given is in the UART's 128-byte transmit FIFO (maus.sim.uart Uart.tx), so the
# ~500-byte answer written at once held the buttons' soft IRQs off until the FIFO had room, tick by tick: a press
# then got its first edge up to ~10 ms late. The desk (maus.unit.desk) writes it in slices that fit and sleeps
# between them, where the handlers run.
import logfs
from fwtest import repo_path
from hostkit import Ctx
from maus import board


class _Log:
    name = "00001-mg.jsonl"


def test_a_press_while_a_status_answer_goes_out_in_a_game_is_timed_at_its_edge():
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only (this runs there)
    except ImportError:
        return
    from maus.capture import EV_PRESS, Capture
    from maus.hw import sim
    from maus.unit.core import HostWake

    hw = sim.Hardware(board.load(repo_path("boards") + "/sim.json"))
    w = hw.world
    u = hw._uart()
    got = []
    cap = Capture(hw.buttons, hw.ticks_us, hw.levels, emit=lambda kind, i, t: got.append((kind, i, t)))
    cap.start()
    with logfs.Fs() as fs:
        ctx = Ctx(fs.root)
        ctx.hw = hw
        ctx.log = _Log()  # a game is on: the desk answers
        ctx.mode = "play"
        wake = HostWake(ctx, inp=hw, out=hw, ready=hw.console_ready)
        edge = [0]
        sent = [0]
        write = u.write

        def writing(b):
            if not sent[0]:  # the answer's first bytes: the press comes while it goes out
                edge[0] = w.now + late_us
                w.at(edge[0], hw.press, 1)
            sent[0] += len(b)
            return write(b)

        u.write = writing
        for late_us in (1000, 6000, 15000, 30000):  # early, in the middle and late in the answer's ~40 ms
            w.sleep_until(w.now + 100000)
            sent[0] = 0
            answers = u.answers
            u.request({"op": "status"})
            for _ in range(200):  # main-loop passes, as maus.unit.core's step runs them in a game
                cap.service()
                wake.serve()
                if got and u.answers > answers:
                    break
                w.sleep_until(w.now + 1000)
            assert u.answers == answers + 1 and u.results.get("ok") == u.answers, u.results
            assert sent[0] > 256, sent[0]  # a status answer: twice what the FIFO holds
            presses = [g for g in got if g[0] == EV_PRESS]
            assert presses, late_us
            d = presses[0][2] - w.ticks_us() + (w.now - edge[0])  # the first-edge time less the edge's
            assert 0 <= d <= 300, (late_us, d)  # the handler's dispatch (a sleep's blind tail at most), not a tick
            hw.release(1)
            for _ in range(40):  # the release taken in, the pin's IRQ armed again
                w.sleep_until(w.now + 10000)
                cap.service()
            got.clear()
    assert u.tx_blocked_us == 0  # no write waited for room in the FIFO
