from maus.capture.arbiter import FALSE_START, LATE, LOCKED, NO_RACE, VALID, Arbiter
from maus.ticks import PERIOD, ticks_add


def test_earliest_wins_regardless_of_arrival_order():
    a = Arbiter(tie_us=2000)
    a.reveal(1000)
    assert a.press(2, 9000) == VALID
    assert a.press(1, 4000) == VALID  # arrived later, pressed earlier
    assert a.decide() == [(1, 3000)]


def test_tie_window_inclusive():
    a = Arbiter(tie_us=2000)
    a.reveal(0)
    a.press(3, 10000)
    a.press(1, 12000)
    a.press(2, 12001)
    assert a.decide() == [(3, 10000), (1, 12000)]


def test_false_start_locks_out_for_the_reveal():
    a = Arbiter(tie_us=2000, lockout=True)
    a.reveal(50000)
    assert a.press(1, 40000) == FALSE_START
    assert a.press(1, 60000) == LOCKED
    assert a.press(2, 70000) == VALID
    assert a.decide() == [(2, 20000)]
    assert a.press(4, 75000) == LATE  # 5 ms behind the winner (within 2 ms it would be a late tie)
    a.close()
    a.reveal(100000)
    assert a.press(1, 100500) == VALID


def test_no_lockout_setting():
    a = Arbiter(lockout=False)
    a.reveal(50000)
    assert a.press(1, 40000) == FALSE_START
    assert a.press(1, 60000) == VALID


def test_early_press_locks_next_reveal():
    a = Arbiter()
    a.early(5)
    a.reveal(0)
    assert a.press(5, 100) == LOCKED


def test_no_race():
    a = Arbiter()
    assert a.press(1, 5) == NO_RACE
    a.reveal(5)
    assert a.decide() == []


def test_wraparound_mid_race():
    a = Arbiter(tie_us=2000)
    reveal = PERIOD - 3000
    a.reveal(reveal)
    a.press(2, ticks_add(reveal, 5000))  # after the wrap: small number
    a.press(1, ticks_add(reveal, 2500))  # before the wrap
    a.press(3, ticks_add(reveal, -10))  # false start, across nothing
    assert a.decide() == [(1, 2500)]
    assert a.presses[2] == (3, -10, FALSE_START)


def test_decide_wait_covers_tie_and_settle():
    a = Arbiter(tie_us=2000, settle_ms=3)
    assert a.decide_ms() == 6


def test_equal_times_ordered_by_player_on_every_port():
    a = Arbiter(tie_us=2000)
    a.reveal(0)
    for p in (5, 2, 6, 1):
        a.press(p, 7000)
    assert [p for p, off in a.decide()] == [1, 2, 5, 6]


def test_a_tie_confirmed_after_the_decision_still_ties():
    # a rival's contact bounced past decide_ms: its press arrives late, but its first edge ties
    a = Arbiter(tie_us=2000)
    a.reveal(0)
    a.press(1, 300000)
    assert a.decide() == [(1, 300000)]
    assert a.press(2, 301500) == VALID and a.late_ties == [(2, 301500)]
    assert a.press(3, 302500) == LATE and a.press(2, 303000) == LATE
    assert a.order == [1, 2, 3]
