# The virtual unit's `machine` parts while no app's hardware layer runs: the REPL after a soft reset (mpremote,
# run-tests.py: main.py does not run), a unit with nothing on its flash, code typed before the app starts. On a board
# machine.Pin, SPI, I2C, ... exist from the first prompt whatever main.py does; here the emulated ones
# (maus.sim.machine, esp32) act on a wiring of the board file (/board.json, none: bare pins) in a LiveWorld, which
# runs in real time. The bridge (host/mausbox/sim/replserver.py) loads this module at the first use of a part, so the
# app's heap pays nothing for it; the app's own hardware layer (maus.sim.hw) makes its own world and takes the
# names over when it loads. UART(1)/UART(2) are maus.sim.vuart's, esp32 maus.sim.esp32's: each loaded when first used.
# Not deployed to real units (firmware/manifest.py).
import json
import time

import micropython
from micropython import const

from maus.sim.wiring import Wiring
from maus.sim.world import World

try:
    import _thread
except ImportError:  # a build without threads: timed actions run at the next call that reads the clock
    _thread = None

# machine's names that come from the emulated module (the bridge's vumachine.py keeps RTC, unique_id, the resets and
# UART(0), the console)
MACHINE = ("Pin", "Signal", "SPI", "SoftSPI", "I2C", "SoftI2C", "ADC", "PWM", "WDT", "Timer", "mem8", "mem16", "mem32",
           "freq", "idle", "lightsleep", "disable_irq", "enable_irq", "time_pulse_us", "bitstream")
_WDT_TICK_MS = const(100)  # the runner's watchdog check: a bite comes at most this late
_live = None  # the wiring, once made
_world = None  # its LiveWorld (UART's clock also where the app's wiring has the pins)


class LiveWorld(World):
    """maus.sim.world's World in real time: `now` is the host's µs since the world was made, a C call (a bus
    transfer) takes its time, a pin's IRQ handler goes to the interpreter's own scheduler (micropython.schedule:
    run at the next bytecode branch, as the ESP32's soft IRQs; a full queue drops it, as mp_sched_schedule in the
    port's GPIO ISR does), and timed actions (machine.Timer, esp32.RMT) come from a thread through it too."""

    def __init__(self):
        self._base = 0
        self._last = time.ticks_us()
        self._lock = _thread.allocate_lock() if _thread else None
        World.__init__(self, 0)
        self._runner = False
        self.wiring = None

    @property
    def now(self):
        # accumulated in steps: ticks_diff spans only 2**29 µs; two threads read it (the lock keeps each step once)
        lk = self._lock
        if lk:
            lk.acquire()
        t = time.ticks_us()
        self._base += time.ticks_diff(t, self._last)
        self._last = t
        n = self._base
        if lk:
            lk.release()
        return n

    @now.setter
    def now(self, v):
        self._base = v
        self._last = time.ticks_us()

    def _wait(self, end):
        # sleep to 2 ms before `end`, then spin: a write's flush ends within tens of µs of the line's time
        while True:
            rem = end - self.now
            if rem <= 0:
                return
            if rem > 3000:
                time.sleep((rem - 2000) / 1000000)  # (the GIL released: the timers' thread runs meanwhile)

    def spend(self, us):
        self._wait(self.now + us)

    def run(self, us):
        self._wait(self.now + us)

    def sleep_until(self, t_us):
        self._wait(t_us)
        return False

    def irq(self, handler, pin):
        try:
            micropython.schedule(handler, pin)
        except RuntimeError:  # the scheduler's queue is full
            self.dropped += 1

    def at(self, t_us, fn, arg=None):
        lk = self._lock
        if lk:
            lk.acquire()
        try:
            World.at(self, t_us, fn, arg)
        finally:
            if lk:
                lk.release()
        self.wake()

    def wake(self):
        if not self._runner and _thread:
            self._runner = True
            _thread.start_new_thread(self._run, ())

    def _act(self, item):
        item[2](item[3])

    def _run(self):
        # the chip's timers: each due action is handed to the scheduler; the watchdog bites here
        a = self._actions
        while True:
            w = self.wiring
            d = w.wdt if w is not None else None
            if not a and not (d is not None and d.ms):
                self._runner = False
                return
            now = self.now
            item = None
            self._lock.acquire()
            if a and a[0][0] <= now:
                item = a.pop(0)
            self._lock.release()
            if item is not None:
                try:
                    micropython.schedule(self._act, item)
                except RuntimeError:
                    self._lock.acquire()
                    a.insert(0, item)
                    self._lock.release()
                    time.sleep(0.001)
                continue
            if d is not None and d.ms and not d.keep and now - d.vfed > d.ms * 1000:
                d.bite(now - d.vfed)
                return
            nxt = a[0][0] - now if a else _WDT_TICK_MS * 1000
            # time.sleep: the unix port's releases the GIL while it waits (sleep_ms/sleep_us hold it: the REPL's
            # thread would wait with it, each exec took 0.4 s while a watchdog ran)
            time.sleep(min(nxt, _WDT_TICK_MS * 1000) / 1000000)


class _LiveWires(Wiring):
    def wdt_start(self, ms):
        Wiring.wdt_start(self, ms)
        self.world.wake()  # its thread checks the watchdog


def _board():
    try:
        with open("/board.json") as f:
            b = json.load(f)
        if isinstance(b.get("buttons"), list):
            return b
    except (OSError, ValueError, AttributeError):
        pass
    return {"buttons": []}


def _uid():
    import binascii

    try:
        import _vunit  # type: ignore[import-not-found]

        return binascii.unhexlify(_vunit.getenv("MAUSBOX_UNIT_ID") or "5e1d00000001")
    except (ImportError, ValueError):
        return b"\x5e\x1d\x00\x00\x00\x01"


def _bite(late_us):
    # the task watchdog's reset: the ROM's line, then a hard reset (the bridge starts a new interpreter)
    print("E task_wdt: Task watchdog got triggered: the unit resets (not fed for %d ms)" % (late_us // 1000))
    try:
        import _vunit  # type: ignore[import-not-found]

        _vunit.die()
    except ImportError:
        pass


def clock():
    """The live world (real time), made at the first call."""
    global _world
    if _world is None:
        _world = LiveWorld()
    return _world


def attach_default(attach):
    """The live wiring (made at the first call) with machine's parts attached to it (attach: maus.sim.machine's,
    from the caller: this module imports no machine, which loads it)."""
    global _live
    if _live is None:
        world = clock()
        w = _LiveWires(_board(), world, None, 0, _uid())
        w.wdt.bite = _bite  # type: ignore[attr-defined]
        world.wiring = w
        _live = w
        attach(w)
    return _live


def wiring(machine):
    """The wiring the parts of `machine` (maus.sim.machine) act on: the app's, once its hardware layer attached
    one; else the live one."""
    w = machine._w
    if w is None or type(w) is machine._Unwired:
        return attach_default(machine.attach)
    return w
