# The virtual unit's gestures (maus.sim.hw Hardware.apply): a control line's hold or double press is timed by the
# unit's clock, and one on a button still held by the last one starts once that one let go (a click typed while
# a long press is held was swallowed by it: the terminal's M is for Mouse game lost its join click).
from fwtest import repo_path
from maus.hw import board


def _presses(hw, pin, until_us):
    """Presses (falling edges) of the pin as the unit's clock runs to until_us, sampled every 10 ms."""
    w = hw.world
    n, last = 0, pin.value()
    while w.now < until_us:
        w.sleep_until(w.now + 10000)
        v = pin.value()
        n += last == 1 and v == 0
        last = v
    return n, last


def test_a_click_during_a_long_press_is_a_press_of_its_own():
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only (this runs there)
    except ImportError:
        return
    from maus.sim import hw as sim

    hw = sim.Hardware(board.load(repo_path("boards") + "/sim.json"))
    pin = hw.buttons[0]
    t0 = hw.world.now
    hw.apply({"hold": 1, "ms": 1200})  # the variant chosen with a long press
    assert pin.value() == 0
    n, _ = _presses(hw, pin, t0 + 200000)
    hw.apply({"hold": 1, "ms": 80})  # a click typed 0.2 s into it
    m, level = _presses(hw, pin, t0 + 2000000)
    assert (n, m, level) == (0, 1, 1)  # the click came after the long press let go, then let go itself
    t1 = hw.world.now
    hw.apply({"double": 1})
    hw.apply({"hold": 1, "ms": 80})
    n, level = _presses(hw, pin, t1 + 1000000)
    assert (n, level) == (2, 1)  # the double's second click (its first came at once), then the click after it


def test_a_long_press_after_the_clock_is_rebased_is_still_long():
    # The world's clock is moved back every ~9 minutes (maus.sim.world _rebase): a gesture's end kept in the old
    # clock made the next long press start that much later, and the unit took it for a click (a season of games
    # went off its script at its seventh game).
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only (this runs there)
    except ImportError:
        return
    from maus.sim import hw as sim

    hw = sim.Hardware(board.load(repo_path("boards") + "/sim.json"))
    pin = hw.buttons[0]
    w = hw.world
    w.sleep_until(0x20000000 - 300000)  # just before the world's rebase point (maus.sim.world _REBASE_AT)
    hw.apply({"hold": 1, "ms": 80})  # a click: the button's last gesture
    w.sleep_until(0x20000000 + 1000)  # and past it: the clock moved back 268 s
    assert w.rebased == 1
    t0 = w.now
    hw.apply({"hold": 1, "ms": 1200})
    assert pin.value() == 0  # pressed at once
    n, level = _presses(hw, pin, t0 + 1000000)
    assert (n, level) == (0, 0)  # still held a second later
    n, level = _presses(hw, pin, t0 + 1500000)
    assert (n, level) == (0, 1)  # let go after 1.2 s
