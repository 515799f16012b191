# The ESP32 port's `machine` (MicroPython 1.28, ports/esp32) emulated on the unix port: the same names
# and constants, backed by the simulated world at the pin and the bus (maus.sim.wiring). maus.hw.esp32 and
# maus.hw.esp32_setup run against it unchanged. Installed as sys.modules["machine"] by maus.sim.emulate.install().
# Not deployed to real units (firmware/manifest.py).
from micropython import const

I2C_BITS = const(9)  # an I2C byte on the wire: 8 bits and the ACK
I2C_CALL_US = const(10)  # machine.I2C's own time per transfer on the ESP32 (start, address, stop)
SPI_CALL_US = const(8)  # per transfer, on top of 8 clocks a byte at the board's SPI clock
ADC_READ_US = const(100)  # read_u16 plus the Python armed loop: about 10 kHz on the ESP32 (docs/piezo.md)

_w = None  # the wiring (maus.sim.wiring.Wiring)


class _Unwired:
    """The virtual unit before its app's hardware layer attaches a wiring (the REPL after a soft reset, where boot.py
    loaded maus.sim.hw but main.py did not run): the parts act on maus.sim.vuparts' live wiring of the board file,
    made at the first use, as a board's machine works from the first prompt. The watchdog stays the app's
    (maus.sim.hw's model, which boot.py starts when machine.WDT has no wiring)."""

    def __getattr__(self, name):
        if name[:4] == "wdt_":
            raise AttributeError(name)
        from maus.sim import vuparts

        return getattr(vuparts.attach_default(attach), name)

    def __setattr__(self, name, v):  # machine.freq(hz)
        from maus.sim import vuparts

        setattr(vuparts.attach_default(attach), name, v)


try:
    import _vunit  # type: ignore[import-not-found]  # noqa: F401  # the virtual unit (host/mausbox/sim/replserver.py)

    _w = _Unwired()
except ImportError:
    pass

PWRON_RESET = const(1)  # ports/esp32/modmachine.c: reset_cause() values
HARD_RESET = const(2)
WDT_RESET = const(3)
DEEPSLEEP_RESET = const(4)
SOFT_RESET = const(5)
_INPUT_ONLY = (34, 35, 36, 37, 38, 39)  # ESP32: no output driver and no pulls on GPIO 34-39
_MAX_GPIO = const(39)
_reset_cause = PWRON_RESET
_OUT = const(3)  # Pin.OUT, folded where it is tested at each transfer


def attach(wiring, cause=PWRON_RESET):
    global _w, _reset_cause
    _w = wiring
    _reset_cause = cause


