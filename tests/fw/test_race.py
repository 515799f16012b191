import micropython
from maus.capture.arbiter import VALID, Arbiter
from maus.capture.irq import EV_PRESS, Capture, RaceWindow
from maus.log import read as logread
from maus.log import writer as gamelog
from maus.sim.world import Esp32Timing, FlashFile, SimPin, World
from maus.ticks import ticks_diff


class _Mem:
    # a file on the rig's flash
    def __init__(self):
        self.data = b""

    def write(self, b):
        self.data += bytes(b)
        return len(b)

    def flush(self):
        pass

    def close(self):
        pass


class _Hw:
    # The hardware a RaceWindow drives, on a World (what maus.sim.hw.Hardware does, without the chips).
    def __init__(self, w, mode="irq", n=4):
        self.world = w
        self.board = {"capture": mode}
        self.buttons = [SimPin(w, 10 + i) for i in range(n)]
        self.ticks_us = w.ticks_us

    def wdt_feed(self):
        pass

    def idle(self, ms):
        self.world.sleep_until(self.world.now + ms * 1000)

    def spend(self, us):
        self.world.run(us)

    def window(self, is_open):
        self.world.window = is_open

    def levels(self):
        return self.world.levels(self.buttons)

    def scan(self, armed, max_us, out):
        return self.world.scan(self.buttons, armed, max_us, out)


class _Unit:
    # what a RaceWindow reads of the unit (maus.unit.core): its running log
    def __init__(self, log):
        self.log = log


def _race(mode, presses, log=None, w=None):
    """One race through the unit's race loop. presses: [(player index, µs after the reveal)]. ->
    (world, arbiter, {index: captured first-edge tick}, {index: true tick})."""
    w = w or World(0, model=Esp32Timing(3), rebase=True)
    hw = _Hw(w, mode)
    arb = Arbiter(tie_us=2000)
    got = {}
    due = [None]

    def emit(kind, i, t):
        if kind != EV_PRESS:
            return
        got[i] = t
        k = arb.press(i + 1, t)
        if log is not None:
            log.record("press", arb.fields(i + 1, k, ticks_diff(t, arb.reveal_t)))
        if k == VALID and due[0] is None:
            due[0] = w.ticks_ms() + arb.decide_ms()

    cap = Capture(hw.buttons, w.ticks_us, hw.levels, emit=emit)
    win = RaceWindow(hw, cap, _Unit(log) if log is not None else None)
    cap.start()
    w.sleep_until(50000)
    arb.reveal(w.ticks_us())
    truth = {}
    for i, off in presses:
        truth[i] = w.ticks_us() + off
        w.at(w.now + off, hw.buttons[i].set_level, 0)
        w.at(w.now + off + 80000, hw.buttons[i].set_level, 1)
    win.open()
    while due[0] is None or ticks_diff(w.ticks_ms(), due[0]) < 0:
        hw.spend(300)
        cap.service()
        win.step()
    arb.decide()
    win.close()
    return w, arb, got, truth


def test_the_flash_layer_counts_a_record_written_in_a_window():
    w = World(0, model=Esp32Timing())
    log = gamelog.GameLog("x", w.ticks_ms, FlashFile(_Mem(), w))
    log.record("game_start", {})
    w.window = True
    log.record("press", {"player": 1, "offset_us": 5, "false_start": False})  # not held: on flash now
    assert w.window_flash_writes == 1
    assert w.now >= 2 * Esp32Timing.flash_page_prog_us  # and the GPIO interrupts waited for it


def test_a_race_window_writes_no_press_record_until_the_race_is_decided():
    w = World(0, model=Esp32Timing(3), rebase=True)
    mem = _Mem()
    log = gamelog.GameLog("x", w.ticks_ms, FlashFile(mem, w))
    log.record("game_start", {})
    for mode in ("irq", "poll"):
        w.flash_writes = 0
        _race(mode, [(0, 30000), (2, 31500), (1, 34000)], log, w)
        assert w.window_flash_writes == 0, mode  # a press record flushed inside the window fails here
        assert w.window_gcs == 0
        assert log.held == 0 and w.flash_writes >= 1, mode  # written once the race was decided
    recs = [logread.check_line(ln)[0] for ln in mem.data.split(b"\n") if ln]
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    presses = [r for r in recs if r["type"] == "press"]
    assert [r["player"] for r in presses] == [1, 3, 2, 1, 3, 2]


