# Reaction capture: first-edge press times from pin interrupts, fair to every player.
#
# The IRQ handler only stores numbers: it reads the clock first, keeps the time of the first falling
# edge, snapshots every button's level and disarms its own pin, so a bouncing contact queues one
# scheduler entry, not twenty (the ESP32's queue holds 8 and silently drops the rest). Everything else
# runs in service(), called by the main loop: a press counts only if the pin is still low after the
# settle time (glitches are rejected, the first-edge time is kept); releases, re-arming after the
# debounce window and stuck buttons are handled there too. See docs/capture.md.
#
# Race windows (RaceWindow, below): from a reveal until the race is decided the unit does nothing but
# time presses. The window touches no flash (the game log holds its records until the race is decided:
# a flash write holds the ESP32's GPIO interrupts off for milliseconds), collects no garbage (one
# collection as it opens leaves the heap room for the window's few allocations), refreshes no display
# and polls no RFID (the unit pauses them). Capture inside it: "capture": "irq" sleeps 1 ms at a time
# and lets the soft IRQ handlers time the edges; "poll" runs the capture's register loop (hw.scan) and
# hands back to the IRQ path between its calls and when the window closes.
import gc
from array import array

from maus.ticks import ticks_add, ticks_diff
from micropython import const

_ARMED = const(0)  # waiting for a falling edge
_SETTLING = const(1)  # edge seen at _t[i]; confirm after settle time
_DOWN = const(2)  # confirmed press; watching for the release
_HOLDOFF = const(3)  # released; re-arm after the debounce window
_STUCK = const(4)  # low for too long or at boot: ignored until released

EV_PRESS = const(1)
EV_RELEASE = const(2)
EV_GLITCH = const(3)
EV_STUCK = const(4)
EV_UNSTUCK = const(5)

_POLL_US = const(2000)  # one register loop at most this long: service(), timers and the WDT in between


