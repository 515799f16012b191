# The interactive virtual unit's real-time world (maus.sim.hw RealWorld: `make sim`, `mausbox sim --serial`). A
# gesture's timed edges (a control line's "double": press, release 80 ms later, press again ...) that fall due
# while the host process does not run (a busy machine stalls it) still happen at their own times, each IRQ
# handler run then: taken together at the host's time, a click's press and release got one timestamp and the
# debounce dropped the click (a typed key lost in the terminal game at a load of 8-10).
from maus.ticks import ticks_diff


def _world():
    """(the host's clock, a RealWorld whose control channel has nothing on it); None under CPython (the virtual
    unit's hardware layer needs framebuf: MicroPython only, where this runs)."""
    try:
        import framebuf  # noqa: F401
    except ImportError:
        return None
    from maus.sim import hw as sim

    host = sim.time  # the host's own clock (time's names are the world's once maus.sim.hw is loaded)
    return host, sim.RealWorld(lambda ms: host.sleep_ms(ms))


def test_edges_due_during_a_stall_keep_their_own_times():
    made = _world()
    if made is None:
        return
    host, w = made
    got = []

    def handler(pin):  # a pin's IRQ handler: it reads the clock, as the capture's does
        got.append((pin, w.ticks_us()))

    def edge(pin):
        w.irq(handler, pin)

    base = w.now
    w.at(base + 20000, edge, "press")
    w.at(base + 100000, edge, "release")
    w.at(base + 300000, edge, "press again")
    host.sleep_ms(500)  # the host process stalls past all three
    w.spend(0)
    assert [p for p, _ in got] == ["press", "release", "press again"], got
    assert ticks_diff(got[1][1], got[0][1]) == 80000 and ticks_diff(got[2][1], got[1][1]) == 200000, got
    assert w.now - base > 400000  # the clock is the host's again (sleep_ms may wake a little early)


def test_an_edge_due_now_is_handled_at_once_with_the_clock_running():
    made = _world()
    if made is None:
        return
    host, w = made
    got = []
    t0 = w.ticks_us()
    base = w.now
    w.at(base + 5000, lambda pin: w.irq(lambda p: got.append(w.ticks_us()), pin), "press")
    assert w.sleep_until(base + 2000000)  # woken by the handler, long before the end
    assert len(got) == 1 and 5000 <= ticks_diff(got[0], t0) < 2000000


def test_a_press_made_before_a_stall_is_handled_before_its_release():
    # A click from the terminal: its press is applied as the control line comes (its handler not yet run), its
    # release 80 ms later; the host process then stalls past the release. The press's handler runs at its own
    # time, not at the release's (one timestamp for both: the debounce dropped the click, CI run 66).
    made = _world()
    if made is None:
        return
    host, w = made
    got = []

    def handler(pin):
        got.append((pin, w.ticks_us()))

    w.irq(handler, "press")  # the press: an edge now, its handler pending
    w.at(w.now + 80000, lambda pin: w.irq(handler, pin), "release")
    host.sleep_ms(300)
    w.spend(0)
    assert [p for p, _ in got] == ["press", "release"], got
    assert ticks_diff(got[1][1], got[0][1]) == 80000, got
