from maus.capture.buttons import Gestures


def _g():
    out = []
    g = Gestures(3, lambda i, k: out.append((i, k)))
    return g, out


def test_click_after_double_window():
    g, out = _g()
    g.press(0, 0)
    g.release(0, 80)
    g.poll(400)
    assert out == []
    g.poll(481)
    assert out == [(0, "click")]


def test_double_press():
    g, out = _g()
    g.press(1, 0)
    g.release(1, 60)
    g.press(1, 200)
    g.release(1, 260)
    g.poll(2000)
    assert out == [(1, "double")]


def test_long_press_sent_while_held():
    g, out = _g()
    g.press(2, 1000)
    g.poll(1999)
    assert out == []
    g.poll(2000)
    assert out == [(2, "long")]
    g.release(2, 3000)
    g.poll(5000)
    assert out == [(2, "long")]


def test_slow_second_press_is_two_clicks():
    g, out = _g()
    g.press(0, 0)
    g.release(0, 50)
    g.poll(500)
    g.press(0, 600)
    g.release(0, 650)
    g.poll(1100)
    assert out == [(0, "click"), (0, "click")]


def test_next_due():
    g, out = _g()
    assert g.next_due(0) == -1
    g.press(0, 0)
    assert g.next_due(10) == 990
    g.release(0, 100)
    assert g.next_due(100) == 401


def test_wrap_of_ms_clock():
    from maus.ticks import PERIOD, ticks_add
    g, out = _g()
    t0 = PERIOD - 100
    g.press(0, t0)
    g.poll(ticks_add(t0, 999))
    assert out == []
    g.poll(ticks_add(t0, 1000))
    assert out == [(0, "long")]


def test_next_due_idle_while_second_press_held():
    g, out = _g()
    g.press(0, 0)
    g.release(0, 50)
    g.press(0, 150)  # double sent; still held
    assert out == [(0, "double")]
    assert g.next_due(400) == -1


def test_reset_drops_pending_click():
    g, out = _g()
    g.press(0, 0)
    g.release(0, 50)
    g.reset()
    g.poll(1000)
    assert out == []



def _taps(g, *spans):
    for down, up in spans:
        g.press(0, down)
        g.release(0, up)


def test_reset_while_held_swallows_the_gesture_and_its_second_press():
    # a double press whose first press ended the game: neither half clicks on the end screen
    g, out = _g()
    g.press(0, 0)
    g.reset()
    g.release(0, 70)
    _taps(g, (150, 220))
    g.poll(2000)
    assert out == []
    _taps(g, (3000, 3050))  # a new press after the gesture is a gesture again
    g.poll(3500)
    assert out == [(0, "click")]


def test_reset_after_release_swallows_a_second_press_in_the_double_window():
    g, out = _g()
    _taps(g, (0, 70))
    g.reset()
    _taps(g, (150, 220))
    g.poll(2000)
    assert out == []


def test_reset_then_a_press_after_the_double_window_clicks():
    g, out = _g()
    g.press(0, 0)
    g.reset()
    g.release(0, 70)
    _taps(g, (70 + 401, 550))
    g.poll(1000)
    assert out == [(0, "click")]


def test_a_press_held_past_long_ms_with_no_poll_is_a_long_press_at_its_release():
    # the main loop held up past the hold (a busy virtual unit, a long flash write): not a click
    g, out = _g()
    g.press(0, 0, 5000)
    g.release(0, 1200, 5000 + 1200000)
    g.poll(2000)
    assert out == [(0, "long")]
    g, out = _g()  # a click whose press and release the loop met 1.2 s apart (held up): a click by its edges
    g.press(0, 0, 5000)
    g.release(0, 1200, 5000 + 80000)
    g.poll(2000)
    assert out == [(0, "click")]
    g, out = _g()
    g.press(0, 3000)  # and the next press is a gesture of its own
    g.release(0, 3050)
    g.poll(3500)
    assert out == [(0, "click")]
