# ESP32 and ESP32-S3 boards: the only module that imports `machine`.
import time

import machine
import micropython
from machine import ADC, I2C, PWM, SPI, Pin
from micropython import const

micropython.alloc_emergency_exception_buf(100)

_KEEPER_TIMER = 3  # hardware timer for the watchdog keeper (0..3 on the ESP32; nothing else here uses 3)
_RTC_WDT = 2  # RTC memory byte: the watchdog's timeout in s while one runs (bytes 0-1: the crash counter)
_GPIO_IN = 0x3FF4403C  # GPIO_IN_REG, GPIO 0-31 (ESP32)
_GPIO_IN1 = 0x3FF44040  # GPIO_IN1_REG, GPIO 32-39
# Timer group 0's LAC timer, the counter esp_timer (so ticks_us) runs on: ESP-IDF esp_timer_impl_lac.c,
# LACT_TICKS_PER_US = 2; registers in soc/timer_group_reg.h (ESP32 TRM, "Timer Group"): a write to
# TIMG_LACTUPDATE_REG (+0x80) latches the count into TIMG_LACTLO_REG (+0x78). Word indexes below.
_TIMG0 = 0x3FF5F000
_LACT_LO = const(30)
_LACT_UPDATE = const(32)


class Hardware:
    def __init__(self, board, **kw):
        self.board = board
        if board.get("pull", "internal") == "internal":
            self.buttons = [Pin(n, Pin.IN, Pin.PULL_UP) for n in board["buttons"]]
        else:  # external pull-ups (input-only GPIO 34-39 have none inside)
            self.buttons = [Pin(n, Pin.IN) for n in board["buttons"]]
        self.ticks_us = time.ticks_us
        self.ticks_ms = time.ticks_ms
        esp32 = board.get("family") == "esp32"
        self.levels = self._make_levels(board) if esp32 else None
        self.scan = self._make_scan(board) if esp32 else None  # the poll capture's register loop
        parts = board.get("parts", {})
        self.leds = self.buzzer = self.display = self.spi = self.rfid_cs = self.rfid_rst = None
        self.adc = self.piezo_pin = self.jumper = None
        self.problems = []
        self._wdt = None
        self._rmt = None
        if "leds" in parts:
            import neopixel

            self.leds = neopixel.NeoPixel(Pin(parts["leds"]["pin"], Pin.OUT), len(self.buttons))
        if "buzzer" in parts:
            self.buzzer = PWM(Pin(parts["buzzer"]["pin"]), freq=1000, duty_u16=0)
        if "oled" in parts:
            o = parts["oled"]
            try:
                import ssd1306  # micropython-lib, installed with mip by `mausbox deploy`

                i2c = I2C(0, sda=Pin(o["sda"]), scl=Pin(o["scl"]), freq=400000)
                self.display = ssd1306.SSD1306_I2C(o.get("width", 128), o.get("height", 64), i2c, o.get("addr", 60))
            except ImportError:
                self.problems.append("display: ssd1306 driver missing (run mausbox deploy)")
            except OSError:
                self.problems.append("display: no answer on I2C (check SDA/SCL wiring)")
        if "rfid" in parts:
            from maus.drivers.mfrc522 import SPI_HZ

            r = parts["rfid"]
            self.spi = SPI(2, baudrate=r.get("baud", SPI_HZ), sck=Pin(r["sck"]), mosi=Pin(r["mosi"]),
                           miso=Pin(r["miso"]))
            self.rfid_cs = Pin(r["cs"], Pin.OUT, value=1)
            self.rfid_rst = Pin(r["rst"], Pin.OUT, value=1)
        if "piezo" in parts:
            pz = parts["piezo"]
            if pz.get("mode") == "digital":
                self.piezo_pin = Pin(pz["pin"], Pin.IN)
            else:
                self.adc = ADC(Pin(pz["pin"]), atten=ADC.ATTN_11DB)
        if "jumper" in parts:
            self.jumper = Pin(parts["jumper"]["out"], Pin.OUT, value=1)

    def _make_levels(self, board):
        # One read of each GPIO input register, folded into a player bitmask without allocating.
        pins = bytearray(board["buttons"])
        count = len(pins)

        @micropython.viper
        def levels() -> int:
            a = ptr32(_GPIO_IN)[0]  # noqa: F821 - viper builtin
            b = ptr32(_GPIO_IN1)[0]  # noqa: F821
            p = ptr8(pins)  # noqa: F821
            out = 0
            for k in range(int(count)):
                n = p[k]
                if n < 32:
                    if not (a >> n) & 1:
                        out |= 1 << k
                elif not (b >> (n - 32)) & 1:
                    out |= 1 << k
            return out

        return levels

    def _make_scan(self, board):
        # The poll capture (maus.capture.Capture.poll): sample both input registers and the µs counter
        # in a native loop, ~1 µs a pass, until a button in `armed` reads low or max_us pass; out[k] =
        # µs from the call to the pass that saw button k. The scheduler waits meanwhile (native code
        # checks no pending handlers), so nothing but this loop times an edge in the window.
        pins = bytearray(board["buttons"])
        count = len(pins)

        @micropython.viper
        def scan(armed: int, max_us: int, out) -> int:
            g0 = ptr32(_GPIO_IN)  # noqa: F821 - viper builtin
            g1 = ptr32(_GPIO_IN1)  # noqa: F821
            tm = ptr32(_TIMG0)  # noqa: F821
            p = ptr8(pins)  # noqa: F821
            o = ptr32(out)  # noqa: F821
            n = int(count)
            tm[_LACT_UPDATE] = 1
            c0 = tm[_LACT_LO]
            limit = max_us * 2
            while True:
                a = g0[0]
                b = g1[0]
                tm[_LACT_UPDATE] = 1
                el = tm[_LACT_LO] - c0  # LAC ticks (2 a µs) since the call; wraps after 35 min
                low = 0
                for k in range(n):
                    q = p[k]
                    if q < 32:
                        if not (a >> q) & 1:
                            low |= 1 << k
                    elif not (b >> (q - 32)) & 1:
                        low |= 1 << k
                low &= armed
                if low:
                    for k in range(n):
                        if (low >> k) & 1:
                            o[k] = el >> 1
                    return low
                if el >= limit:
                    return 0

        return scan

    def window(self, is_open):
        pass

    def pulse(self, delay_us, low_us):
        """The latency self-test's edge: the RMT drives the jumper low delay_us from now, for low_us, while
        the CPU runs the race loop (docs/capture.md). The RMT's own start delay is measured by the test."""
        if self._rmt is None:
            import esp32

            self._rmt = esp32.RMT(pin=self.jumper, resolution_hz=1000000, idle_level=True)
        self._rmt.write_pulses((delay_us, low_us), True)  # high for delay_us, low for low_us, then idle high

    def idle(self, ms):
        if ms > 0:
            time.sleep_ms(min(ms, 10))
        else:
            machine.idle()

    def spend(self, us):
        pass

    def unique_id(self):
        return machine.unique_id()

    def rtc_load(self):
        try:
            return machine.RTC().memory()
        except Exception:
            return b""

    def rtc_save(self, data):
        try:
            machine.RTC().memory(data)
        except Exception:
            pass

    def wdt_start(self, ms):
        self._wdt = machine.WDT(timeout=ms)
        _keeper(self._wdt, ms, False)
        _rtc_mark(ms)

    def wdt_feed(self):
        if self._wdt is not None:
            self._wdt.feed()

    def wdt_release(self):
        global _keep
        _keep = True

    def set_clock(self, rtc):
        machine.RTC().datetime(rtc)

    def wall_clock(self):
        # None until the clock was set (the RTC starts in 2000 after power-up)
        t = time.localtime()
        return t if t[0] >= 2024 else None

    def reset(self):
        machine.reset()


