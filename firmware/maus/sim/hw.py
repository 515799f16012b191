# The virtual unit's hardware: the board's own layer (maus.hw.esp32 and esp32_setup, as deployed to a board)
# on the emulated `machine`, `esp32`, `neopixel` and `time` (maus.sim.machine, ...), which act on the simulated
# world wired to the board file's pins (maus.sim.wiring): buttons are pins whose IRQs go through the ESP32-like
# soft-IRQ queue of maus.sim.world, the RFID reader is the register-level MFRC522 emulator on the SPI bus, the
# OLED an SSD1306 controller on the I2C bus, the piezo an ADC fed with generated waveforms. Only the register
# loops (viper code reading ESP32 addresses: hw.levels, hw.scan) get the world's stand-in.
# Over 600 lines on purpose: the one adapter between the board's layer and the emulated world (pins, buses,
# console, flash, clocks, watchdog); never deployed to a board.
#
# This module is the world's side: the clock (virtual, or real time for interactive play), inputs from a
# scenario file (virtual time; MAUSBOX_SIM_SCENARIO) or a control FIFO (real time; MAUSBOX_SIM_CTL), peripheral
# state (LEDs, display, sounds) as JSON lines to MAUSBOX_SIM_OUT, the watchdog's model, and the sim-only hooks
# the firmware calls where a board has nothing to do (spend, collect, window, flash_file, finished_and_idle).
import binascii
import gc
import json
import os
import sys
import time

from micropython import const

from maus.sim import emulate as _emulate
from maus.sim import wiring as _wiring
from maus.sim.world import Esp32Timing, FlashFile, World

try:
    import _vunit  # type: ignore[import-not-found]  # the virtual unit's link to its host (replserver.py)
except ImportError:
    _vunit = None

# machine's names the emulated module brings to the virtual unit's own (host/mausbox/sim/vumachine.py keeps its
# RTC, UART, unique_id and resets), and time's that run on the world's clock
_MACHINE = ("Pin", "Signal", "SPI", "SoftSPI", "I2C", "SoftI2C", "ADC", "PWM", "WDT", "Timer", "mem8", "mem16",
            "mem32", "freq", "idle", "lightsleep", "disable_irq", "enable_irq", "time_pulse_us", "bitstream")
_TIME = ("ticks_us", "ticks_ms", "ticks_cpu", "sleep", "sleep_ms", "sleep_us")


def _install():
    if _vunit is None:  # a process of its own (scenario, terminal sim, tests): the emulated modules take the names
        _emulate.install_modules()
        return
    # The virtual unit on its pty (replserver.py): `machine`, `time` and `micropython` are the board's modules
    # it made; the emulated parts go into them.
    from maus.sim import emicropython, esp32, etime, machine

    bm = sys.modules["machine"].__dict__
    for k in _MACHINE:
        bm[k] = getattr(machine, k)
    bt = sys.modules["time"].__dict__
    if getattr(_vunit, "hostclock", None) is None:  # the host's clock, before the world's takes time's names

        class HostClock:
            ticks_ms = bt["ticks_ms"]
            ticks_us = bt["ticks_us"]
            ticks_diff = bt["ticks_diff"]
            ticks_add = bt["ticks_add"]
            sleep_ms = bt["sleep_ms"]
            sleep_us = bt["sleep_us"]

        _vunit.hostclock = HostClock  # type: ignore[attr-defined]
    etime._clock = _vunit.hostclock  # type: ignore[attr-defined]
    for k in _TIME:
        bt[k] = getattr(etime, k)
    mp = sys.modules["micropython"].__dict__
    if "alloc_emergency_exception_buf" not in mp:
        mp["alloc_emergency_exception_buf"] = emicropython.alloc_emergency_exception_buf
    sys.modules["esp32"] = esp32
    from maus.sim import neopixel  # its `from machine import bitstream`: the board's machine, filled in above

    sys.modules["neopixel"] = neopixel


_install()
# the host's clock for real time and the watchdog's thread (time's names are the world's clock from here on)
time = _vunit.hostclock if _vunit else getattr(sys.modules["time"], "_rt", time)  # noqa: F811
from maus.hw import esp32 as _esp32  # noqa: E402 - the board's own layer, on the modules just installed