def test_held_records_keep_their_order_and_times_and_the_end_releases_them():
    clock = [1000]
    mem = _Mem()
    log = gamelog.GameLog("x", lambda: clock[0], mem)
    log.record("game_start", {})
    log.hold()
    clock[0] += 40
    assert log.record("press", {"player": 2, "offset_us": 40000, "false_start": False}) == 1
    clock[0] += 3
    log.record("gesture", {"player": 1, "kind": "click"})
    assert mem.data.count(b"\n") == 1  # only game_start so far
    clock[0] += 500
    log.end({1: 0}, [1], {}, "x")
    recs = [logread.check_line(ln)[0] for ln in mem.data.split(b"\n") if ln]
    assert [(r["seq"], r["t"], r["type"]) for r in recs] == [(0, 0, "game_start"), (1, 40, "press"),
                                                               (2, 43, "gesture"), (3, 543, "game_end")]


def test_holding_allocates_nothing():
    log = gamelog.GameLog("x", lambda: 5, _Mem())
    log.record("game_start", {})
    log.hold()
    f = {"player": 1, "offset_us": 7, "false_start": False}
    micropython.heap_lock()
    try:
        log.record("press", f)
    finally:
        micropython.heap_unlock()
    assert log.held == 1


def test_poll_times_first_edges_within_a_few_us():
    for off in (30000, 30417, 31234):
        w, arb, got, truth = _race("poll", [(1, off), (3, off + 2500)])
        for i in (1, 3):
            e = ticks_diff(got[i], truth[i])
            assert 0 <= e <= 60, (off, i, e)


def test_irq_edge_in_the_sleep_tail_waits_for_the_sleep_to_end():
    w = World(0, model=Esp32Timing())
    pins = [SimPin(w, 1)]
    times = []
    cap = Capture(pins, w.ticks_us, emit=lambda k, i, t: times.append(t) if k == EV_PRESS else None)
    cap.start()
    w.at(10950, pins[0].set_level, 0)  # 50 µs before the end of a sleep_ms(1) from 10000
    w.at(20200, pins[0].set_level, 1)
    w.now = 10000
    w.sleep_until(11000)
    assert cap._t[0] == 0  # not yet: mp_hal_delay_us services nothing in its last 155 µs
    w.run(300)
    m = Esp32Timing
    assert 11000 + m.handler_entry_us <= cap._t[0] <= 11000 + m.branch_us + m.handler_entry_us
    w2 = World(0, model=Esp32Timing())
    p2 = [SimPin(w2, 1)]
    cap2 = Capture(p2, w2.ticks_us)
    cap2.start()
    w2.at(10400, p2[0].set_level, 0)  # early in the sleep: serviced inside it
    w2.now = 10000
    w2.sleep_until(11000)
    assert 10400 + m.isr_us + m.handler_entry_us <= cap2._t[0] <= 10400 + m.isr_us + m.sleep_gap_us + m.handler_entry_us


def test_a_flash_write_holds_the_edge_off():
    w = World(0, model=Esp32Timing())
    pins = [SimPin(w, 1)]
    cap = Capture(pins, w.ticks_us)
    cap.start()
    w.at(100, pins[0].set_level, 0)
    w.flash_write(100)  # one page and the metadata commit: 1.4 ms with interrupts held off
    assert cap._t[0] >= 2 * Esp32Timing.flash_page_prog_us


def test_the_clock_is_rebased_and_stays_a_small_int():
    w = World(0, model=Esp32Timing(), rebase=True)
    pins = [SimPin(w, 1)]
    cap = Capture(pins, w.ticks_us)
    cap.start()
    us = 0  # true µs since boot, kept here as a (long) int
    for _ in range(5):  # 5 x 300 s: past 2**30 µs, so rebased more than once
        w.sleep_until(w.now + 300000000)
        us += 300000000
        assert w.ticks_us() == us % (1 << 30) and w.ticks_ms() == (us // 1000) % (1 << 30)
    assert w.rebased >= 2 and w.now < 1 << 29
    micropython.heap_lock()
    try:
        a = w.ticks_us()  # now + offset: small ints only
        b = w.ticks_ms()
    finally:
        micropython.heap_unlock()
    assert a == us % (1 << 30) and b == (us // 1000) % (1 << 30)
    # an action scheduled before a rebase happens at its time after it
    w.at(w.now + 200000000, pins[0].set_level, 0)
    w.sleep_until(w.now + 150000000)
    w.sleep_until(w.now + 150000000)  # a rebase in between
    assert w.rebased >= 3
    assert ticks_diff(cap._t[0], (us + 200000000) % (1 << 30)) - Esp32Timing.isr_us - Esp32Timing.handler_entry_us \
        in (0, 1)