class Capture:
    # Timing knobs are attributes, like micropython-async's primitives; the runtime sets them from settings.
    settle_us = 3000
    debounce_us = 30000
    stuck_ms = 10000

    def __init__(self, pins, ticks_us, levels=None, emit=None):
        """pins: Pin-like objects, one per player (active low). ticks_us: the clock (read first in the
        handler). levels(): bitmask of buttons that are low now (bit k = player k+1) — one input-register
        read on the ESP32; None: maus.capture.poll reads each pin. emit(kind, index, t_us) receives events."""
        n = len(pins)
        self.n = n
        self._pins = pins
        self._ticks = ticks_us
        if levels is None:  # no register read on this board (not an ESP32): one read a pin
            from maus.capture.poll import pin_levels

            levels = pin_levels(pins)
        self._levels = levels
        self.emit = emit
        self._state = bytearray(n)  # each button's state, _ARMED (0) to begin with
        self._t = [0] * n  # first-edge time of the current press
        self._snap = bytearray(n)  # levels of all buttons when the edge was seen (a bitmask of <= 6 bits)
        self._since = [0] * n  # when the current hold-off began (after a release or a stuck button)
        self._hard = False
        self._seen_at = 0  # when service() last looked
        self._seen_low = 0  # and which buttons were down then (bit k = player k+1)
        self.pending = False  # set by the handler: service() has work
        self.irq_count = 0
        # The poll capture's register loop (hw.scan, RaceWindow sets it for "capture": "poll"), and
        # where it puts each button's µs since the call.
        self.scan = None
        self._dt = array("i", [0] * n)
        # One handler per pin, made once: the IRQ receives only the Pin object.
        self._handlers = []
        for i in range(n):
            self._handlers.append(self._make_handler(i))

    # --- interrupt context: no allocation, no floats ----------------------------------------------
    def _make_handler(self, i):
        # The capture and the index as default arguments (a function and a 2-tuple, no closure cells), the
        # whole edge in this one call, the clock read first.
        def handler(_pin, cap=self, i=i):
            t = cap._ticks()
            cap.irq_count += 1
            if cap._state[i] != _ARMED:
                return
            cap._t[i] = t
            cap._snap[i] = cap._levels()
            cap._state[i] = _SETTLING
            cap._pins[i].irq(handler=None)
            cap.pending = True

        return handler

    def poll(self, max_us):
        """`poll` capture for race windows: watch every armed button for up to max_us (or until one reads
        low), timing first edges by the loop, whatever the IRQ scheduler does. The loop is hw.scan (a viper
        loop reading the GPIO input and timer registers, a few µs a pass; the scheduler waits meanwhile);
        a board without one gets maus.capture.poll's Python loop instead of this method (RaceWindow sets it).
        Shares the IRQ path's state: the earliest evidence of an edge wins. Returns 1 on an edge, 0 when
        max_us passed, -1 with no button armed."""
        scan = self.scan
        state = self._state
        armed = 0
        for i in range(self.n):
            if state[i] == _ARMED:
                armed |= 1 << i
        if not armed:
            return -1
        dt = self._dt
        t0 = self._ticks()
        low = scan(armed, max_us, dt)
        if not low:
            return 0
        for i in range(self.n):
            if low >> i & 1:
                t = ticks_add(t0, dt[i])
                st = state[i]
                if st == _ARMED:
                    self._t[i] = t
                    self._snap[i] = low
                    state[i] = _SETTLING
                    self._pins[i].irq(handler=None)
                elif st == _SETTLING and ticks_diff(t, self._t[i]) < 0:
                    self._t[i] = t  # its handler ran first (right after the loop), with a later time
        self.pending = True
        return 1

    # --- main-loop context ----------------------------------------------------------------------------
    def _arm(self, i):
        pin = self._pins[i]
        trig = pin.IRQ_FALLING
        if not self._hard:
            pin.irq(handler=self._handlers[i], trigger=trig)
            return
        try:
            pin.irq(handler=self._handlers[i], trigger=trig, hard=True)
        except TypeError:  # the ESP32 port has only soft pin IRQs
            self._hard = False
            pin.irq(handler=self._handlers[i], trigger=trig)

    def start(self, hard=True):
        """Arm every button; a button already low is stuck until released."""
        self._hard = hard
        now = self._ticks()
        self._seen_at = now
        low = self._seen_low = self._levels()
        for i in range(self.n):
            if low & (1 << i):
                self._state[i] = _STUCK
                self._emit(EV_STUCK, i, now)
            else:
                self._state[i] = _ARMED
                self._arm(i)

    def stop(self):
        for p in self._pins:
            p.irq(handler=None)

    def _emit(self, kind, i, t):
        if self.emit is not None:
            self.emit(kind, i, t)

    def is_down(self, i):
        return self._state[i] == _DOWN

    def stuck(self):
        out = []
        for i in range(self.n):  # (a loop: a comprehension would be a function of its own in RAM)
            if self._state[i] == _STUCK:
                out.append(i)
        return out

    def service(self):
        """Advance every button's state machine; emits events. Cheap when nothing happens."""
        self.pending = False
        now = self._ticks()
        low = self._levels()
        # The loop could not look for longer than a debounce window (a flash erase, a display refresh):
        # an edge taken meanwhile whose handler saw the button low counts even if it is up again now, and so
        # does one the last look found still down, not yet settled (a click released during the blind stretch).
        seen = self._seen_at
        seen_low = self._seen_low
        blind = ticks_diff(now, seen) > self.debounce_us
        self._seen_at = now
        self._seen_low = low
        state = self._state
        first = self._t
        snap = self._snap
        n = self.n
        for i in range(n):
            st = state[i]
            is_low = low & (1 << i)
            if st == _ARMED:
                if is_low:
                    # An edge whose IRQ was lost (queue overflow): take the earliest evidence we have,
                    # another button's snapshot that already showed this one low, else now.
                    t = now
                    for k in range(n):
                        if state[k] != _ARMED and snap[k] & (1 << i) and ticks_diff(first[k], t) < 0:
                            t = first[k]
                    self._pins[i].irq(handler=None)
                    first[i] = t
                    snap[i] = low
                    state[i] = _SETTLING
                    st = _SETTLING
            if st == _SETTLING:
                # Low at a check after the settle time: a press, timed by its first edge, even if the
                # contact was still bouncing at the first check. High until the debounce window ends:
                # a glitch.
                age = ticks_diff(now, first[i])
                if age >= self.settle_us:
                    if is_low or (blind and snap[i] & (1 << i)
                                  and (ticks_diff(first[i], seen) > 0 or seen_low & (1 << i))):
                        state[i] = _DOWN
                        self._emit(EV_PRESS, i, first[i])
                    elif age >= self.debounce_us:
                        self._emit(EV_GLITCH, i, first[i])
                        state[i] = _ARMED
                        self._arm(i)
            elif st == _DOWN:
                held = ticks_diff(now, first[i])
                if not is_low and held >= self.debounce_us:
                    state[i] = _HOLDOFF
                    self._since[i] = now
                    self._emit(EV_RELEASE, i, now)
                elif is_low and held >= self.stuck_ms * 1000:
                    state[i] = _STUCK
                    self._emit(EV_STUCK, i, now)
            elif st == _HOLDOFF:
                if ticks_diff(now, self._since[i]) >= self.debounce_us:
                    state[i] = _ARMED
                    self._arm(i)
                    if self._levels() & (1 << i):
                        self.pending = True  # pressed again during the hold-off: next service() takes it
            elif st == _STUCK:
                if not is_low:
                    state[i] = _HOLDOFF
                    self._since[i] = now
                    self._emit(EV_UNSTUCK, i, now)

    def busy(self):
        """True while some button is between edge and decision (the loop must keep servicing)."""
        for i in range(self.n):
            st = self._state[i]
            if st == _SETTLING or st == _HOLDOFF:
                return True
        return False


class RaceWindow:
    def __init__(self, hw, capture, unit=None):
        self.hw = hw
        self.capture = capture
        self.unit = unit  # the unit (maus.unit.core): its running GameLog (.log) holds records in the window
        self.poll = hw.board.get("capture") == "poll"
        if self.poll:
            scan = getattr(hw, "scan", None)
            if scan is not None:
                capture.scan = scan
            else:  # no register loop on this board (not an ESP32): a Python loop, loaded only here
                from maus.capture.poll import install

                install(capture)
        self.is_open = False

    def open(self):
        if self.is_open:
            return
        # now, at the reveal (no reaction is that fast), never inside the window; the simulator times its pause
        getattr(self.hw, "collect", gc.collect)()
        lg = self.unit.log if self.unit is not None else None
        if lg is not None:
            lg.hold()
        self.is_open = True
        self.hw.window(True)

    def close(self):
        if not self.is_open:
            return
        self.is_open = False
        self.hw.window(False)
        lg = self.unit.log if self.unit is not None else None
        if lg is not None:
            lg.release()

    def step(self):
        """The main loop's pass inside a window, after capture.service() and the timers."""
        hw = self.hw
        hw.wdt_feed()
        if self.poll and self.capture.poll(_POLL_US) >= 0:
            return  # an edge or a full loop: service() next; with no button armed, sleep instead
        hw.idle(1)