# Interned names (qstrs) live in pools that double as they fill, the same on the unix port as on an ESP32
# image (20, 40, ... 640, 1280 entries). The firmware's own names in a game after a boot (about 1,240) stay below
# 1,260, so a board adds the 1,280-entry pool only once a unit has played a second game since its boot
# (host/mausbox/heapbudget.py LONG_LIVED_QSTR_TABLES, held by a season's runs); in the virtual unit the
# simulator's names come on top and a first game would need that pool, a 9 KB block, in a heap already cut up.
# So the virtual unit (maus.hw.open_hardware) allocates it at power-on, while the heap is whole: throwaway names
# fill the pool in use until the next one is made with room for the firmware's names (FW_QSTRS). Its cost is part
# of the simulator's share (host/mausbox/heapbudget.py, "unit"). (maus.sim.world.qstr_room makes it.)
FW_QSTRS = const(1200)
_EPOCH_2000 = const(946684800)  # 2000-01-01 in the host's epoch (1970): the ESP32's clock counts from 2000


def _open(path, mode="r"):
    # The simulator's own files (ROOT/.sim, .rtcmem, .wdt, clock.json): the virtual unit hides them from its os
    return _vunit.open(path, mode) if _vunit else open(path, mode)


def _remove(path):
    if _vunit:
        _vunit.remove(path)
    else:
        os.remove(path)


def _env(name):
    try:
        return _vunit.getenv(name) if _vunit else os.getenv(name)
    except Exception:
        return None


def _host_ms():
    # The host's clock in ms since 1970: on the virtual unit time.time() is the RTC's (epoch 2000, moved by a
    # `clock set`), which a watchdog's timer does not follow.
    return _vunit.host_ms() if _vunit else time.time() * 1000


# A stall of the host process (a busy machine) is no time a board's main loop stands still. When one lets timed edges
# fall due (a click's press and its release 80 ms later), the clock passes on what is owed _STEP_US per call of the
# firmware's (spend, a sleep), each edge at its own time: a board's loop runs every few ms between a click's
# press and release, and its settle check looks at the button then. Passed on whole, the firmware's first look
# after the stall found the button released, and judged the press a glitch (a click lost, CI runs 94, 98 and 103).
_STALL_US = const(5000)  # a step of the host clock longer than this, with an edge in it, is a stall
_STEP_US = const(2000)  # what of a stall the clock passes on at a time while edges are due in it (a loop pass)