# The watchdog keeper. machine.WDT cannot be stopped and survives a soft reset; the REPL does not run
# main.py after a raw-REPL soft reset (mpremote does one), so without help every host session would end
# in a watchdog reset. A machine.Timer callback runs in MicroPython's scheduler, which also runs while the
# REPL waits for input (ports/esp32/mphalport.c: mp_hal_stdin_rx_chr -> MICROPY_EVENT_POLL_HOOK); it feeds
# only once the app has let go (Ctrl-C), so an app that hangs is still reset.
_timer = None
_dog = None
_keep = False


def _feed(_t):
    if _keep:
        _dog.feed()


def _keeper(dog, ms, keep):
    global _timer, _dog, _keep
    _dog = dog
    _keep = keep
    if _timer is None:
        _timer = machine.Timer(_KEEPER_TIMER)
    _timer.init(mode=machine.Timer.PERIODIC, period=max(100, ms // 4), callback=_feed)


def _rtc_mark(ms):
    # RTC memory outlives a soft reset (and a watchdog reset: then boot.py restarts one, harmlessly fed).
    try:
        rtc = machine.RTC()
        m = bytearray(rtc.memory())
        while len(m) <= _RTC_WDT:
            m.append(0)
        m[_RTC_WDT] = min(255, max(1, ms // 1000))
        rtc.memory(m)
    except Exception:  # noqa: BLE001 - a board without RTC memory keeps the old behaviour
        pass


def keep_watchdog():
    try:
        m = machine.RTC().memory()
    except Exception:  # noqa: BLE001
        return False
    if len(m) <= _RTC_WDT or not m[_RTC_WDT]:
        return False
    ms = m[_RTC_WDT] * 1000
    _keeper(machine.WDT(timeout=ms), ms, True)
    return True
