# Gestures from confirmed presses and releases: click, double press, long press.
#
# A press is passed on at once (races need it); the gesture follows: "long" while still held after
# long_ms, "double" at the second press within double_ms of the first release, "click" once the
# double window has passed without a second press.
from maus.ticks import ticks_diff


class Gestures:
    double_ms = 400
    long_ms = 1000

    def __init__(self, n, emit):
        self.emit = emit  # emit(player_index, kind)
        self._down = [False] * n
        self._down_at = [0] * n
        self._long = [False] * n  # long already sent for this press
        self._second = [False] * n  # this press is the second of a double
        self._wait = [False] * n  # released once; a second press now makes a double
        self._up_at = [0] * n
        self.n = n

    def press(self, i, now_ms):
        self._down[i] = True
        self._down_at[i] = now_ms
        self._long[i] = False
        if self._wait[i] and ticks_diff(now_ms, self._up_at[i]) <= self.double_ms:
            self._wait[i] = False
            self._second[i] = True
            self.emit(i, "double")
        else:
            self._second[i] = False

    def release(self, i, now_ms):
        if not self._down[i]:
            return
        self._down[i] = False
        if not self._long[i] and not self._second[i]:
            self._wait[i] = True
            self._up_at[i] = now_ms

    def cancel(self, i):
        """Forget a press (stuck button)."""
        self._down[i] = False
        self._wait[i] = False

    def poll(self, now_ms):
        for i in range(self.n):
            if self._down[i] and not self._long[i] and not self._second[i]:
                if ticks_diff(now_ms, self._down_at[i]) >= self.long_ms:
                    self._long[i] = True
                    self.emit(i, "long")
            elif self._wait[i] and ticks_diff(now_ms, self._up_at[i]) > self.double_ms:
                self._wait[i] = False
                self.emit(i, "click")

    def next_due(self, now_ms):
        """ms until poll() may have something to emit, or -1 when nothing is pending."""
        best = -1
        for i in range(self.n):
            if self._down[i] and not self._long[i] and not self._second[i]:
                d = self.long_ms - ticks_diff(now_ms, self._down_at[i])
            elif self._wait[i]:
                d = self.double_ms + 1 - ticks_diff(now_ms, self._up_at[i])
            else:
                continue  # idle, or held after its gesture was sent: nothing to time
            if d < 0:
                d = 0
            if best < 0 or d < best:
                best = d
        return best

    def reset(self):
        """Forget every press in progress (a new screen: gestures begun before it do not count)."""
        for i in range(self.n):
            self._wait[i] = False
            self._long[i] = True  # a button still held sends no long press now
            self._second[i] = False