class Pin:
    IN = const(1)  # GPIO_MODE_INPUT
    OUT = const(3)  # GPIO_MODE_INPUT_OUTPUT: an output reads back its own level
    OPEN_DRAIN = const(7)  # GPIO_MODE_INPUT_OUTPUT_OD
    PULL_DOWN = const(1)  # machine_pin.c GPIO_PULL_DOWN
    PULL_UP = const(2)
    PULL_HOLD = const(4)
    IRQ_RISING = const(1)  # GPIO_INTR_POSEDGE
    IRQ_FALLING = const(2)
    WAKE_LOW = const(4)
    WAKE_HIGH = const(5)
    DRIVE_0 = const(0)
    DRIVE_1 = const(1)
    DRIVE_2 = const(2)
    DRIVE_3 = const(3)

    def __init__(self, id, mode=-1, pull=-1, *, value=None, drive=None, hold=None):
        if type(id) is not int or not 0 <= id <= _MAX_GPIO or id in (24, 28, 29, 30, 31):
            raise ValueError("invalid pin")
        self._n = _w.node(id)
        self._n.pin = self
        self._mode = Pin.IN
        self._set = 0  # the output level register: kept while an input, driven once an output
        self.init(mode, pull, value=value)

    def init(self, mode=-1, pull=-1, *, value=None, drive=None, hold=None):
        n = self._n
        if value is not None:
            self._set = 1 if value else 0  # set before the driver is enabled (machine_pin.c)
        if mode != -1:
            if mode in (Pin.OUT, Pin.OPEN_DRAIN) and n.num in _INPUT_ONLY:
                raise ValueError("pin can only be input")
            self._mode = mode
        if self._mode == Pin.IN:
            n.out = -1
        else:
            n.out = -1 if self._mode == Pin.OPEN_DRAIN and self._set else self._set
        if pull != -1:
            if n.num in _INPUT_ONLY and pull:
                pull = None  # gpio_set_pull_mode on 34-39 has no effect: no resistors there
            n.pull = 1 if pull == Pin.PULL_UP else -1 if pull == Pin.PULL_DOWN else 0
        n.update()

    def value(self, v=None):
        n = self._n
        if v is None:
            return n.read()
        v = self._set = 1 if v else 0
        if self._mode == _OUT and n.handler is None and not n.listeners:
            # Driven, and nothing to tell (the RFID chip select, twice a bus transfer): the level without update()
            n.out = v
            if n.forced < 0:
                n.level = v
            return None
        if self._mode == Pin.IN:
            return None  # kept in the output register (the port's gpio_set_level)
        n.out = -1 if self._mode == Pin.OPEN_DRAIN and v else v  # open drain: released
        n.update()
        return None

    def __call__(self, v=None):
        return self.value(v)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def irq(self, handler=None, trigger=3, *, wake=None, hard=False):
        if hard:
            raise TypeError("hard IRQs are not supported")  # the ESP32 port's pins: soft IRQs only
        n = self._n
        n.handler = handler
        n.trigger = trigger if handler is not None else 0
        return None

    def __repr__(self):
        return "Pin(%d)" % self._n.num


class Signal:
    def __init__(self, pin, *args, invert=False):
        self._p = pin if isinstance(pin, Pin) else Pin(pin, *args)
        self._inv = 1 if invert else 0

    def value(self, v=None):
        if v is None:
            return self._p.value() ^ self._inv
        self._p.value((1 if v else 0) ^ self._inv)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)


def _pin_num(p):
    return p._n.num if isinstance(p, Pin) else int(p)


