# Race windows: from a reveal until the race is decided the unit does nothing but time presses.
#
# The window touches no flash (the game log holds its records until the race is decided: a flash write
# holds the ESP32's GPIO interrupts off for milliseconds), collects no garbage (one collection as it
# opens leaves the heap room for the window's few allocations), refreshes no display and polls no RFID
# (the unit pauses them). Capture inside it: "capture": "irq" sleeps 1 ms at a time and lets the soft
# IRQ handlers time the edges; "poll" runs the capture's register loop (hw.scan) and hands back to the
# IRQ path between its calls and when the window closes. docs/capture.md.
import gc

from micropython import const

POLL_US = const(2000)  # one register loop at most this long: service(), timers and the WDT in between


class RaceWindow:
    def __init__(self, hw, capture, unit=None):
        self.hw = hw
        self.capture = capture
        self.unit = unit  # the unit (maus.unit.core): its running GameLog (.log) holds records in the window
        scan = getattr(hw, "scan", None)
        self.poll = hw.board.get("capture") == "poll"
        if self.poll and scan is not None:
            capture.scan = scan
        self._window = getattr(hw, "window", None)
        self._collect = getattr(hw, "collect", None) or gc.collect  # the simulator times its pause
        self.is_open = False

    def open(self):
        if self.is_open:
            return
        self._collect()  # now, at the reveal (no reaction is that fast), never inside the window
        lg = self.unit.log if self.unit is not None else None
        if lg is not None:
            lg.hold()
        self.is_open = True
        if self._window is not None:
            self._window(True)

    def close(self):
        if not self.is_open:
            return
        self.is_open = False
        if self._window is not None:
            self._window(False)
        lg = self.unit.log if self.unit is not None else None
        if lg is not None:
            lg.release()

    def step(self):
        """The main loop's pass inside a window, after capture.service() and the timers."""
        hw = self.hw
        hw.wdt_feed()
        if self.poll and self.capture.poll(POLL_US) >= 0:
            return  # an edge or a full loop: service() next; with no button armed, sleep instead
        hw.idle(1)
