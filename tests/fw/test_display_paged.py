# The display's frame goes out a page per I2C transfer (maus.unit.feedback): a transfer is a C call that holds the
# buttons' soft IRQs off, and a press during one whole-frame transfer (~23 ms at 400 kHz) got its first edge
# that late (a second claim right after the first one's prompt, M is for Mouse C: bench/bench_season.py).
from fwtest import repo_path
from maus.hw import board


def test_a_press_during_a_display_refresh_is_timed_within_a_page():
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only (this runs there)
    except ImportError:
        return
    from maus.capture.irq import EV_PRESS, Capture
    from maus.settings.values import Settings
    from maus.sim import hw as sim
    from maus.unit.feedback import Feedback

    hw = sim.Hardware(board.load(repo_path("boards") + "/sim.json"))
    got = []
    cap = Capture(hw.buttons, hw.ticks_us, hw.levels, emit=lambda kind, i, t: got.append((kind, i, t)))
    cap.start()
    fb = Feedback(hw, Settings("/no-such-folder/"))  # the defaults
    w = hw.world
    oled = hw.wiring.display  # the SSD1306 controller model on the bus: it counts whole frames of its window
    frames = oled.frames
    for late_us in (2000, 9000, 17000):  # early, in the middle and late in a whole frame's transfer
        w.sleep_until(w.now + 100000)
        fb.text("S4: die 2 | Karten deines | Paars auflegen")
        edge = w.now + late_us
        w.at(edge, hw.press, 1)
        fb.update(hw.ticks_ms())  # the refresh (its transfers block as on the board)
        for _ in range(50):
            cap.service()
            if got:
                break
            w.sleep_until(w.now + 1000)
        presses = [g for g in got if g[0] == EV_PRESS]
        assert presses, late_us
        d = presses[0][2] - edge
        assert 0 <= d <= 4000, (late_us, d)  # a page's transfer (~3 ms) at most, not the frame's 23 ms
        hw.release(1)
        for _ in range(40):  # the release taken in, the pin's IRQ armed again
            w.sleep_until(w.now + 10000)
            cap.service()
        got.clear()
    assert oled.frames == frames + 3  # each refresh still a whole frame to the display
