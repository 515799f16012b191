# The ESP32 board's parts, made once a boot for maus.hw.esp32.Hardware and let go again: the buttons' pins,
# the LEDs, buzzer, display, the reader's SPI bus, the piezo's ADC, the latency jumper, and the poll
# capture's register loops (maus.hw.esp32_loops).
import time

from machine import ADC, I2C, PWM, SPI, Pin


def build(hw, board):
    hw.board = board
    if board.get("pull", "internal") == "internal":
        hw.buttons = [Pin(n, Pin.IN, Pin.PULL_UP) for n in board["buttons"]]
    else:  # external pull-ups (input-only GPIO 34-39 have none inside)
        hw.buttons = [Pin(n, Pin.IN) for n in board["buttons"]]
    hw.ticks_us = time.ticks_us
    hw.ticks_ms = time.ticks_ms
    hw.levels = hw.scan = None
    if board.get("family") == "esp32":
        from maus.hw.esp32_loops import make_levels, make_scan

        hw.levels = make_levels(board)
        hw.scan = make_scan(board)  # the poll capture's register loop
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
