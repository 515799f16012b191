# The ESP32 board's parts, made once a boot for maus.hw.esp32.Hardware and let go again: the buttons' pins,
# the LEDs, buzzer, display, the reader's SPI bus, the piezo's ADC, the latency jumper, and the poll
# capture's register loops (viper: on the ESP32 their machine code goes to IRAM and stays there until a
# soft reset, ports/esp32/main.c esp_native_code_commit, so this module is loaded once a boot, by
# Hardware(), and not kept).
import time

import micropython
from machine import ADC, I2C, PWM, SPI, Pin
from micropython import const

_GPIO_IN = 0x3FF4403C  # GPIO_IN_REG, GPIO 0-31 (ESP32)
_GPIO_IN1 = 0x3FF44040  # GPIO_IN1_REG, GPIO 32-39
# Timer group 0's LAC timer, the counter esp_timer (so ticks_us) runs on: ESP-IDF esp_timer_impl_lac.c,
# LACT_TICKS_PER_US = 2; registers in soc/timer_group_reg.h (ESP32 TRM, "Timer Group"): a write to
# TIMG_LACTUPDATE_REG (+0x80) latches the count into TIMG_LACTLO_REG (+0x78). Word indexes below. The
# peripheral has no done bit: ESP-IDF (esp_timer_impl_get_counter_reg) reads LACTLO until it changes, at
# most the divider's count of times (40 at the 80 MHz APB clock); so does the loop below.
_TIMG0 = 0x3FF5F000
_LACT_LO = const(30)
_LACT_UPDATE = const(32)
_LATCH_POLLS = const(40)


def build(hw, board):
    hw.board = board
    if board.get("pull", "internal") == "internal":
        hw.buttons = [Pin(n, Pin.IN, Pin.PULL_UP) for n in board["buttons"]]
    else:  # external pull-ups (input-only GPIO 34-39 have none inside)
        hw.buttons = [Pin(n, Pin.IN) for n in board["buttons"]]
    hw.ticks_us = time.ticks_us
    hw.ticks_ms = time.ticks_ms
    esp32 = board.get("family") == "esp32"
    hw.levels = _make_levels(board) if esp32 else None
    hw.scan = _make_scan(board) if esp32 else None  # the poll capture's register loop
    parts = board.get("parts", {})
    hw.leds = hw.buzzer = hw.display = hw.spi = hw.rfid_cs = hw.rfid_rst = None
    hw.adc = hw.piezo_pin = hw.jumper = None
    hw.problems = []
    if "leds" in parts:
        import neopixel

        hw.leds = neopixel.NeoPixel(Pin(parts["leds"]["pin"], Pin.OUT), len(hw.buttons))
    if "buzzer" in parts:
        hw.buzzer = PWM(Pin(parts["buzzer"]["pin"]), freq=1000, duty_u16=0)
    if "oled" in parts:
        o = parts["oled"]
        try:
            from maus.drivers import ssd1306  # the project's own: deployed with the firmware, no network

            i2c = I2C(0, sda=Pin(o["sda"]), scl=Pin(o["scl"]), freq=400000)
            hw.display = ssd1306.SSD1306_I2C(o.get("width", 128), o.get("height", 64), i2c, o.get("addr", 60))
        except ImportError:
            hw.problems.append("display: ssd1306 driver missing (run mausbox deploy)")
        except OSError:
            hw.problems.append("display: no answer on I2C (check SDA/SCL wiring, pins SDA %s, SCL %s)"
                               % (o.get("sda"), o.get("scl")))
    if "rfid" in parts:
        from maus.drivers.mfrc522 import SPI_HZ

        r = parts["rfid"]
        hw.spi = SPI(2, baudrate=r.get("baud", SPI_HZ), sck=Pin(r["sck"]), mosi=Pin(r["mosi"]),
                       miso=Pin(r["miso"]))
        hw.rfid_cs = Pin(r["cs"], Pin.OUT, value=1)
        hw.rfid_rst = Pin(r["rst"], Pin.OUT, value=1)
    if "piezo" in parts:
        pz = parts["piezo"]
        if pz.get("mode") == "digital":
            hw.piezo_pin = Pin(pz["pin"], Pin.IN)
        else:
            hw.adc = ADC(Pin(pz["pin"]), atten=ADC.ATTN_11DB)
    if "jumper" in parts:
        hw.jumper = Pin(parts["jumper"]["out"], Pin.OUT, value=1)


def _make_levels(board):
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


def _make_scan(board):
    # The poll capture (maus.capture.irq.Capture.poll): sample both input registers and the µs counter
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
        c = tm[_LACT_LO]
        tm[_LACT_UPDATE] = 1
        c0 = tm[_LACT_LO]
        w = 0
        while c0 == c and w < _LATCH_POLLS:  # the latch has not taken the count yet
            c0 = tm[_LACT_LO]
            w += 1
        c = c0
        limit = max_us * 2
        while True:
            a = g0[0]
            b = g1[0]
            tm[_LACT_UPDATE] = 1
            v = tm[_LACT_LO]
            w = 0
            while v == c and w < _LATCH_POLLS:
                v = tm[_LACT_LO]
                w += 1
            c = v
            el = v - c0  # LAC ticks (2 a µs) since the call; wraps after 35 min
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