class SPI:
    """A hardware SPI bus; the device is the one wired to its SCK pin, selected by its CS pin being low."""

    LSB = const(1)
    MSB = const(0)
    _DEFAULT = {1: (14, 13, 12), 2: (18, 23, 19)}  # HSPI, VSPI: sck, mosi, miso

    def __init__(self, id, baudrate=500000, *, polarity=0, phase=0, bits=8, firstbit=0, sck=None, mosi=None,
                 miso=None):
        if id not in (1, 2) and type(self) is SPI:
            raise ValueError("SPI(%s) doesn't exist" % (id,))
        d = SPI._DEFAULT.get(id, (-1, -1, -1))
        self._id = id
        self._pins = (_pin_num(sck) if sck is not None else d[0], _pin_num(mosi) if mosi is not None else d[1],
                      _pin_num(miso) if miso is not None else d[2])
        self._mode = (polarity, phase, bits, firstbit)
        self._sck = _pin_num(sck) if sck is not None else d[0]
        self._dev, cs = _w.spi_devs.get(self._sck, (None, -1))
        if self._dev is not None:  # bound once: found here, not looked up in the device's class at each transfer
            self._dw = self._dev.write
            self._dwr = self._dev.write_readinto
        self._cs = _w.node(cs) if cs >= 0 else None
        self.init(baudrate)

    def init(self, baudrate=500000, **kw):
        # the clock the ESP32's divider makes of the 80 MHz APB clock (ports/esp32/machine_hw_spi.c:
        # spi_get_actual_clock(APB_CLK_FREQ, baudrate, 0), the nearest not above)
        baudrate = 80000000 // ((80000000 + baudrate - 1) // baudrate) if 0 < baudrate < 80000000 else baudrate
        self.baudrate = baudrate
        self._ns_per_byte = 8000000 // (baudrate // 1000)
        if self._dev is not None:
            self._dev.set_spi_hz(baudrate)

    def deinit(self):
        pass

    def __repr__(self):  # machine_hw_spi.c machine_hw_spi_print
        return "SPI(id=%u, baudrate=%u, polarity=%u, phase=%u, bits=%u, firstbit=%u, sck=%d, mosi=%d, miso=%d)" % (
            (self._id, self.baudrate) + self._mode + self._pins)

    # The RFID poll's ~50 transfers a pass are most of the virtual unit's time: each is one call here and one
    # to the wiring's block (a C call: no handler runs in it), the device's when its CS is low.
    def write(self, buf):
        _w.block(SPI_CALL_US + len(buf) * self._ns_per_byte // 1000)
        cs = self._cs
        if self._dev is not None and (cs is None or cs.level == 0):
            self._dw(buf)

    def write_readinto(self, out, into):
        _w.block(SPI_CALL_US + len(out) * self._ns_per_byte // 1000)
        cs = self._cs
        if self._dev is not None and (cs is None or cs.level == 0):
            self._dwr(out, into)
        else:
            for i in range(len(out)):
                into[i] = 0xFF  # MISO pulled up, nobody drives it

    def readinto(self, buf, write=0):
        _w.block(SPI_CALL_US + len(buf) * self._ns_per_byte // 1000)
        cs = self._cs
        if self._dev is not None and (cs is None or cs.level == 0):
            self._dev.readinto(buf, write)
        else:
            for i in range(len(buf)):
                buf[i] = 0xFF

    def read(self, n, write=0):
        b = bytearray(n)
        self.readinto(b, write)
        return bytes(b)


class SoftSPI(SPI):
    def __init__(self, baudrate=500000, *, polarity=0, phase=0, bits=8, firstbit=0, sck=None, mosi=None,
                 miso=None):
        if sck is None or mosi is None or miso is None:
            raise TypeError("must specify all of sck/mosi/miso")
        SPI.__init__(self, -1, min(baudrate, 2000000), sck=sck, mosi=mosi, miso=miso)  # bit-banged: slower


class I2C:
    """A hardware I2C controller; devices are those wired to its SDA pin. No ACK raises OSError(ENODEV)."""

    _DEFAULT = {0: (18, 19), 1: (25, 26)}  # ports/esp32/machine_i2c.c: scl, sda

    def __init__(self, id=0, *, scl=None, sda=None, freq=400000, timeout=50000):
        if id not in (0, 1) and type(self) is I2C:
            raise ValueError("I2C(%s) doesn't exist" % (id,))
        d = I2C._DEFAULT.get(id, (-1, -1))
        self._sda = _pin_num(sda) if sda is not None else d[1]
        self.freq = freq

    def init(self, *, scl=None, sda=None, freq=400000, timeout=50000):
        self.freq = freq

    def _devs(self):
        return _w.i2c_devs.get(self._sda) or {}

    def _dev(self, addr):
        devs = _w.i2c_devs.get(self._sda)
        d = devs.get(addr) if devs is not None else None
        if d is None:
            raise OSError(19)  # MP_ENODEV: no ACK of the address
        return d

    def _charge(self, n):
        _w.block(I2C_CALL_US + (n + 1) * I2C_BITS * 1000000 // self.freq)

    def scan(self):
        return sorted(self._devs())

    def writeto(self, addr, buf, stop=True):
        d = self._dev(addr)
        self._charge(len(buf))
        d.write(buf, True)
        return len(buf)

    def writevto(self, addr, vector, stop=True):
        d = self._dev(addr)
        n = 0
        for b in vector:
            n += len(b)
        self._charge(n)
        first = True
        for b in vector:
            d.write(b, first)
            first = False
        return n

    def readfrom_into(self, addr, buf, stop=True):
        d = self._dev(addr)
        self._charge(len(buf))
        d.read(buf)

    def readfrom(self, addr, n, stop=True):
        b = bytearray(n)
        self.readfrom_into(addr, b)
        return bytes(b)


class SoftI2C(I2C):
    def __init__(self, scl, sda, *, freq=400000, timeout=50000):
        I2C.__init__(self, -1, scl=scl, sda=sda, freq=freq)


class ADC:
    ATTN_0DB = const(0)
    ATTN_2_5DB = const(1)
    ATTN_6DB = const(2)
    ATTN_11DB = const(3)
    WIDTH_9BIT = const(9)
    WIDTH_10BIT = const(10)
    WIDTH_11BIT = const(11)
    WIDTH_12BIT = const(12)
    _ADC1 = (32, 33, 34, 35, 36, 37, 38, 39)
    _ADC2 = (0, 2, 4, 12, 13, 14, 15, 25, 26, 27)

    def __init__(self, pin, *, atten=None):
        n = _pin_num(pin)
        if n not in ADC._ADC1 and n not in ADC._ADC2:
            raise ValueError("invalid pin")
        self._src = _w.adc_src.get(n)
        self._atten = ADC.ATTN_0DB if atten is None else atten
        self._bits = 12

    def atten(self, a):
        self._atten = a

    def width(self, bits):
        if bits not in (9, 10, 11, 12):
            raise ValueError("invalid bit-width")
        self._bits = bits

    def init(self, *, atten=None):
        if atten is not None:
            self._atten = atten

    def read_u16(self):
        _w.block(ADC_READ_US)
        if self._src is None:
            return 0  # a floating ADC pin: nothing wired (the firmware would see silence)
        raw = self._src(_w.world.ticks_us()) >> 4  # the 12-bit reading, scaled to 16 as machine_adc.c does
        return raw << 4 | raw >> 8

    def read(self):
        return self.read_u16() >> (16 - self._bits)

    def read_uv(self):
        full = (950000, 1250000, 1750000, 3100000)[self._atten]  # ESP32 ADC ranges per attenuation
        return self.read_u16() * full // 65535


class PWM:
    def __init__(self, dest, *, freq=None, duty=None, duty_u16=None, duty_ns=None, invert=False):
        self._pin = _pin_num(dest)
        self._freq = 5000 if freq is None else freq
        self._duty = 0 if duty_u16 is None else duty_u16
        if duty is not None:
            self._duty = duty * 65535 // 1023
        self._publish()

    def init(self, *, freq=None, duty_u16=None, **kw):
        if freq is not None:
            self._freq = freq
        if duty_u16 is not None:
            self._duty = duty_u16
        self._publish()

    def freq(self, f=None):
        if f is None:
            return self._freq
        if not 1 <= f <= 40000000:
            raise ValueError("frequency must be from 1Hz to 40MHz")
        self._freq = f
        self._publish()

    def duty_u16(self, d=None):
        if d is None:
            return self._duty
        self._duty = d
        self._publish()

    def duty(self, d=None):
        if d is None:
            return self._duty * 1023 // 65535
        self.duty_u16(d * 65535 // 1023)

    def deinit(self):
        self._duty = 0
        self._publish()

    def _publish(self):
        _w.pwm[self._pin] = (self._freq, self._duty)
        if _w.listening():
            _w.send({"tone": self._freq if self._duty else 0})


class WDT:
    """The task watchdog: it cannot be stopped, and a second one never makes it slower."""

    def __init__(self, id=0, timeout=5000):
        if timeout < 1:
            raise ValueError("WDT timeout too short")
        _w.wdt_start(timeout)

    def feed(self):
        _w.wdt_feed()


class RTC:
    def __init__(self, id=0):
        pass

    def datetime(self, dt=None):
        import time

        if dt is None:
            tm = time.localtime()
            return (tm[0], tm[1], tm[2], tm[6], tm[3], tm[4], tm[5], 0)
        time.set_time(time.mktime((dt[0], dt[1], dt[2], dt[4], dt[5], dt[6], 0, 0)))  # type: ignore[attr-defined]  # maus.sim.etime's
        return None

    def init(self, dt):
        self.datetime(dt)

    def memory(self, data=None):
        if data is None:
            return _w.rtc_get()
        if len(data) > 2048:  # MICROPY_HW_RTC_USER_MEM_MAX
            raise ValueError("buffer too long")
        _w.rtc_set(bytes(data))
        return None


class Timer:
    """A hardware timer: its callback runs in the scheduler (a soft IRQ, through the world's queue)."""

    ONE_SHOT = const(0)
    PERIODIC = const(1)

    def __init__(self, id, **kw):
        self._id = id
        self._cb = None
        self._gen = 0
        self._fire_m = self._fire  # bound once: a tick allocates nothing of the firmware's heap but its entry
        self._run_m = self._run
        if kw:
            self.init(**kw)

    def init(self, *, mode=PERIODIC, period=-1, callback=None, freq=-1):
        self.deinit()
        if freq > 0:
            period = 1000 // freq
        self._mode = mode
        self._period_us = max(1, period) * 1000
        self._cb = callback
        self._gen += 1
        _w.timers.append(self)
        w = _w.world
        w.timer_events += 1
        w.at(w.now + self._period_us, self._fire_m, self._gen)

    def _fire(self, gen):
        w = _w.world
        w.timer_events -= 1
        if gen != self._gen or self._cb is None:
            return  # re-initialised or stopped since
        w.irq(self._run_m, self)
        if self._mode == Timer.PERIODIC:
            w.timer_events += 1
            w.at(w.now + self._period_us, self._fire_m, gen)
        else:
            self.deinit()

    def _run(self, _t):
        if self._cb is not None:
            self._cb(self)

    def deinit(self):
        self._gen += 1
        self._cb = None
        if self in _w.timers:
            _w.timers.remove(self)

    def value(self):
        return 0


class _Mem:
    """machine.mem32 at the registers the board code reads: GPIO_IN/GPIO_IN1, and timer group 0's LAC
    counter (a write to its update register latches the µs count, two ticks a µs, into LACTLO one APB
    read later: ESP-IDF polls until the value changes). Other addresses: 0, writes ignored."""

    def __init__(self, width):
        self._mask = (1 << width) - 1
        self._align = width // 8 - 1
        self._latch = self._latch_old = 0
        self._lag = 0

    def __repr__(self):  # extmod/machine_mem.c
        return "<%u-bit memory>" % (8 * (self._align + 1))

    def _bad(self, a):
        if type(a) is not int:
            raise TypeError("can't convert %s to int" % type(a).__name__)
        raise ValueError("address %08x is not aligned to %d bytes" % (a, self._align + 1))

    def __getitem__(self, a):
        if type(a) is not int or a & self._align:
            self._bad(a)
        if a == 0x3FF4403C:  # GPIO_IN_REG
            return _w.gpio_in() & 0xFFFFFFFF & self._mask
        if a == 0x3FF44040:  # GPIO_IN1_REG
            return _w.gpio_in() >> 32 & 0xFF
        if a == 0x3FF5F078:  # TIMG0 LACTLO
            if self._lag:
                self._lag = 0
                return self._latch_old & self._mask
            return self._latch & self._mask
        return 0

    def __setitem__(self, a, v):
        if type(a) is not int or a & self._align:
            self._bad(a)
        if a == 0x3FF5F080:  # TIMG0 LACTUPDATE
            self._latch_old = self._latch
            self._latch = (_w.world.now * 2) & 0xFFFFFFFF
            self._lag = 1


mem8 = _Mem(8)
mem16 = _Mem(16)
mem32 = _Mem(32)


def freq(hz=None):
    if hz is None:
        return _w.freq
    if hz not in (20000000, 40000000, 80000000, 160000000, 240000000):
        raise ValueError("frequency must be 20MHz, 40MHz, 80Mhz, 160MHz or 240MHz")
    _w.freq = hz
    return None


def unique_id():
    return _w.uid


def idle():
    if _w is None or type(_w) is _Unwired:
        import time

        time.sleep_ms(1)
        return
    _w.block(1)  # taskYIELD (ports/esp32/modmachine.c): C, the pin handlers run at the next VM branch after it


def lightsleep(ms=None):
    import time

    time.sleep_ms(ms or 0)


def reset():
    raise SystemExit(HARD_RESET)


def soft_reset():
    raise SystemExit


def reset_cause():
    return _reset_cause


def disable_irq():
    return 1


def enable_irq(state=1):
    pass


def time_pulse_us(pin, level, timeout_us=1000000):
    return -2 if pin.value() != level else -1


def bitstream(pin, encoding, timing, buf):
    s = _w.strips.get(_pin_num(pin))
    if s is not None:
        s.bits(buf)
