# The simulated world wired to a board's pins and buses: what the emulated `machine` (maus.sim.machine),
# `esp32`, `neopixel` and `time` (maus.sim.etime) act on, so maus.hw.esp32 and its setup run unchanged
# against the world. A board file says which part sits on which GPIO; the wiring puts the world's part
# there: buttons (a finger pulls the node low) on their pins, the MFRC522 emulator on the SPI bus of the
# reader's SCK pin (selected by its CS pin, its NRSTPD on the RST pin), an SSD1306 on the I2C bus at its
# address, the piezo on the ADC pin (or a comparator module's output pin), the latency jumper wire from
# its output to player N's button, WS2812 LEDs on the LED pin, the buzzer's PWM on its pin.
#
#   w = Wiring(board, world, out=None, seed=0)
#   maus.sim.emulate.install(w)   sys.modules: machine, esp32, neopixel, time (and ssd1306), acting on w
#   hw = maus.hw.esp32.Hardware(board); w.standin(hw)   the register loops' stand-in (hw.levels, hw.scan)
#   w.press(p) / w.release(p) / w.tap(ident) / w.knock(amp, ms)   the outside world
# Not deployed to real units (firmware/manifest.py): the virtual unit and the tests import it.
from micropython import const

from maus.sim.world import World

TYPE_CHECKING = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if TYPE_CHECKING:
    from typing import Any  # noqa: F401 - for the type comments

NEOPIXEL_US_PER_LED = const(30)  # 24 bits at 800 kHz
COMPARATOR_COUNTS = const(6000)  # the comparator module's trimmer: counts off the bias that switch it
# A driven input read in the armed loop (the comparator piezo: Pin.value and the Python loop around it, as
# maus.sim.machine's ADC_READ_US is for the ADC): time moves only when the firmware spends it
PIN_LOOP_US = const(40)
_REBASE_AT = const(0x20000000)  # as maus.sim.world (World.spend, written out in Wiring.block)


class Node:
    """One GPIO's wire: what drives it (the chip's output, a finger, a wire from another pin) and its pull.
    level: what GPIO_IN reads. Edges call the pin's IRQ through the world's soft-IRQ queue."""

    def __init__(self, wiring, num):
        self.wiring = wiring
        self.num = num
        self.out = -1  # the chip drives it: 0/1, -1 = input
        self.pull = 0  # 1 pull-up, -1 pull-down, 0 none (board resistors are `ext_pull`)
        self.ext_pull = 0
        self.forced = -1  # the outside world drives it (a finger on a button: 0), -1 = not
        self.source = None  # callable(t_us) -> level: a driven input (the comparator's output)
        self.listeners = []  # callables(level): what is wired to this node (a chip's input)
        self.level = self._resolve()
        self.handler = None
        self.trigger = 0
        self.pin = None  # the machine.Pin the handler gets

    def _resolve(self):
        if self.forced >= 0:
            return self.forced
        if self.out >= 0:
            return self.out
        if self.source is not None:
            return self.source(self.wiring.world.ticks_us())
        p = self.pull or self.ext_pull
        return 1 if p > 0 else 0

    def read(self):
        if self.source is not None and self.forced < 0 and self.out < 0:
            self.wiring.block(PIN_LOOP_US)
            self.update()  # a driven input: its level now
        return self.level

    def update(self):
        level = self._resolve()
        if level == self.level:
            return
        self.level = level
        for fn in self.listeners:
            fn(level)
        if self.handler is not None:
            edge = 2 if level == 0 else 1  # Pin.IRQ_FALLING, Pin.IRQ_RISING
            if self.trigger & edge:
                self.wiring.world.irq(self.handler, self.pin)

    def set_level(self, level):
        """The outside world (a finger, a scenario) drives the node: 0 low, 1 released (the pull decides)."""
        self.forced = 0 if level == 0 else -1
        self.update()


class I2CDevice:
    """A device on the bus answers writeto(addr, ...) and readfrom_into(addr, buf)."""

    def write(self, buf, start):
        pass

    def read(self, buf):
        for i in range(len(buf)):
            buf[i] = 0xFF


