# The virtual unit's console line (maus.sim.uart) across the world's clock rebase (maus.sim.world _rebase, every
# ~4.5 virtual minutes): the times it holds (a request's arrival on the wire, the host's wait for its answer) move
# back with the clock. Left in the old clock, a request on the wire as the clock moved back stopped arriving for
# the shift's 268 s, and the unit did not answer the host for minutes late in a season of games.
from fwtest import repo_path
from maus.hw import board

_AT = 0x20000000  # maus.sim.world _REBASE_AT


def _line():
    """The virtual unit's world and its console line; None under CPython (the display needs framebuf)."""
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only (this runs there)
    except ImportError:
        return None
    from maus.sim import hw as sim

    hw = sim.Hardware(board.load(repo_path("boards") + "/sim.json"))
    return hw.world, hw._uart()


def _read(u):
    got = bytearray()
    b = bytearray(64)
    while u.ready():
        n = u.readinto(b)
        got += b[:n]
    return bytes(got)


def test_a_request_on_the_wire_as_the_clock_is_rebased_arrives_in_its_time():
    line = _line()
    if line is None:
        return
    w, u = line
    w.sleep_until(_AT - 1000)
    u.request({"op": "status"})
    assert u.ready()  # on the wire: its first byte is in
    got = _read(u)
    w.sleep_until(_AT + 1000)  # 2 ms later, the clock moved back
    assert w.rebased == 1
    got += _read(u)
    w.sleep_until(w.now + 10000)  # a ~40-byte frame takes 3.5 ms at 115,200 baud
    got += _read(u)
    assert got.startswith(b"#MB1Q ") and got.endswith(b'{"op": "status"}\n')


def test_an_unanswered_request_is_given_up_in_its_time_across_a_rebase():
    line = _line()
    if line is None:
        return
    w, u = line
    w.sleep_until(_AT - 1000000)
    u.request({"op": "status"})
    u.request({"op": "hello"})  # waits for the first's answer (or its timeout, 3 s)
    _read(u)
    w.sleep_until(_AT + 1000)
    assert w.rebased == 1
    w.sleep_until(w.now + 2500000)  # 3.5 s after the first was asked
    got = _read(u)
    w.sleep_until(w.now + 10000)
    got += _read(u)
    assert u.timeouts == 1 and b'"hello"' in got


def test_a_write_longer_than_the_transmit_fifo_holds_the_unit_until_the_rest_fits():
    # The ESP32 port's console write (ports/esp32/uart.c uart_stdout_tx_strn): what fits in the 128-byte transmit
    # FIFO goes at once; for the rest the call sleeps a FreeRTOS tick (10 ms) at a time and fills the FIFO again.
    line = _line()
    if line is None:
        return
    w, u = line
    w.sleep_until(1000000)  # at a tick
    t0 = w.now
    u.write(b"x" * 100)  # fits: no time in C
    assert w.now == t0 and u.tx_blocked_us == 0
    u.write(b"x" * 400)  # 28 fit; then ~115 a tick (10 ms at 87 µs a byte): the last 28 fit at the 4th tick
    assert w.now - t0 == 40000 and u.tx_blocked_us == 40000
    w.sleep_until(w.now + 20000)  # the FIFO has sent it all
    t1 = w.now
    u.write(b"x" * 128)
    assert w.now == t1
