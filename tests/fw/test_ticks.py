from maus.ticks import PERIOD, ticks_add, ticks_diff, wrap


def test_diff_plain():
    assert ticks_diff(1500, 1000) == 500
    assert ticks_diff(1000, 1500) == -500


def test_diff_across_wrap():
    before = PERIOD - 100
    after = ticks_add(before, 250)
    assert after == 150
    assert ticks_diff(after, before) == 250
    assert ticks_diff(before, after) == -250


def test_add_negative_wraps():
    assert ticks_add(0, -1) == PERIOD - 1
    assert wrap(PERIOD + 5) == 5


def test_half_range_limit():
    assert ticks_diff(ticks_add(7, PERIOD // 2 - 1), 7) == PERIOD // 2 - 1
