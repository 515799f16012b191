"""What a board file wires: every GPIO and the part at the other end of its wire, and the parts' supply currents
(for the wiring diagram, the pin table, the bill of materials and the power budget)."""

from __future__ import annotations

from dataclasses import dataclass

from maus.drivers.mfrc522 import SPI_HZ


def spi_mhz(rfid):
    # The reader's SPI clock in MHz ("baud" is optional in a board file: the driver's default then).
    return f"{rfid.get('baud', SPI_HZ) / 1000000:g}"


USB_LIMIT_MA = 500

FAMILY_TITLE = {"esp32": "ESP32", "esp32s3": "ESP32-S3", "sim": "Virtual unit"}
DEVBOARD = {
    "esp32": ("ESP32-DevKitC V4", "Espressif ESP32-DevKitC-32E (ESP32-WROOM-32E)"),
    "esp32s3": ("ESP32-S3-DevKitC-1", "Espressif ESP32-S3-DevKitC-1-N8R8"),
    "sim": ("Virtual unit", "MicroPython unix port"),
}
# Typical supply current in mA: (WiFi off, WiFi on peak). Datasheet figures, 240 MHz CPU.
MCU_MA = {"esp32": (80, 240), "esp32s3": (100, 340), "sim": (80, 240)}
LED_MA = 60  # WS2812 at full white: 3 x 20 mA
PART_MA = {"rfid": 26, "oled": 20, "buzzer": 30, "piezo_digital": 5}


@dataclass
class Conn:
    """One wire from a GPIO to a part."""

    gpio: int
    where: str  # field in the board file
    part: str  # part key, or "buttons"
    signal: str  # what the wire carries, e.g. "P1 button", "SCK"
    direction: str  # "in", "out", "in/out", "analog in"
    via: str  # what sits in the wire
    note: str


def gpio(n: int) -> str:
    return f"GPIO{n}"


def connections(board: dict) -> list[Conn]:
    """Every pin of the board, in wiring order, with what is on the other end of the wire."""
    parts = board.get("parts", {})
    ext = board["pull"] == "external"
    jumper = parts.get("jumper")
    out = []
    for i, p in enumerate(board["buttons"]):
        note = "10 kΩ pull-up to 3V3" if ext else "internal pull-up"
        if jumper and jumper["player"] == i + 1:
            note += f"; latency jumper from {gpio(jumper['out'])}"
        out.append(Conn(p, f"buttons[{i}]", "buttons", f"P{i + 1} button", "in", "arcade button to GND", note))
    if "leds" in parts:
        out.append(Conn(parts["leds"]["pin"], "parts.leds.pin", "leds", "LED data", "out",
                        "74AHCT125 buffer, 330 Ω", f"DIN of LED 1; {board['players']} × WS2812 chained, 5 V"))
    if "buzzer" in parts:
        out.append(Conn(parts["buzzer"]["pin"], "parts.buzzer.pin", "buzzer", "buzzer PWM", "out",
                        "1 kΩ to NPN base", "transducer from 5 V to collector, 1N4148 flyback"))
    if "oled" in parts:
        o = parts["oled"]
        for f in ("sda", "scl"):
            out.append(Conn(o[f], f"parts.oled.{f}", "oled", f.upper(), "in/out", "direct",
                            f"I2C 0x{o['addr']:02X}, SSD1306 {o['width']}×{o['height']}, module pull-ups"))
    if "rfid" in parts:
        r = parts["rfid"]
        names = {"sck": "SCK", "mosi": "MOSI", "miso": "MISO", "cs": "SDA (CS)", "rst": "RST"}
        for f in ("sck", "mosi", "miso", "cs", "rst"):
            note = f"SPI {spi_mhz(r)} MHz" if f == "sck" else ""
            out.append(Conn(r[f], f"parts.rfid.{f}", "rfid", names[f], "in" if f == "miso" else "out",
                            "direct", note or "MFRC522 module, 3.3 V only"))
    if "piezo" in parts:
        pz = parts["piezo"]
        if pz["mode"] == "analog":
            out.append(Conn(pz["pin"], "parts.piezo.pin", "piezo", "piezo (ADC1)", "analog in",
                            "10 kΩ series, BAT54S clamps", "piezo disc with 1 MΩ bleed, biased to 1.65 V"))
        else:
            out.append(Conn(pz["pin"], "parts.piezo.pin", "piezo", "vibration DO", "in",
                            "direct", "LM393 comparator module on 3V3, threshold by its trimmer"))
    if jumper:
        tgt = board["buttons"][jumper["player"] - 1]
        out.append(Conn(jumper["out"], "parts.jumper.out", "jumper", f"jumper to P{jumper['player']}", "out",
                        "1 kΩ + 2-pin header", f"to P{jumper['player']} button ({gpio(tgt)}); remove to play"))
    return out


# ---------------------------------------------------------------- SVG
