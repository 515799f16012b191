# ESP32 and ESP32-S3 boards: the only module that imports `machine`.
import time

import machine
import micropython
from machine import ADC, I2C, PWM, SPI, Pin

micropython.alloc_emergency_exception_buf(100)

_KEEPER_TIMER = 3  # hardware timer for the watchdog keeper (0..3 on the ESP32; nothing else here uses 3)
_RTC_WDT = 2  # RTC memory byte: the watchdog's timeout in s while one runs (bytes 0-1: the crash counter)
_GPIO_IN = 0x3FF4403C  # GPIO_IN_REG, GPIO 0-31 (ESP32)
_GPIO_IN1 = 0x3FF44040  # GPIO_IN1_REG, GPIO 32-39


class Hardware:
    def __init__(self, board, **kw):
        self.board = board
        if board.get("pull", "internal") == "internal":
            self.buttons = [Pin(n, Pin.IN, Pin.PULL_UP) for n in board["buttons"]]
        else:  # external pull-ups (input-only GPIO 34-39 have none inside)
            self.buttons = [Pin(n, Pin.IN) for n in board["buttons"]]
        self.ticks_us = time.ticks_us
        self.ticks_ms = time.ticks_ms
        self.levels = self._make_levels(board) if board.get("family") == "esp32" else None
        parts = board.get("parts", {})
        self.leds = self.buzzer = self.display = self.spi = self.rfid_cs = self.rfid_rst = None
        self.adc = self.piezo_pin = self.jumper = None
        self.problems = []
        self._wdt = None
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
            r = parts["rfid"]
            self.spi = SPI(2, baudrate=r.get("baud", 10000000), sck=Pin(r["sck"]), mosi=Pin(r["mosi"]),
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
