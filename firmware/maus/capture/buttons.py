# Gestures from confirmed presses and releases: click, double press, long press.
#
# A press is passed on at once (races need it); the gesture follows: "long" while still held after
# long_ms, "double" at the second press within double_ms of the first release, "click" once the
# double window has passed without a second press.
from maus.ticks import ticks_diff
from micropython import const

# A button's flags (one byte each: no list per flag)
_DOWN = const(1)  # held
_LONG = const(2)  # long already sent for this press
_SECOND = const(4)  # this press is the second of a double
_WAIT = const(8)  # released once; a second press now makes a double
_GONE = const(16)  # begun before a new screen (reset): its release, and a second press within double_ms, say nothing


class Gestures:
    double_ms = 400
    long_ms = 1000

    def __init__(self, n, emit):
        self.emit = emit  # emit(player_index, kind)
        self._f = bytearray(n)
        self._down_at = [0] * n
        self._down_us = [0] * n  # the press's first edge (ticks_us), for a hold the loop did not see (release)
        self._up_at = [0] * n
        self.n = n

    def press(self, i, now_ms, t_us=-1):
        f = self._f[i]
        self._down_at[i] = now_ms
        self._down_us[i] = t_us
        if f & (_WAIT | _GONE) and ticks_diff(now_ms, self._up_at[i]) <= self.double_ms:
            self._f[i] = _DOWN | _SECOND
            if not f & _GONE:
                self.emit(i, "double")
        else:
            self._f[i] = _DOWN | (f & _WAIT)

    def release(self, i, now_ms, t_us=-1):
        f = self._f[i]
        if not f & _DOWN:
            return
        f &= ~_DOWN
        d = self._down_us[i]
        if not f & (_LONG | _SECOND | _GONE) and t_us >= 0 and d >= 0 and ticks_diff(t_us, d) >= self.long_ms * 1000:
            # held past long_ms by its edges, with no poll in between (a main loop held up that long): a long press,
            # not a click. (By the edges: a press and release the loop met only after a hold-up are as long as they
            # were, not as far apart as the loop handled them.)
            self._f[i] = f | _LONG
            self.emit(i, "long")
            return
        if f & _GONE:
            f = _GONE  # (up_at: a second press within double_ms is the rest of the same gesture)
            self._up_at[i] = now_ms
        elif not f & (_LONG | _SECOND):
            f |= _WAIT
            self._up_at[i] = now_ms
        self._f[i] = f

    def cancel(self, i):
        """Forget a press (stuck button)."""
        self._f[i] &= ~(_DOWN | _WAIT)

    def poll(self, now_ms):
        for i in range(self.n):
            f = self._f[i]
            if f & _DOWN and not f & (_LONG | _SECOND):
                if ticks_diff(now_ms, self._down_at[i]) >= self.long_ms:
                    self._f[i] = f | _LONG
                    self.emit(i, "long")
            elif f & _WAIT and ticks_diff(now_ms, self._up_at[i]) > self.double_ms:
                self._f[i] = f & ~_WAIT
                self.emit(i, "click")

    def next_due(self, now_ms):
        """ms until poll() may have something to emit, or -1 when nothing is pending."""
        best = -1
        i = -1
        while i + 1 < self.n:  # (not for: its iterator's 4 words would put the frame on the heap, every pass)
            i += 1
            f = self._f[i]
            if f & _DOWN and not f & (_LONG | _SECOND):
                d = self.long_ms - ticks_diff(now_ms, self._down_at[i])
            elif f & _WAIT:
                d = self.double_ms + 1 - ticks_diff(now_ms, self._up_at[i])
            else:
                continue  # idle, or held after its gesture was sent: nothing to time
            if d < 0:
                d = 0
            if best < 0 or d < best:
                best = d
        return best

    def reset(self):
        """Forget every press in progress (a new screen: gestures begun before it do not count). A
        gesture under way ends silently, its second press too: a player's double press whose first press
        ended the game does not click on the end screen."""
        for i in range(self.n):
            f = self._f[i]
            if f & _DOWN:
                self._f[i] = _DOWN | _LONG | _GONE  # held: no long press, no click at its release
            elif f & _WAIT:
                self._f[i] = _GONE  # released: no click; a second press within double_ms is its rest
            else:
                self._f[i] = 0
