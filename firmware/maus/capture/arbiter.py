# Who pressed first: arbitration of one race by first-edge timestamps.
#
# Presses arrive after their settle time and possibly out of edge order, so the decision is taken by
# timestamps once `decide_ms()` has passed since the first valid press. Presses within `tie_us` of the
# earliest valid press tie. A press with a time before the reveal is a false start; with lock-out on,
# that player's presses are ignored for the rest of this reveal.
from maus.ticks import ticks_diff
from micropython import const

FALSE_START = 0
VALID = 1
LOCKED = 2  # ignored: locked out after a false start, or a repeat press in the same race
LATE = 3  # after the decision (logged with its offset all the same: every press of a reveal is)
NO_RACE = 4

_MAX = const(6)  # players
# Arbiter._flags, one small int: bit p = player p made a valid press in this race (cleared at each reveal),
# bit _LOCK + p = player p is locked out by a false start (until close())
_SEEN = const(0xFF)
_LOCK = const(8)


class Arbiter:
    def __init__(self, tie_us=2000, lockout=True, settle_ms=3):
        self.tie_us = tie_us
        self.lockout = lockout
        # How long after the first valid press to wait (decide_ms): the tie window plus the settle time of
        # a rival's press, plus 1 ms for the main loop to deliver it.
        self._wait_ms = (tie_us + 999) // 1000 + settle_ms + 1
        self.reveal_t = 0
        self.open = False
        self.decided = False
        self._flags = 0
        self._off = [0] * (_MAX + 1)  # offset of each player's first press in `order`
        self.presses = []  # (player, offset_us, kind) in arrival order, for the log
        self.order = []  # players by their first press since the reveal that was not locked out (valid or late)
        self.late_ties = []  # (player, offset_us) confirmed after decide() but tied with its winner
        self._first = None

    def decide_ms(self):
        return self._wait_ms

    def early(self, player):
        """A press while waiting for a reveal: a false start that locks this player out of the next reveal."""
        if self.lockout:
            self._flags |= 1 << _LOCK + player

    def reveal(self, t_us):
        self.reveal_t = t_us
        self.open = True
        self.decided = False
        self.presses = []
        self.order = []
        self.late_ties = []
        self._first = None
        self._flags &= ~_SEEN

    def press(self, player, t_us):
        """Classify a press; VALID presses take part in the decision."""
        if not self.open:
            return NO_RACE
        off = ticks_diff(t_us, self.reveal_t)
        if off < 0:
            kind = FALSE_START
            if self.lockout:
                self._flags |= 1 << _LOCK + player
        elif self._flags >> _LOCK + player & 1:
            kind = LOCKED  # locked out by a false start: also after the decision
        elif self.decided:
            kind = LATE
            first = self._first
            if first is not None and not self._flags >> player & 1 and off - first <= self.tie_us:
                # confirmed after the decision (a contact that bounced past decide_ms) but its first edge
                # ties with the winner: it is a tied claim all the same
                kind = VALID
                self._flags |= 1 << player
                self.late_ties.append((player, off))
        elif self._flags >> player & 1:
            kind = LOCKED
        else:
            kind = VALID
            self._flags |= 1 << player
        self.presses.append((player, off, kind))
        if (kind == VALID or kind == LATE) and player not in self.order:
            o = self.order  # by first-edge time: presses arrive a settle time late, maybe out of order
            i = len(o)
            while i > 0 and self._off[o[i - 1]] > off:
                i -= 1
            o.insert(i, player)
            self._off[player] = off
        return kind

    def offset(self, player):
        """Offset of the first press of a player in `order`."""
        return self._off[player]

    def fields(self, player, kind, off):
        """The log fields of a press (docs/log-format.md): its offset from the reveal and what it was."""
        f = {"player": player, "offset_us": off, "false_start": kind == FALSE_START}
        if kind == LOCKED:
            f["locked"] = True
        elif kind == LATE:
            f["late"] = True
        return f

    def decide(self):
        """Close the race: [(player, offset_us), ...] of the winner and everyone tied with it, earliest first."""
        self.decided = True
        best = None  # the earliest valid press
        for _p, off, kind in self.presses:
            if kind == VALID and (best is None or off < best):
                best = off
        self._first = best
        if best is None:
            return []
        # (loops, not a comprehension and a key function: each would be a function of its own in RAM for the
        # whole game)
        out = []
        for p, off, kind in self.presses:
            if kind == VALID and off - best <= self.tie_us:
                out.append((off, p))
        out.sort()  # by time, then player (ids below 8): no two alike, as MicroPython's sort is not stable
        for i in range(len(out)):
            off, p = out[i]
            out[i] = (p, off)
        return out

    def close(self):
        """End of this reveal: lock-outs expire."""
        self.open = False
        self._flags &= _SEEN