class RealWorld(World):
    """Real time for interactive play: now follows the host clock; inputs arrive from a FIFO."""

    _held = False  # catching up: the clock stands at each past edge's time (one world a process: no slot)

    def __init__(self, ctl):
        super().__init__(0, rebase=True)
        self._last = time.ticks_us()
        self._lag = 0  # µs of a stall of the host's not yet passed on (a timed edge due in it)
        self.ctl = ctl  # ctl(wait_ms): poll the control channel up to wait_ms, apply inputs

    def _sync(self):
        # Accumulate the host clock's steps: a 32-bit port's ticks wrap every 2**30 us (18 min) and
        # ticks_diff only spans half of that, so a difference from the start would go wrong after 9 min.
        if RealWorld._held:
            return
        t = time.ticks_us()
        d = time.ticks_diff(t, self._last)
        self._last = t
        a = self._actions
        if d > _STALL_US and a and a[0][0] <= self.now + d:  # a stall with an edge in it: passed on in steps
            self._lag += d - _STEP_US
            d = _STEP_US
        self.now += d

    def _catch_up(self):
        # A gesture's timed edges (a control line's "hold"/"double": press, release 80 ms later, ...) due by the
        # host's clock now. After a stall of the host process longer than their gaps, each still happens at its
        # own time, its IRQ handler run then, as the board's soft IRQs would have run it (taken together at the
        # host's time, a click's press and release got one timestamp and the debounce dropped the click), and
        # the clock passes on the stall _STEP_US a call while edges are due in it (_STALL_US says why).
        a = self._actions
        ran = self.irqs_run
        RealWorld._held = True
        try:
            if self.qlen:  # edges already made (a click's press, applied as its control line came) go first, at
                self.run_irqs()  # the clock they were made at, before it moves to the next edge's time
        finally:
            RealWorld._held = False
        self._sync()
        step = self._lag if self._lag < _STEP_US else _STEP_US
        self._lag -= step
        end = self.now + step
        RealWorld._held = True
        try:
            while a and a[0][0] <= end:
                at, _, fn, arg = a.pop(0)
                if at > self.now:
                    self.now = at
                fn(arg)
                if self.qlen:
                    self.run_irqs()
        finally:
            RealWorld._held = False
        if end > self.now:
            self.now = end
        if self._lag and not (a and a[0][0] <= self.now + self._lag):
            self.now += self._lag  # no edge left in what is owed: the clock is the host's again
            self._lag = 0
        return self.irqs_run != ran  # a handler ran: it would wake the loop

    def ticks_us(self):
        self._sync()
        return World.ticks_us(self)

    def ticks_ms(self):
        self._sync()
        return World.ticks_ms(self)

    def spend(self, us):
        self.ctl(0)
        if self._actions:
            self._catch_up()
        self.run_irqs()
        self._check_rebase()  # as a call returns, never inside one (its caller's times stay right)

    def run(self, us):
        if us >= 1000:  # bytecode that waits (maus.hw.esp32 idle between its looks at the console): the host's
            self.sleep_until(self.now + us)  # clock passes by itself, so sleep it rather than burn the host's CPU
        else:
            self.spend(us)

    def sleep_until(self, t_us):
        self._sync()
        while self.now < t_us:
            until = t_us
            if self._actions:
                until = min(until, self._actions[0][0])
            rem = until - self.now
            if self._lag:  # behind the host's clock (a stall): no waiting on it
                self.ctl(0)
            elif rem >= 1000:
                self.ctl(min(rem // 1000, 20))
            else:  # the control channel polls in whole ms: a shorter rest is slept, not spun (a 1 ms idle was)
                self.ctl(0)
                if rem > 0:
                    time.sleep_us(rem)
            woke = self._catch_up() if self._actions else self._sync()
            if self.qlen:
                self.run_irqs()
                woke = True
            if woke:
                self._check_rebase()
                return True
        self._check_rebase()
        return False


def timing_model(name=None, seed=0):
    """The virtual unit's timing: the ESP32 model (default) or "ideal" (MAUSBOX_SIM_TIMING=ideal)."""
    name = name or _env("MAUSBOX_SIM_TIMING") or "esp32"
    if name == "ideal":
        return None
    if name != "esp32":
        raise ValueError("MAUSBOX_SIM_TIMING: esp32 or ideal, not %r" % (name,))
    return Esp32Timing(seed + 1)


class Out:
    """Peripheral state for the terminal UI (one JSON object a line), or nowhere."""

    def __init__(self, path):
        self.f = _open(path, "w") if path else None

    def send(self, obj):
        if self.f is not None:
            try:
                # One write per message: the unix port's files are unbuffered, and flush() would
                # fsync(), which a FIFO refuses.
                self.f.write(json.dumps(obj) + "\n")
            except OSError:
                self.f = None  # the UI went away: keep refereeing

    def send_frame(self, buf):
        # {"oled": "<hex>"} written 64 bytes of frame at a time: a board sends its frame over I2C without
        # copying it, so the sim must not need one 2 KB block for the text (in a fragmented heap the
        # firmware would get the MemoryError the board never has). The UI reads whole lines. (The SSD1306
        # model hands over its RAM once the window is full, however many transfers filled it.)
        if self.f is None:
            return
        mv = memoryview(buf)
        try:
            self.f.write('{"oled": "')
            for i in range(0, len(mv), 64):
                self.f.write(_hex(mv[i:i + 64]))
            self.f.write('"}\n')
        except OSError:
            self.f = None


def _hex(b):
    return binascii.hexlify(b).decode()


class _NoChip:
    """The no-reader fault: nothing answers on the SPI bus, MISO floats (reads 0x00)."""

    def set_spi_hz(self, hz):
        pass

    def write(self, buf):
        pass

    def write_readinto(self, out, into):
        for i in range(len(into)):
            into[i] = 0

    def readinto(self, buf, write=0):
        for i in range(len(buf)):
            buf[i] = 0


class _Wires(_wiring.Wiring):
    """The world wired to the board's pins, with the virtual unit's RTC memory (ROOT/.rtcmem, kept across the
    interpreter's restarts) and its watchdog model (_wdt: real time too)."""

    def __init__(self, board, world, out, seed, uid, realtime):
        _wiring.Wiring.__init__(self, board, world, out=out, seed=seed, uid=uid)
        self.realtime = realtime

    def rtc_get(self):
        try:
            with _open(".rtcmem", "rb") as f:
                return f.read()
        except OSError:
            return b""

    def rtc_set(self, data):
        with _open(".rtcmem", "wb") as f:
            f.write(data)

    def wdt_start(self, ms):
        self.wdt = _wdt  # the process's watchdog (a soft reset in real time carries it on: _Watchdog)
        _wdt.start(ms, self.world, self.realtime)


class _RealWires(_Wires):
    """In real time (the world a RealWorld): time.sleep_us/sleep_ms let the host's clock pass."""

    def sleep_us(self, us):
        # the world's IRQs run meanwhile; counted from the call (`now` moves only as the host clock is read)
        w = self.world
        w.ticks_us()
        w.sleep_until(w.now + us)
        if self.reader is not None:
            self.reader.sleep_us(us)
        if self.wdt.ms:
            self.wdt_check()


def _unit_id():
    # Each virtual unit has its own (MAUSBOX_UNIT_ID, hex, set by the host; machine.unique_id() reads it).
    try:
        return binascii.unhexlify(_env("MAUSBOX_UNIT_ID") or "5e1d00000001")
    except ValueError:
        return b"\x5e\x1d\x00\x00\x00\x01"


def _stuck_high(t):
    return 65535


class Hardware(_esp32.Hardware):
    _echo = False  # each control line and button edge said on the console (_open_ctl: MAUSBOX_SIM_ECHO_CTL)
    _dropped = 0  # the world's dropped soft IRQs already said (_poll_ctl)
    tx_fifo = 0  # the virtual unit's console (a pty, or the process's stdout) never waits; a scenario's line does

    def __init__(self, board, world=None, scenario=None, seed=0, out=None, **kw):
        # Collections while the parts are made: the garbage of each step goes before the next one allocates, so
        # the simulator's objects lie packed and leave fewer holes among the firmware's (the heap is the board's
        # plus the simulator's share: heapbudget.SIM_SHARE "unit")
        gc.collect()
        ctl_path = _env("MAUSBOX_SIM_CTL")
        self._ctl_f = None
        if world is None:
            if ctl_path:
                world = RealWorld(self._poll_ctl)
                self._open_ctl(ctl_path)
            else:
                world = World(0, model=timing_model(kw.get("timing"), seed), rebase=True)
        self.world = world
        world.on_rebase.append(self._rebased)
        self.realtime = isinstance(world, RealWorld)
        self._live = -1  # heap in use at the last look (a drop: a garbage collection ran)
        self._win_a0 = 0  # heap in use as the race window opened
        self.window_alloc = 0  # the most a window allocated (bytes)
        self.out = Out(out if out is not None else _env("MAUSBOX_SIM_OUT"))
        parts = board.get("parts", {})
        # A unit built wrong (the bring-up check's test): faults at the pin and bus level, from the board
        # file's "sim_faults" or MAUSBOX_SIM_FAULTS (comma separated). no-reader: nothing on the SPI bus
        # (MISO floats low); swap-buttons: players 1 and 2 wired to each other's GPIO; no-display: the
        # SSD1306 does not acknowledge on I2C; piezo-high: the piezo's input stuck at 3.3 V.
        faults = list(board.get("sim_faults") or ()) + [f for f in (_env("MAUSBOX_SIM_FAULTS") or "").split(",") if f]
        self.faults = faults
        wi = self.wiring = (_RealWires if self.realtime else _Wires)(board, world, self.out, seed, _unit_id(), self.realtime)
        self._wires = list(range(len(wi.buttons)))  # player k's button drives GPIO of buttons[_wires[k]]
        if "swap-buttons" in faults and len(self._wires) >= 2:
            self._wires[0], self._wires[1] = 1, 0
        if "rfid" in parts and "no-reader" in faults:
            r = parts["rfid"]
            wi.spi_devs[r["sck"]] = (_NoChip(), r["cs"])
            wi.node(r["rst"]).listeners = []  # wired to nothing
            wi.reader = None
        if "oled" in parts and "no-display" in faults:
            wi.i2c_devs[parts["oled"]["sda"]] = {}
        if "piezo" in parts and "piezo-high" in faults and parts["piezo"].get("mode") != "digital":
            wi.adc_src[parts["piezo"]["pin"]] = _stuck_high
        _emulate.attach(wi)
        gc.collect()
        # The board's own layer makes the parts (maus.hw.esp32_setup: Pin, I2C and the SSD1306 driver, SPI,
        # ADC, PWM, NeoPixel) on the emulated modules, as for an ESP32 board (the register loops too, as a board
        # makes them), and the register loops get the world's stand-in.
        b = dict(board)
        b["family"] = "esp32"
        _esp32.Hardware.__init__(self, b)
        self.board = board
        wi.standin(self)
        self.ticks_us = world.ticks_us  # what time.ticks_us reads (maus.sim.etime), without the call through it
        self.ticks_ms = world.ticks_ms
        if not _vunit:
            self._load_clock()
        self.reader = wi.reader  # the emulated MFRC522 (the tags are put on its field)
        self.piezo = wi.piezo
        self._tags = {}  # identity -> tag model on the pad
        self._free = {}  # player -> when the last timed gesture's release is over (a finger lifts first)
        self._scen = None
        self.scenario_end_us = -1
        self.uart = None  # maus.sim.uart's line, once a scenario's host sends (console())
        if scenario:
            self.load_scenario(scenario)
        else:
            path = _env("MAUSBOX_SIM_SCENARIO")
            if path:
                self.load_scenario(path)
        gc.collect()

    # --- time --------------------------------------------------------------------------------------
    def spend(self, us):
        """The firmware's own bytecode for `us` µs (a main-loop pass): handlers run at its branches."""
        if self.world.window:
            self._gc_check()
        self.world.run(us)
        if _wdt.world is self.world:
            _wdt.check()

    def collect(self):
        """gc.collect() for the firmware (maus.unit's idle collection, RaceWindow's at a window's start):
        the world charges the board's pause for it (Esp32Timing.gc_pause_us)."""
        gc.collect()
        self.world.collected()
        if self.world.window:
            # Only the heap watch in a race window reads them (window() looks afresh as one opens), and
            # mem_alloc walks the whole heap's table: ~1,300 idle collections in a 10-minute game.
            self._live = self._win_a0 = gc.mem_alloc() if hasattr(gc, "mem_alloc") else 0

    def _gc_check(self):
        # Inside a race window, each main-loop pass: a drop of the heap in use by 4 KB or more is a
        # collection that ran there (explicit frees of list growth are smaller), and growth past the room
        # the board has left at a reveal (Esp32Timing.window_room_kb) is the collection the board would
        # run. Either is counted and charged; scenario tests fail on its console line.
        w = self.world
        if not w.window:
            return
        try:
            live = gc.mem_alloc()
        except AttributeError:  # CPython
            return
        if 0 <= live < self._live - 4096:
            print("SIM heap dropped from %d to %d bytes" % (self._live, live))
            w.collected()
            self._win_a0 = live
        elif w.model is not None:
            grown = live - self._win_a0
            if grown > self.window_alloc:
                self.window_alloc = grown
            if grown > w.model.window_room_kb * 1024:
                print("SIM a race window allocated %d bytes" % grown)
                w.collected()
                self._win_a0 = live
        self._live = live

    def _rebased(self, shift):
        if self.scenario_end_us >= 0:
            self.scenario_end_us -= shift
        # the timed gestures' ends too: left in the old clock, a hold after ~9 minutes of play started that much
        # later and was taken for a click (a season of games went off its script at its 7th game)
        for p in self._free:
            self._free[p] -= shift

    def window(self, is_open):
        """maus.capture.irq.RaceWindow: a race window opens or closes (the simulator counts flash writes and GCs in it)."""
        self._gc_check()
        self.world.window = is_open
        if is_open:
            try:
                self._live = self._win_a0 = gc.mem_alloc()
            except AttributeError:
                pass

    # --- the flash -------------------------------------------------------------------------------------
    def flash_file(self, f):
        """A log file on the simulated flash: each flush is a littlefs sync the world times and counts."""
        return FlashFile(f, self.world)

    def finished(self):
        """Scenario mode: every action applied."""
        w = self.world
        return self.scenario_end_us >= 0 and self._scen is None and w.pending_actions() == w.timer_events

    def finished_and_idle(self, unit):
        """Scenario mode: stop once every action is applied and the unit has nothing left to time
        (claim windows, end screens), or 60 virtual seconds after the last action at the latest."""
        if not self.finished():
            return False
        if unit.timers or unit.capture.busy() or unit.race:
            return self.world.now > self.scenario_end_us + 60000000
        return True

    # --- the outside world ----------------------------------------------------------------------------
    def _player_pin(self, p):
        if type(p) is not int or not 1 <= p <= len(self.buttons):
            raise ValueError("no player %r on this board" % (p,))
        return self.buttons[p - 1]

    def press(self, p):
        self._player_pin(p)
        if self._echo:
            print("SIM press %d t=%d" % (p, self.world.now // 1000))
        self.wiring.buttons[self._wires[p - 1]].set_level(0)  # the wire from player p's button to its GPIO

    def release(self, p):
        self._player_pin(p)
        if self._echo:
            print("SIM release %d t=%d" % (p, self.world.now // 1000))
        self.wiring.buttons[self._wires[p - 1]].set_level(1)

    def tap(self, ident, text=None):
        # text: what the card holds (maus.sim.rf_field.card_text), if the host has worked it out (a scenario's
        # "card" field): then a tap loads no firmware module in the middle of a game
        if ident in self._tags or self.reader is None:
            return  # (no reader: a card on the pad is heard by nobody)
        tag = self.reader.make_tag(ident, 213, text)
        self._tags[ident] = tag
        self.reader.put(tag)

    def remove(self, ident):
        tag = self._tags.pop(ident, None)
        if tag is not None:
            self.reader.take(tag)

    def rfid(self, what):
        # The reader chip itself: "reset" = it resets itself (a brown-out) and says nothing about it.
        if what != "reset" or self.reader is None:
            raise ValueError("rfid: only \"reset\", on a board with a reader")
        self.reader.chip_reset()
        print("SIM rfid reset")

    def knock(self, amp_ms):
        amp, ms = amp_ms
        if self.piezo is not None:
            self.piezo.knock(self.world.ticks_us(), amp, ms)

    def noise(self, level):
        if self.piezo is not None:
            self.piezo.noise(level)

    def apply(self, act):
        """One scenario/control action (a dict), applied now."""
        if "press" in act:
            self.press(act["press"])
        elif "release" in act:
            self.release(act["release"])
        elif "hold" in act or "double" in act:
            # timed by the unit's clock; one on a button still held by the last one starts once that one let go
            # (a click typed while a long press is held would otherwise be swallowed by it)
            p = act["hold"] if "hold" in act else act["double"]
            w = self.world
            t = max(w.now, self._free.get(p, 0))
            if t == w.now:
                self.press(p)
            else:
                w.at(t, self.press, p)
            if "hold" in act:
                end = t + act.get("ms", 1000) * 1000
            else:  # two 80 ms clicks 200 ms apart
                w.at(t + 80000, self.release, p)
                w.at(t + 200000, self.press, p)
                end = t + 280000
            w.at(end, self.release, p)
            self._free[p] = end + 50000
        elif "tap" in act:
            self.tap(act["tap"], act.get("card"))
        elif "remove" in act:
            self.remove(act["remove"])
        elif "knock" in act:
            self.knock((act["knock"], act.get("ms", 30)))
        elif "noise" in act:
            self.noise(act["noise"])
        elif "rfid" in act:
            self.rfid(act["rfid"])
        elif "host" in act:
            self._uart().request(act["host"])

    # --- the console UART (scenario mode: a host on the line, maus.sim.uart) --------------------------------
    def console(self):
        """HostWake's (inp, out, ready): in scenario mode the simulated line, made when a host first sends
        (a scenario without one costs nothing); otherwise () and the unit reads its process's stdin."""
        if self.scenario_end_us < 0:
            return ()
        return (self, self, self.console_ready)

    def _uart(self):
        if self.uart is None:
            from maus.sim.uart import Uart

            self.uart = Uart(self.world)
            self.tx_fifo = 128  # (as load_scenario: a test's line made directly)
        return self.uart

    def console_ready(self):
        return self.uart is not None and self.uart.ready()

    def readinto(self, b):
        return self.uart.readinto(b) if self.uart is not None else None

    def write(self, b):
        return self._uart().write(b)

    def load_scenario(self, path):
        # Streamed: only the next action is in memory (the host has checked and sorted the file), so a
        # long scenario costs the firmware's heap nothing.
        self.tx_fifo = 128  # the console is maus.sim.uart's line, whose writes wait for its FIFO as a board's
        self._scen = _open(path)
        self.scenario_end_us = 0
        self._next_scenario()

    def _next_scenario(self):
        while self._scen is not None:
            line = self._scen.readline()
            if not line:
                self._scen.close()
                self._scen = None
                return
            line = line.strip()
            if not line or line[0] == "#":
                continue
            act = json.loads(line)
            t = act["at_ms"] * 1000 - self.world.shifted  # scenario time -> the rebased clock
            if t > self.scenario_end_us:
                self.scenario_end_us = t
            self.world.at(t, self._scenario_step, act)
            return

    def _scenario_step(self, act):
        # In a race window the heap watch (_gc_check) charges the firmware with what the heap grows by: what
        # this step allocates (a host's request framed on the line, the next line parsed, a card's tag) is
        # the simulator's, whose bytes a board keeps in no heap, and comes off that count.
        a0 = gc.mem_alloc() if self.world.window and hasattr(gc, "mem_alloc") else -1
        try:
            self.apply(act)
        finally:
            # The next action is queued even when this one failed (the simulator itself out of memory in a
            # heap search: the exception reaches the firmware, which may go on): a stalled scenario would
            # never finish, and its virtual time would run on for ever.
            self._next_scenario()
            if a0 >= 0:
                d = gc.mem_alloc() - a0
                self._win_a0 += d
                self._live += d

    def _open_ctl(self, path):
        # MAUSBOX_SIM_ECHO_CTL=1: each control line and button edge said on the console, with the unit's time
        # (the terminal tests set it: a lost key then shows where it was lost)
        self._echo = bool(_env("MAUSBOX_SIM_ECHO_CTL"))
        self._ctl_f = _open(path, "r")
        import select

        self._poller = select.poll()
        self._poller.register(self._ctl_f, select.POLLIN)

    def _poll_ctl(self, wait_ms):
        w = self.world
        if w.dropped != self._dropped:  # a board loses these edges too: said, so a lost press is not a mystery
            print("SIM soft IRQ queue full: %d edge(s) dropped" % (w.dropped - self._dropped))
            self._dropped = w.dropped
        if self._ctl_f is None:
            time.sleep_ms(wait_ms)
            return
        if not self._poller.poll(wait_ms):
            return
        line = self._ctl_f.readline()
        if not line:  # no writer left (the UI is gone): a hung-up FIFO would poll ready forever
            self._ctl_f.close()
            self._ctl_f = None
            return
        if line:
            if self._echo:
                print("SIM ctl t=%d %s" % (self.world.now // 1000, line.strip()))
            try:
                self.apply(json.loads(line))
            except (ValueError, KeyError, TypeError, IndexError, AttributeError):
                print("SIM ignored a bad control line:", line.strip()[:80])

    # --- unit services (the board's, maus.hw.esp32, on the emulated machine) ---------------------------------
    def wdt_release(self):
        _esp32.Hardware.wdt_release(self)
        _wdt.keep = True  # the model's keeper (the thread in real time) feeds it from now on

    def set_clock(self, rtc):
        _esp32.Hardware.set_clock(self, rtc)
        if not _vunit:
            # kept in clock.json as an offset from this computer's clock, so a restart keeps the time as a board's
            # RTC does (the served unit's RTC keeps the same file: host/mausbox/sim/vumachine.py)
            y, mo, d, _, h, mi, s, _ = rtc
            off = time.mktime((y, mo, d, h, mi, s, 0, 0)) - time.time()
            with open("clock.json.tmp", "w") as f:
                f.write(json.dumps({"offset_s": off}))
            os.rename("clock.json.tmp", "clock.json")

    def _load_clock(self):
        try:
            with open("clock.json") as f:
                off = int(json.load(f)["offset_s"])
        except (OSError, ValueError, KeyError, TypeError):
            return
        w = self.world
        self.wiring.clock_offset = int(time.time()) + off - _EPOCH_2000 - (w.now + w.shifted) // 1000000

    def wall_clock(self):
        if _vunit:  # the virtual unit's RTC runs on the host's clock (vutime.py): set only once clock.json is there
            try:
                _vunit.stat("/clock.json")
            except OSError:
                return None
        return _esp32.Hardware.wall_clock(self)


# --- the watchdog --------------------------------------------------------------------------------------
# machine.WDT as the ESP32 port has it: once started it runs until a hard reset. Nothing stops it, a second
# start never makes it slower (the shorter timeout stays; docs: "cannot be stopped or reconfigured"), and a
# soft reset leaves it running (ports/esp32/machine_wdt.c: the task-WDT user stays subscribed; main.c's
# soft reset does not touch it). Not fed within its timeout it resets the unit, whatever the firmware does.
#
# In virtual time it is checked as time passes (spend/idle). In real time (the virtual unit on a pty) a
# thread plays the chip's timer interrupt, so a main loop stuck in Python or in a blocking call is reset as a
# board is: the interpreter process is killed, and the virtual unit's bridge restarts it (a hard reset). The
# thread is also where the firmware's keeper runs (hw.esp32 uses a machine.Timer, whose callbacks the
# board's scheduler runs at the REPL too): with `keep` set (no app runs) it feeds. Its state (timeout, last
# feed) lives in ROOT/.wdt, so the interpreter after a soft reset carries the same watchdog on.
_WDT_FILE = ".wdt"


def _wdt_file():
    # The unit's own flash, never `mpremote mount`'s folder (/remote, mpremote's mount point): that one is the
    # host's, reached over the serial link the main thread is using, and the watchdog thread's writes there
    # would break the mount's protocol. Under the virtual unit's jail "/" is the unit's folder; the other
    # runners start in it and never mount.
    try:
        remote = os.getcwd().startswith("/remote")
    except OSError:
        remote = False
    return "/" + _WDT_FILE if remote else _WDT_FILE
_WDT_TICK_MS = const(100)  # the thread's check interval: a bite comes at most this late
_WDT_SAVE_MS = const(1000)  # how often the last feed is written to .wdt (a soft reset may lose up to this)


WatchdogReset = _wiring.WatchdogReset


class _Watchdog(_wiring.Watchdog):
    """The emulated machine.WDT's model (maus.sim.wiring.Watchdog, checked in virtual time) with real time: a thread
    plays the chip's timer, and its state lives in .wdt through soft resets."""

    def __init__(self):
        _wiring.Watchdog.__init__(self)
        self.fed = time.ticks_ms()  # of the last feed, real time
        self.thread = False
        self.max_gap = 0  # real time: the longest the watchdog went unfed (ms), carried through soft resets in .wdt

    def start(self, ms, world=None, realtime=True):
        if not self.ms:
            self.fed = time.ticks_ms()  # not running until now: no gap before this
        _wiring.Watchdog.start(self, ms, world)
        self.feed()
        if realtime:
            self._save()
            self._run_thread()

    def feed(self):
        now = time.ticks_ms()
        gap = time.ticks_diff(now, self.fed)
        if gap > self.max_gap and self.ms:
            self.max_gap = gap
        self.fed = now
        _wiring.Watchdog.feed(self)

    def _run_thread(self):
        if not self.thread:
            import _thread

            self.thread = True
            _thread.start_new_thread(self._loop, ())

    def _loop(self):
        saved = time.ticks_ms()
        while self.ms:
            time.sleep_ms(_WDT_TICK_MS)
            now = time.ticks_ms()
            if self.keep:
                self.feed()  # the keeper's timer callback
            late = time.ticks_diff(now, self.fed)
            if late > self.ms:
                self._bite(late)
                # The reset line: the interpreter dies at once, wherever it is (its parent, the bridge,
                # starts a fresh one). The unix port has no os.kill; the shell's parent is this process.
                if _vunit:
                    _vunit.die()
                else:
                    os.system("kill -9 $PPID")
                return
            if time.ticks_diff(now, saved) >= _WDT_SAVE_MS:
                saved = now
                self._save()

    def _bite(self, late_ms):
        _wiring.Watchdog._bite(self, late_ms)
        try:
            _remove(_wdt_file())
        except OSError:
            pass

    def _save(self):
        # The wall time of the last feed: the next interpreter (after a soft reset) goes on from there.
        try:
            with _open(_wdt_file(), "w") as f:
                # whole ms since 1970 (an int: a single-precision float resolves today's time to 128 s)
                f.write(json.dumps({"ms": self.ms, "fed_ms": _host_ms() - time.ticks_diff(time.ticks_ms(),
                                                                                                   self.fed),
                                    "max_gap_ms": max(self.max_gap, time.ticks_diff(time.ticks_ms(), self.fed))}))
        except OSError:
            pass

    def resume(self):
        # boot.py after a soft reset: a watchdog started before goes on running, fed by the keeper.
        try:
            with _open(_wdt_file()) as f:
                st = json.load(f)
            ms = int(st["ms"])
            age = _host_ms() - int(st["fed_ms"])
            self.max_gap = max(self.max_gap, int(st.get("max_gap_ms", 0)))
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if ms <= 0 or age >= ms:
            try:
                _remove(_wdt_file())  # it would have bitten meanwhile (the unit was off): not running
            except OSError:
                pass
            return False
        self.ms = ms if not self.ms else min(ms, self.ms)
        self.keep = True
        self.fed = time.ticks_add(time.ticks_ms(), -max(age, 0))
        self._run_thread()
        return True


_wdt = _Watchdog()


def keep_watchdog():
    return _wdt.resume()


def boot_watchdog(ms):
    """main.py's watchdog, started as the boot begins: in real time (the virtual unit on its pty, as a board's
    machine.WDT). A scenario in virtual time gets the app's (Hardware.wdt_start) and stays deterministic."""
    if _env("MAUSBOX_SIM_CTL"):
        _wdt.start(ms, None, True)



def open_hardware(board, **kw):
    """The virtual unit's Hardware, for maus.hw.open_hardware (a board file whose family is "sim")."""
    from maus.sim.world import qstr_room

    hw = Hardware(board, **kw)
    qstr_room(FW_QSTRS)  # the virtual unit: the firmware's names get a pool made now
    return hw