class SSD1306(I2CDevice):
    """The OLED controller (SSD1306 datasheet, 8.1.5 and 10.1): a control byte (Co, D/C#) then commands
    or GDDRAM data; horizontal addressing in the column and page window (0x21/0x22). A data write that
    wraps to the window's start completes a frame: the world gets it (out.send_frame)."""

    # commands with their number of argument bytes
    _ARGS = {0x20: 1, 0x21: 2, 0x22: 2, 0x81: 1, 0x8D: 1, 0xA8: 1, 0xAD: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1,
             0xDA: 1, 0xDB: 1, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5, 0xA3: 2}

    def __init__(self, wiring, width=128, height=64):
        self.wiring = wiring
        self.width = width
        self.pages = height // 8
        self.ram = bytearray(128 * self.pages)
        self.on = False
        self.contrast = 0x7F
        self.mode = 2  # page addressing after reset
        self.c0, self.c1, self.p0, self.p1 = 0, 127, 0, self.pages - 1
        self.col = self.page = 0
        self.frames = 0
        self._cmd = bytearray(8)  # a command waiting for its arguments (no allocation per command: the heap is the
        self._ncmd = 0  # firmware's too)
        self._data = False  # the stream is data (control byte 0x40)
        self._dirty = False

    def write(self, buf, start):
        i = 0
        n = len(buf)
        if start:  # the first byte of a transfer is a control byte
            if n == 0:
                return
            while True:
                ctl = buf[i]
                i += 1
                if ctl & 0x80:  # Co = 1: one byte, then another control byte
                    if i >= n:
                        return
                    self._byte(buf[i], ctl & 0x40)
                    i += 1
                    if i >= n:
                        return
                    continue
                self._data = bool(ctl & 0x40)
                break
        if self._data:
            self._write_ram(buf, i)
            return
        while i < n:
            self._byte(buf[i], 0)
            i += 1

    def _byte(self, b, data):
        if data:
            self._write_ram(bytes((b,)), 0)
            return
        c = self._cmd
        n = self._ncmd
        if n:
            c[n] = b
            n += 1
            if n > self._ARGS[c[0]]:
                self._command(c)
                n = 0
            self._ncmd = n
            return
        c[0] = b
        if b in self._ARGS:
            self._ncmd = 1
        else:
            self._command(c)

    def _command(self, c):
        op = c[0]
        if op == 0xAE or op == 0xAF:
            self.on = op == 0xAF
        elif op == 0x81:
            self.contrast = c[1]
        elif op == 0x20:
            self.mode = c[1] & 3
        elif op == 0x21:
            self.c0, self.c1 = c[1] & 127, c[2] & 127
            self.col = self.c0
        elif op == 0x22:
            self.p0, self.p1 = c[1] & 7, c[2] & 7
            self.page = self.p0
        elif 0xB0 <= op <= 0xB7:
            self.page = op & 7
        elif op < 0x10:
            self.col = (self.col & 0xF0) | op
        elif op < 0x20:
            self.col = (self.col & 0x0F) | (op & 0x0F) << 4

    def _write_ram(self, buf, i):
        off = (128 - self.width) // 2
        ram = self.ram
        n = len(buf)
        if self.mode != 2 and self.c0 <= self.col <= self.c1:
            # horizontal addressing: a run to the window's right edge at a time (a frame is 8 copies, not 1,024 steps)
            mv = memoryview(buf)
            while i < n:
                k = self.c1 - self.col + 1
                if k > n - i:
                    k = n - i
                a = self.page * 128 + self.col
                ram[a:a + k] = mv[i:i + k]
                i += k
                self._dirty = True
                self.col += k
                if self.col > self.c1:
                    self._next_row(off)
            return
        for k in range(i, n):
            ram[self.page * 128 + self.col] = buf[k]
            self._dirty = True
            if self.col < self.c1 or self.mode == 2 and self.col < 127:
                self.col += 1
                continue
            if self.mode == 2:
                self.col = 0
            else:
                self._next_row(off)

    def _next_row(self, off):
        # horizontal addressing past the window's right edge: the next page, or the window is full (a frame)
        self.col = self.c0
        if self.page < self.p1:
            self.page += 1
            return
        self.page = self.p0
        self.frames += 1
        self._dirty = False
        self.wiring.frame(self, off)

    def framebuffer(self):
        """The display's pixels as the firmware's framebuffer holds them (MONO_VLSB, width x height)."""
        if self.width == 128:
            return self.ram
        off = (128 - self.width) // 2
        out = bytearray(self.width * self.pages)
        for p in range(self.pages):
            out[p * self.width:(p + 1) * self.width] = self.ram[p * 128 + off:p * 128 + off + self.width]
        return out


class Strip:
    """WS2812 LEDs on a pin: machine.bitstream's bytes, G R B a LED."""

    def __init__(self, wiring, n):
        self.wiring = wiring
        self.grb = bytearray(3 * n)  # what the LEDs show, as sent (no allocation per write: the heap is the firmware's too)
        self.writes = 0

    @property
    def shown(self):
        b = self.grb
        return [(b[3 * i + 1], b[3 * i], b[3 * i + 2]) for i in range(len(b) // 3)]

    def bits(self, buf):
        n = len(buf) // 3
        self.wiring.block(NEOPIXEL_US_PER_LED * n)
        if len(self.grb) == len(buf):
            self.grb[:] = buf
        else:
            self.grb = bytearray(buf)
        self.writes += 1
        if self.wiring.listening():
            self.wiring.send({"leds": ["%02x%02x%02x" % c for c in self.shown]})


class WatchdogReset(SystemExit):
    """The watchdog bit: the unit resets (a SystemExit with machine.WDT_RESET, as the emulated machine.reset)."""


class Watchdog:
    """machine.WDT as the ESP32 port has it, in the world's time: once started it runs until a hard reset, a
    second start never makes it slower (machine_wdt.c), and not fed within its timeout it resets the unit
    whatever the firmware does. (maus.sim.hw's model adds real time and soft resets.)"""

    def __init__(self):
        self.ms = 0  # 0: never started
        self.world = None  # the world it is checked in
        self.vfed = 0  # world.now of the last feed
        self.keep = False  # no app runs: a keeper feeds it
        self.bites = 0

    def start(self, ms, world=None):
        if self.ms:
            ms = min(ms, self.ms)
        self.ms = ms
        self.keep = False
        if world is not None and world is not self.world:
            self.world = world
            if hasattr(world, "on_rebase"):
                world.on_rebase.append(self._rebased)  # the world's clock moved back: so does the last feed

    def feed(self):
        w = self.world
        if w is not None:
            self.vfed = w.now

    def _rebased(self, shift):
        self.vfed -= shift

    def check(self):
        late = self.world.now - self.vfed
        if self.ms and not self.keep and late > self.ms * 1000:
            self._bite(late // 1000)
            raise WatchdogReset(3)  # machine.WDT_RESET

    def _bite(self, late_ms):
        self.bites += 1
        ms = self.ms
        self.ms = 0  # a hard reset stops it
        print("E task_wdt: Task watchdog got triggered (timeout %d ms, not fed for %d ms): the unit resets"
              % (ms, late_ms))


class Wiring:
    def __init__(self, board, world, out=None, seed=0, uid=b"\x5e\x1d\x00\x00\x00\x01"):
        self.board = board
        self.world = world
        self.out = out  # maus.sim.hw.Out-like: send(obj), send_frame(buf); None = nowhere
        self.uid = uid
        self.nodes = {}
        self.spi_devs = {}  # type: dict[int, tuple[Any, int]]  # SCK pin -> (device, CS pin)
        self.i2c_devs = {}  # SDA pin -> {addr: device}
        self.adc_src = {}  # pin -> callable(t_us) -> 0..65535
        self.strips = {}  # pin -> Strip
        self.pwm = {}  # pin -> (freq, duty) last set
        self.timers = []  # machine.Timer objects running
        self.rtc_mem = b""
        self.rtc_path = None  # a file keeps RTC memory across the interpreter's restarts (the virtual unit)
        self.clock_offset = None  # the wall clock: seconds from the world's boot to 2000-01-01, None: not set
        self.freq = 160000000  # ESP32_GENERIC boots at 160 MHz (CONFIG_ESP_DEFAULT_CPU_FREQ_MHZ_160)
        self.wdt = Watchdog()  # machine.WDT's
        self.reader = self.display = self.piezo = None
        self.buttons = [self.node(n) for n in board["buttons"]]
        ext = board.get("pull", "internal") != "internal"
        for nd in self.buttons:
            nd.ext_pull = 1 if ext else 0  # a button's pull-up on the board, or the chip's own
            nd.level = nd._resolve()
        parts = board.get("parts", {})
        if "rfid" in parts:
            from maus.drivers.mfrc522 import SPI_HZ
            from maus.sim import mfrc522_emu

            r = parts["rfid"]
            self.reader = mfrc522_emu.MFRC522Emu(spi_hz=r.get("baud", SPI_HZ))
            # MicroPython on an ESP32 spends ~50 us per register access (method call, CS toggles,
            # write_readinto); modelling it keeps the busy-wait reads as few as on the board.
            self.reader.ns_per_call = 50000
            self.spi_devs[r["sck"]] = (self.reader, r["cs"])
            self.node(r["rst"]).listeners.append(self.reader.reset_pin)
        if "oled" in parts:
            o = parts["oled"]
            self.display = SSD1306(self, o.get("width", 128), o.get("height", 64))
            self.i2c_devs[o["sda"]] = {o.get("addr", 60): self.display}
        if "piezo" in parts:
            from maus.sim import piezo

            pz = parts["piezo"]
            self.piezo = piezo.Piezo(seed)
            if pz.get("mode") == "digital":
                nd = self.node(pz["pin"])
                nd.source = self._comparator
                nd.level = nd._resolve()
            else:
                self.adc_src[pz["pin"]] = self.piezo.sample
        if "leds" in parts:
            self.strips[parts["leds"]["pin"]] = Strip(self, len(board["buttons"]))
        if "jumper" in parts:
            j = parts["jumper"]
            target = self.buttons[j.get("player", 1) - 1]
            src = self.node(j["out"])
            src.listeners.append(lambda level: target.set_level(level))  # the wire: the same node

    def node(self, n):
        nd = self.nodes.get(n)
        if nd is None:
            nd = self.nodes[n] = Node(self, n)
        return nd

    def _comparator(self, t):
        # An LM393 module's DO: high while the disc's swing passes the trimmer's threshold
        return 1 if abs(self.piezo.sample(t) - self.piezo.bias) > COMPARATOR_COUNTS else 0

    # --- time ------------------------------------------------------------------------------------------
    # block and sleep_us are on every bus transfer and driver wait (the RFID poll's are most of the virtual
    # unit's time): the watchdog's check is written out, and called only when it would bite.
    def block(self, us):
        """A C call of `us` µs (a bus transfer): no handler runs until it returns."""
        w = self.world
        if type(w) is not World:
            w.spend(us)
        else:  # World.spend written out (its steps in its order)
            end = w.now + us
            if w._actions and w._actions[0][0] <= end:
                w._apply_until(end)
            w.now = end
            if w.qlen:
                w.run_irqs()
            if w.now >= _REBASE_AT:
                w._check_rebase()
        d = self.wdt
        if d.ms and d.world is w and w.now - d.vfed > d.ms * 1000:
            d.check()

    def sleep_us(self, us):
        # time.sleep_us is mp_hal_delay_us: handlers run, but not in its tail; the reader's chip goes on.
        w = self.world
        if w.model is not None:
            w.sleep_until(w.now + us)
        else:
            w.spend(us)
        if self.reader is not None:
            self.reader.sleep_us(us)
        d = self.wdt
        if d.ms and d.world is w and w.now - d.vfed > d.ms * 1000:
            d.check()

    # --- the watchdog (machine.WDT: self.wdt) and RTC memory (machine.RTC().memory) ----------------------
    def wdt_start(self, ms):
        self.wdt.start(ms, self.world)
        self.wdt.feed()

    def wdt_feed(self):
        self.wdt.feed()

    def wdt_check(self):
        if self.wdt.world is self.world:
            self.wdt.check()

    def rtc_get(self):
        if self.rtc_path is not None:
            try:
                with open(self.rtc_path, "rb") as f:
                    return f.read()
            except OSError:
                return b""
        return self.rtc_mem

    def rtc_set(self, data):
        self.rtc_mem = data
        if self.rtc_path is not None:
            with open(self.rtc_path, "wb") as f:
                f.write(data)

    def listening(self):
        """Something takes the peripherals' state (a UI): else it is not made (the heap is the firmware's too)."""
        return self.out is not None and getattr(self.out, "f", 1) is not None

    def send(self, obj):
        if self.out is not None:
            obj["t"] = self.world.ticks_ms() if "tone" in obj else obj.get("t")
            if obj["t"] is None:
                del obj["t"]
            self.out.send(obj)

    def frame(self, dev, off):
        if self.out is not None and getattr(self.out, "f", 1) is not None:
            self.out.send_frame(dev.framebuffer())

    # --- the register loops' stand-in (maus.hw.esp32_setup's viper code reads ESP32 addresses) ----------
    def gpio_in(self):
        """GPIO_IN_REG | GPIO_IN1_REG << 32 as the nodes make them."""
        v = 0
        for nd in self.nodes.values():
            if nd.read():
                v |= 1 << nd.num
        return v

    def standin(self, hw, always=False):
        """hw.levels and hw.scan for a board family with the register loops (always: whatever the family,
        the virtual unit's): the world's, one pass per poll_pass_us of the timing model (the viper loop's
        pass on the board)."""
        if getattr(hw, "scan", None) is None and not always:
            return
        # The board's loops are kept, never called (they read ESP32 addresses): a board keeps them, and what they
        # hold (maus.hw.esp32_loops' globals), for the whole boot, so the virtual unit's heap holds it too.
        self.board_loops = (hw.levels, hw.scan)
        world = self.world
        buttons = self.buttons

        def levels():
            return world.levels(buttons)

        def scan(armed, max_us, out):
            return world.scan(buttons, armed, max_us, out)

        hw.levels = levels
        hw.scan = scan

    # --- the outside world -------------------------------------------------------------------------------
    def _player(self, p):
        if type(p) is not int or not 1 <= p <= len(self.buttons):
            raise ValueError("no player %r on this board" % (p,))
        return self.buttons[p - 1]

    def press(self, p):
        self._player(p).set_level(0)

    def release(self, p):
        self._player(p).set_level(1)

    def knock(self, amp, ms=30):
        if self.piezo is not None:
            self.piezo.knock(self.world.ticks_us(), amp, ms)
