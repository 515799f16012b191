"""Wiring diagram, pin table, bill of materials and power budget, generated from a board definition.

`render(board)` returns every file of `schematics/<board>/` as text; nothing here reads the clock or the
environment, so the same board always gives the same bytes and a test can compare them with the committed
files. The board must be valid (`maus.board.validate`): the drawing trusts its pins.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from maus import board as boardmod
from maus.drivers.mfrc522 import SPI_HZ


def _spi_mhz(rfid):
    # The reader's SPI clock in MHz ("baud" is optional in a board file: the driver's default then).
    return f"{rfid.get('baud', SPI_HZ) / 1000000:g}"


FILES = ("wiring.svg", "pins.md", "bom.md", "power.md")
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
            note = f"SPI {_spi_mhz(r)} MHz" if f == "sck" else ""
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


class Svg:
    """A tiny SVG writer with the schematic symbols the diagrams need."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, s: str) -> None:
        self.items.append(s)

    def line(self, x1, y1, x2, y2, cls="w"):
        self.add(f'<line class="{cls}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')

    def path(self, d, cls="w"):
        self.add(f'<path class="{cls}" d="{d}"/>')

    def text(self, x, y, s, cls="t", anchor="start"):
        self.add(f'<text class="{cls}" x="{x}" y="{y}" text-anchor="{anchor}">{escape(s)}</text>')

    def rect(self, x, y, w, h, cls="box"):
        self.add(f'<rect class="{cls}" x="{x}" y="{y}" width="{w}" height="{h}"/>')

    def node(self, x, y):
        self.add(f'<circle class="dot" cx="{x}" cy="{y}" r="3"/>')

    def resistor_h(self, x, y, value, w=40):
        """Horizontal resistor from x to x+w on a wire at y."""
        self.rect(x + 6, y - 5, w - 12, 10, "part")
        self.line(x, y, x + 6, y)
        self.line(x + w - 6, y, x + w, y)
        self.text(x + w / 2, y - 9, value, "v", "middle")

    def resistor_v(self, x, y, value, h=40):
        """Vertical resistor from y to y+h at x."""
        self.rect(x - 5, y + 6, 10, h - 12, "part")
        self.line(x, y, x, y + 6)
        self.line(x, y + h - 6, x, y + h)
        self.text(x + 9, y + h / 2 + 4, value, "v")

    def diode_v(self, x, y1, y2, label=""):
        """Diode from y1 (anode) to y2 (cathode), vertical."""
        mid = (y1 + y2) / 2
        d = 6 if y2 > y1 else -6
        self.line(x, y1, x, mid - d)
        self.path(f"M{x - 6},{mid - d} L{x + 6},{mid - d} L{x},{mid + d} Z", "sym")
        self.line(x - 6, mid + d, x + 6, mid + d, "w")
        self.line(x, mid + d, x, y2)
        if label:
            self.text(x + 10, mid + 4, label, "v")

    def cap_v(self, x, y, h, value):
        mid = y + h / 2
        self.line(x, y, x, mid - 3)
        self.line(x - 8, mid - 3, x + 8, mid - 3, "plate")
        self.line(x - 8, mid + 3, x + 8, mid + 3, "plate")
        self.line(x, mid + 3, x, y + h)
        self.text(x + 12, mid + 4, value, "v")

    def gnd(self, x, y):
        self.line(x - 8, y, x + 8, y)
        self.line(x - 5, y + 3, x + 5, y + 3)
        self.line(x - 2, y + 6, x + 2, y + 6)

    def rail(self, x, y, name):
        """A supply net label above a wire end at (x, y)."""
        self.line(x - 7, y, x + 7, y)
        self.text(x, y - 4, name, "v", "middle")

    def switch(self, x, y, w=44):
        """Normally open push button from x to x+w."""
        self.add(f'<circle class="pin" cx="{x + 6}" cy="{y}" r="2.5"/>')
        self.add(f'<circle class="pin" cx="{x + w - 6}" cy="{y}" r="2.5"/>')
        self.line(x, y, x + 3.5, y)
        self.line(x + w - 3.5, y, x + w, y)
        self.line(x + 4, y - 8, x + w - 4, y - 8)
        self.line(x + w / 2, y - 8, x + w / 2, y - 14)

    def buffer(self, x, y, w=34):
        self.path(f"M{x},{y - 12} L{x + w},{y} L{x},{y + 12} Z", "sym")

    def piezo_v(self, x, y, h):
        mid = y + h / 2
        self.line(x, y, x, mid - 6)
        self.line(x - 10, mid - 6, x + 10, mid - 6, "plate")
        self.rect(x - 8, mid - 3, 16, 6, "part")
        self.line(x - 10, mid + 6, x + 10, mid + 6, "plate")
        self.line(x, mid + 6, x, y + h)

    def render(self, width: int, height: int, title: str) -> str:
        style = (
            "text{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif}"
            ".t{font-size:12px;fill:#222}.v{font-size:10px;fill:#444}.h{font-size:13px;font-weight:bold;fill:#222}"
            ".g{font-size:11px;font-family:'DejaVu Sans Mono',monospace;font-weight:bold;fill:#0b3d91}"
            ".n{font-size:10px;fill:#666;font-style:italic}.title{font-size:18px;font-weight:bold;fill:#111}"
            ".w{stroke:#222;stroke-width:1.4;fill:none}.plate{stroke:#222;stroke-width:2.4}"
            ".sym{stroke:#222;stroke-width:1.4;fill:#fff}.part{stroke:#222;stroke-width:1.4;fill:#fff}"
            ".box{stroke:#222;stroke-width:1.6;fill:#f4f7fb}.mcu{stroke:#0b3d91;stroke-width:2;fill:#e8eef9}"
            ".blk{stroke:#999;stroke-width:1;stroke-dasharray:5 4;fill:none}.dot{fill:#222}"
            ".pin{stroke:#222;stroke-width:1.2;fill:#fff}.wire{stroke:#0b3d91;stroke-width:1.6;fill:none}"
        )
        head = (f'<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                f'viewBox="0 0 {width} {height}">\n<title>{escape(title)}</title>\n<style>{style}</style>\n'
                f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>\n')
        return head + "\n".join(self.items) + "\n</svg>\n"


_W = 1180
_MCU_X, _MCU_W = 30, 200
_BX = 420  # blocks start here
_BW = _W - _BX - 24
_ROW = 44


def _block(svg: Svg, y: int, h: int, title: str) -> None:
    svg.add(f'<rect class="blk" x="{_BX - 14}" y="{y}" width="{_BW + 14}" height="{h}" rx="6"/>')
    svg.text(_BX, y + 17, title, "h")


def svg(board: dict) -> str:
    """The wiring diagram: the dev board on the left, one block per fitted part on the right."""
    conns = connections(board)
    parts = board.get("parts", {})
    s = Svg()
    wires: list[tuple[int, Conn]] = []  # (y, conn)
    by_part: dict[str, list[Conn]] = {}
    for c in conns:
        by_part.setdefault(c.part, []).append(c)
    y = 110
    x0 = _BX + 10  # where a wire enters a block

    def wire(c: Conn, wy: int, x_end: int) -> None:
        wires.append((wy, c))
        s.line(_MCU_X + _MCU_W, wy, x_end, wy, "wire")
        s.text(_BX - 22, wy - 5, c.signal, "v", "end")

    if "buttons" in by_part:
        rows = by_part["buttons"]
        ext = board["pull"] == "external"
        row = _ROW + (8 if ext else 0)
        h = 28 + row * len(rows)
        _block(s, y, h, f"Player buttons ({len(rows)}): arcade buttons, active low, to GND")
        for i, c in enumerate(rows):
            wy = y + 40 + i * row + (10 if ext else 0)
            wire(c, wy, x0 + 40)
            s.line(x0 + 40, wy, x0 + 140, wy)
            s.switch(x0 + 140, wy)
            s.line(x0 + 184, wy, x0 + 200, wy)
            s.line(x0 + 200, wy, x0 + 200, wy + 8)
            s.gnd(x0 + 200, wy + 8)
            s.text(x0 + 215, wy + 4, f"P{i + 1}", "t")
            if ext:
                s.node(x0 + 40, wy)
                s.line(x0 + 40, wy, x0 + 40, wy - 16)
                s.line(x0 + 40, wy - 16, x0 + 60, wy - 16)
                s.resistor_h(x0 + 60, wy - 16, "10 kΩ", 40)
                s.line(x0 + 100, wy - 16, x0 + 110, wy - 16)
                s.text(x0 + 114, wy - 12, "3V3", "v")
        note = ("External 10 kΩ pull-ups to 3V3 (needed on GPIO34-39)." if ext
                else "Internal pull-ups: nothing but the button between the GPIO and GND.")
        s.text(x0 + 260, y + 44, note, "n")
        s.text(x0 + 260, y + 60, "Debounce and glitch rejection are done in firmware.", "n")
        s.text(x0 + 260, y + 76, "Keep button wires twisted with their GND return.", "n")
        y += h + 14

    if "jumper" in by_part:
        c = by_part["jumper"][0]
        h = 30 + _ROW + 14
        _block(s, y, h, "Latency self-test jumper")
        wy = y + 44
        wire(c, wy, x0 + 40)
        s.resistor_h(x0 + 40, wy, "1 kΩ", 50)
        s.line(x0 + 90, wy, x0 + 120, wy)
        s.add(f'<circle class="pin" cx="{x0 + 124}" cy="{wy}" r="4"/>')
        s.add(f'<circle class="pin" cx="{x0 + 140}" cy="{wy}" r="4"/>')
        s.rect(x0 + 117, wy - 7, 30, 14, "blk")
        s.line(x0 + 144, wy, x0 + 180, wy)
        tgt = board["buttons"][parts["jumper"]["player"] - 1]
        s.text(x0 + 186, wy + 4, f"→ P{parts['jumper']['player']} button net ({gpio(tgt)})", "t")
        s.text(x0 + 420, wy - 6, "Header J1: fit the jumper for `latency` self-test,", "n")
        s.text(x0 + 420, wy + 8, "remove it to play. 1 kΩ guards against a short.", "n")
        y += h + 14

    if "leds" in by_part:
        c = by_part["leds"][0]
        n = board["players"]
        h = 30 + 70 + 50
        _block(s, y, h, f"WS2812 LEDs ({n}, one per player, chained)")
        wy = y + 56
        wire(c, wy, x0 + 30)
        s.buffer(x0 + 30, wy)
        s.text(x0 + 47, wy + 26, "74AHCT125", "v", "middle")
        s.text(x0 + 47, wy + 38, "1/4, VCC 5 V, /OE to GND", "v", "middle")
        s.line(x0 + 64, wy, x0 + 80, wy)
        s.resistor_h(x0 + 80, wy, "330 Ω", 50)
        lx = x0 + 150
        s.line(x0 + 130, wy, lx, wy)
        for i in range(n):
            s.rect(lx, wy - 14, 44, 28, "part")
            s.text(lx + 22, wy + 4, f"LED{i + 1}", "v", "middle")
            if i < n - 1:
                s.line(lx + 44, wy, lx + 56, wy)
            lx += 56
        s.text(x0 + 150, wy - 20, "DIN → DOUT, chained; 100 nF at each LED", "v")
        cx = lx + 30
        s.rail(cx, wy - 22, "5V")
        s.cap_v(cx, wy - 22, 44, "1000 µF 10 V")
        s.gnd(cx, wy + 22)
        s.text(x0, y + h - 12, f"LEDs on 5 V (VBUS); {n} × 60 mA at full white. See power.md. "
                               "Diode-drop alternative to the buffer: power LED1 through a 1N4001.", "n")
        y += h + 14

    if "buzzer" in by_part:
        c = by_part["buzzer"][0]
        h = 30 + 130
        _block(s, y, h, "Buzzer (PWM tones), NPN low-side switch")
        wy = y + 124
        wire(c, wy, x0 + 30)
        s.resistor_h(x0 + 30, wy, "1 kΩ", 50)
        bx = x0 + 100
        s.line(x0 + 80, wy, bx, wy)
        # NPN: base bar at bx, collector up, emitter down with arrow
        s.add(f'<circle class="pin" cx="{bx + 12}" cy="{wy}" r="16"/>')
        s.line(bx + 4, wy - 10, bx + 4, wy + 10, "plate")
        s.line(bx + 4, wy - 4, bx + 20, wy - 14)
        s.line(bx + 4, wy + 4, bx + 20, wy + 14)
        s.path(f"M{bx + 20},{wy + 14} l-7,-1 l3,-5 Z", "sym")
        s.text(bx + 34, wy + 4, "Q1 S8050 / 2N2222A", "v")
        s.line(bx + 20, wy + 14, bx + 20, wy + 24)
        s.gnd(bx + 20, wy + 24)
        s.line(bx + 20, wy - 14, bx + 20, wy - 30)
        # transducer between 5 V and collector, flyback diode across it
        s.rect(bx + 12, wy - 70, 16, 40, "part")
        s.text(bx + 20, wy - 46, "BZ", "v", "middle")
        s.line(bx + 20, wy - 70, bx + 20, wy - 84)
        s.rail(bx + 20, wy - 84, "5V")
        s.line(bx + 20, wy - 78, bx + 60, wy - 78)
        s.line(bx + 20, wy - 24, bx + 60, wy - 24)
        s.node(bx + 20, wy - 78)
        s.node(bx + 20, wy - 24)
        s.diode_v(bx + 60, wy - 24, wy - 78, "D1 1N4148 (flyback)")
        s.text(bx + 200, wy - 50, "Magnetic transducer 5 V (CEM-1203(42)): the diode is needed.", "n")
        s.text(bx + 200, wy - 36, "A passive piezo buzzer works too (diode harmless).", "n")
        s.text(bx + 200, wy - 22, "Volume: firmware PWM duty; add 47-100 Ω in series to soften.", "n")
        y += h + 14

    if "oled" in by_part:
        rows = by_part["oled"]
        o = parts["oled"]
        h = 30 + _ROW * 2 + 10
        _block(s, y, h, f"SSD1306 OLED {o['width']}×{o['height']}, I2C address 0x{o['addr']:02X}")
        bx = x0 + 200
        s.rect(bx, y + 26, 250, h - 36, "box")
        for i, c in enumerate(rows):
            wy = y + 50 + i * _ROW
            wire(c, wy, bx)
            s.text(bx + 8, wy + 4, c.signal, "t")
        s.text(bx + 110, y + 50, "0.96\" OLED module", "t")
        s.text(bx + 110, y + 66, "VCC → 3V3", "v")
        s.text(bx + 110, y + 80, "GND → GND", "v")
        s.text(bx + 270, y + 50, "Pull-ups (4.7-10 kΩ) are on the module.", "n")
        s.text(bx + 270, y + 64, "Check the silk-screen pin order:", "n")
        s.text(bx + 270, y + 78, "VCC and GND swap between makers.", "n")
        y += h + 14

    if "rfid" in by_part:
        rows = by_part["rfid"]
        h = 30 + _ROW * len(rows) + 6
        _block(s, y, h, "MFRC522 RFID reader (SPI), under the catch pad")
        bx = x0 + 200
        s.rect(bx, y + 26, 250, h - 36, "box")
        for i, c in enumerate(rows):
            wy = y + 50 + i * _ROW
            wire(c, wy, bx)
            s.text(bx + 8, wy + 4, c.signal, "t")
        s.text(bx + 110, y + 50, "RC522 module", "t")
        s.text(bx + 110, y + 66, "3.3V → 3V3", "v")
        s.text(bx + 110, y + 80, "GND → GND", "v")
        s.text(bx + 110, y + 94, "IRQ: not connected", "v")
        s.text(bx + 270, y + 50, "Power from 3V3 only: 5 V destroys it.", "n")
        s.text(bx + 270, y + 64, f"SPI mode 0, {_spi_mhz(parts['rfid'])} MHz; wires under 15 cm.", "n")
        s.text(bx + 270, y + 78, "Antenna faces up; no metal within 2 cm.", "n")
        y += h + 14

    if "piezo" in by_part:
        c = by_part["piezo"][0]
        if parts["piezo"]["mode"] == "analog":
            h = 30 + 160
            _block(s, y, h, "Piezo vibration sensor (castle), analog on ADC1, biased to mid-scale")
            wy = y + 84
            ax = x0 + 50
            wire(c, wy, ax)
            s.node(ax, wy)
            s.diode_v(ax, wy, wy - 44, "D2")
            s.rail(ax, wy - 44, "3V3")
            s.diode_v(ax, wy + 40, wy, "D3")
            s.gnd(ax, wy + 40)
            s.resistor_h(ax, wy, "10 kΩ", 60)
            nb = ax + 100
            s.line(ax + 60, wy, nb + 70, wy)
            s.node(nb, wy)
            s.resistor_v(nb, wy, "1 MΩ", 40)
            s.piezo_v(nb + 70, wy, 40)
            s.node(nb + 70, wy)
            s.text(nb + 70, wy - 8, "piezo disc 27 mm", "v", "middle")
            vb = nb + 160  # bias divider
            s.line(nb, wy + 40, vb + 70, wy + 40)
            s.node(nb + 70, wy + 40)
            s.rail(vb, wy - 50, "3V3")
            s.resistor_v(vb, wy - 50, "100 kΩ", 40)
            s.line(vb, wy - 10, vb, wy + 40)
            s.node(vb, wy + 40)
            s.resistor_v(vb, wy + 40, "100 kΩ", 40)
            s.gnd(vb, wy + 80)
            s.cap_v(vb + 70, wy + 40, 40, "10 µF")
            s.gnd(vb + 70, wy + 80)
            s.text(nb + 4, wy + 54, "VBIAS ≈ 1.65 V", "v")
            s.text(ax - 30, wy + 62, "D2, D3: BAT54S", "v")
            tx = x0 + 440
            for i, line in enumerate(("1 MΩ across the disc bleeds its charge; the",
                                      "disc rests at VBIAS, mid-scale on the ADC,",
                                      "so knocks swing both ways (and clear of the",
                                      "ADC's dead zone near 0 V). 10 kΩ limits the",
                                      "clamp current from a hard knock (tens of",
                                      "volts); BAT54S holds the pin in -0.3..3.6 V.",
                                      "Thin shielded cable to the disc.")):
                s.text(tx, y + 44 + 14 * i, line, "n")
        else:
            h = 30 + _ROW + 30
            _block(s, y, h, "Piezo vibration sensor, comparator module (digital)")
            bx = x0 + 200
            wy = y + 50
            s.rect(bx, y + 26, 220, h - 36, "box")
            wire(c, wy, bx)
            s.text(bx + 8, wy + 4, "DO", "t")
            s.text(bx + 50, wy + 4, "LM393 module, VCC → 3V3", "v")
            s.text(bx + 50, wy + 18, "piezo disc on its input", "v")
            s.text(bx + 240, wy, "Power it from 3V3 so DO stays a 3.3 V signal;", "n")
            s.text(bx + 240, wy + 14, "set the threshold with the module's trimmer.", "n")
        y += h + 14

    # the dev board, as tall as the blocks
    top = 96
    bottom = max(y - 14, top + 200)
    s.rect(_MCU_X, top, _MCU_W, bottom - top, "mcu")
    short, full = DEVBOARD[board["family"]]
    s.text(_MCU_X + 10, top + 22, short, "h")
    s.text(_MCU_X + 10, top + 38, board.get("module") or full, "v")
    for wy, c in wires:
        s.add(f'<circle class="pin" cx="{_MCU_X + _MCU_W}" cy="{wy}" r="3"/>')
        s.text(_MCU_X + _MCU_W - 8, wy + 4, gpio(c.gpio), "g", "end")
    power_y = bottom - 60
    for i, name in enumerate(("5V (VBUS)", "3V3", "GND")):
        s.text(_MCU_X + 10, power_y + i * 16, name, "g")
    s.text(_MCU_X + 10, power_y - 18, "power pins:", "v")

    s.text(30, 36, board["title"], "title")
    s.text(30, 58, f"board {board['name']} · {FAMILY_TITLE[board['family']]} · {board['players']} players · "
                   f"capture {board['capture']} · pull-ups {board['pull']}", "t")
    s.text(30, 76, f"Generated from boards/{board['name']}.json by `mausbox boards diagram`; "
                   "edit the board file, not this drawing.", "n")
    return s.render(_W, bottom + 30, f"Mausbox wiring: {board['title']}")


# ---------------------------------------------------------------- Markdown


def _table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


_CIRCUITS = {
    "buttons": """### Buttons

Each player button is a normally open arcade button (30 mm) between its GPIO and GND. {pull}
The firmware timestamps the first falling edge and rejects glitches and bounce; no capacitor is needed
(a capacitor would slow the edge and delay the timestamp).
""",
    "jumper": """### Latency jumper

{out} drives player {player}'s button net through 1 kΩ and a 2-pin header (J1). Fit the jumper only for the
latency self-test; the resistor keeps a pressed button from shorting the output.
""",
    "leds": """### WS2812 LEDs

One WS2812(B) per player, chained DIN → DOUT, powered from 5 V (VBUS). The ESP32's 3.3 V data is below the
WS2812's 0.7 × VDD = 3.5 V input threshold, so it goes through one gate of a 74AHCT125 powered from 5 V
(/OE to GND, unused inputs to GND), then a 330 Ω series resistor (300-500 Ω) into LED 1's DIN.
Alternative without the buffer: feed LED 1 from 5 V through a 1N4001 (VDD ≈ 4.3 V, threshold ≈ 3.0 V) as a
"sacrificial" level shifter. Put 1000 µF / 10 V across 5 V and GND at the first LED and 100 nF at each LED;
connect GND before 5 V. Full white is ~60 mA per LED: see power.md.
""",
    "buzzer": """### Buzzer

The GPIO drives an NPN transistor (S8050 or 2N2222A) through 1 kΩ; the transducer sits between 5 V and the
collector, emitter to GND. A magnetic transducer (CEM-1203(42)) is an inductor: a 1N4148 across it
(cathode to 5 V) takes the flyback spike. The firmware plays tones with PWM; volume is the duty cycle.
""",
    "oled": """### OLED

An SSD1306 {w}×{h} I2C module at address 0x{addr:02X}: VCC to 3V3, GND, SDA, SCL. The module carries the
I2C pull-ups. Pin order differs between makers: read the silk screen.
""",
    "rfid": """### MFRC522

An RC522 module on SPI (mode 0, up to 10 MHz, here {mhz} MHz): SCK, MOSI, MISO, SDA (= chip select) and RST as
in the table, 3.3V to 3V3 (never 5 V), GND, IRQ unconnected. Keep the wires short (< 15 cm), the antenna
facing up under the catch pad, and metal at least 2 cm away.
""",
    "piezo_analog": """### Piezo (analog)

A 27 mm piezo disc glued to the castle, with a 1 MΩ bleed resistor across it so its charge drains away.
Its low side sits on VBIAS ≈ 1.65 V (two 100 kΩ from 3V3 to GND, 10 µF to GND), so the disc rests at
mid-scale: knocks swing both ways and stay clear of the ESP32 ADC's dead zone near 0 V. A 10 kΩ series
resistor leads to the ADC1 pin, where a BAT54S (two Schottky diodes in series: one to 3V3, one to GND)
clamps the pin to -0.3..3.6 V: a hard knock makes tens of volts, and the 10 kΩ limits the clamp current
to a few mA. ADC1 because ADC2 stops working while WiFi is on. Use thin shielded cable to the disc.
""",
    "piezo_digital": """### Piezo (digital)

A vibration sensor module (piezo disc into an LM393 comparator) powered from 3V3, its DO output to the GPIO.
Its trimmer sets the threshold; the firmware then only sees on/off, no noise floor tracking.
""",
}


def pins_md(board: dict) -> str:
    conns = connections(board)
    parts = board.get("parts", {})
    rows = [[gpio(c.gpio), c.signal, c.direction, c.via, c.note, f"`{c.where}`"] for c in conns]
    out = [f"# {board['title']}: pin table\n\n",
           f"Generated from `boards/{board['name']}.json` by `mausbox boards diagram {board['name']}`; "
           "edit the board file, not this table. Wiring diagram: [wiring.svg](wiring.svg).\n\n",
           f"Family {FAMILY_TITLE[board['family']]}, {board['players']} players, capture `{board['capture']}`, "
           f"pull-ups `{board['pull']}`.\n\n",
           "## Signals\n\n",
           _table(["GPIO", "Signal", "Direction", "Via", "Notes", "Board field"], rows),
           "\n## Power\n\n"]
    prow = []
    if "leds" in parts:
        prow.append(["WS2812 LEDs, 74AHCT125", "5V (VBUS)", "1000 µF at LED 1"])
    if "buzzer" in parts:
        prow.append(["Buzzer", "5V (VBUS)", "through Q1 to GND"])
    if "oled" in parts:
        prow.append(["OLED", "3V3", ""])
    if "rfid" in parts:
        prow.append(["MFRC522", "3V3", "never 5 V"])
    if parts.get("piezo", {}).get("mode") == "digital":
        prow.append(["Comparator module", "3V3", ""])
    prow.append(["Everything", "GND", "one common ground"])
    out.append(_table(["Part", "Supply", "Notes"], prow))
    out.append("\n## Circuits\n\n")
    ext = board["pull"] == "external"
    out.append(_CIRCUITS["buttons"].format(
        pull="A 10 kΩ resistor from each button GPIO to 3V3 is the pull-up (`pull: external`)." if ext
        else "The GPIO's internal pull-up holds it high (`pull: internal`)."))
    if "jumper" in parts:
        out.append("\n" + _CIRCUITS["jumper"].format(out=gpio(parts["jumper"]["out"]),
                                                   player=parts["jumper"]["player"]))
    for key in ("leds", "buzzer"):
        if key in parts:
            out.append("\n" + _CIRCUITS[key])
    if "oled" in parts:
        o = parts["oled"]
        out.append("\n" + _CIRCUITS["oled"].format(w=o["width"], h=o["height"], addr=o["addr"]))
    if "rfid" in parts:
        out.append("\n" + _CIRCUITS["rfid"].format(mhz=_spi_mhz(parts["rfid"])))
    if "piezo" in parts:
        out.append("\n" + _CIRCUITS["piezo_" + parts["piezo"]["mode"]])
    return "".join(out)


CARD_STICKERS = 99 + 23 + 3  # Mausgeflippt 32+58+9, M is for Mouse 23, one game card per game


def bom(board: dict) -> list[dict]:
    """Bill of materials: one dict per line (qty, part, typical, ref)."""
    parts = board.get("parts", {})
    n = board["players"]
    fam = board["family"]
    rows = [{"qty": 1, "part": DEVBOARD[fam][0] + " development board", "typical": DEVBOARD[fam][1], "ref": "U1"}]
    rows.append({"qty": n, "part": "Arcade push button, 30 mm, normally open",
                 "typical": "Sanwa OBSF-30 or generic 30 mm", "ref": "SW1-SW%d" % n})
    if board["pull"] == "external":
        rows.append({"qty": n, "part": "Resistor 10 kΩ 1/4 W (button pull-ups)", "typical": "CF14JT10K0",
                     "ref": "R pull-up"})
    if "leds" in parts:
        rows += [
            {"qty": n, "part": "WS2812B LED on a breakout (with 100 nF)", "typical": "WS2812B-5050, e.g. Adafruit 1612",
             "ref": "LED1-LED%d" % n},
            {"qty": 1, "part": "Quad buffer, 5 V, TTL inputs", "typical": "SN74AHCT125N (DIP-14)", "ref": "U2"},
            {"qty": 1, "part": "Resistor 330 Ω 1/4 W (LED data)", "typical": "CF14JT330R", "ref": "R1"},
            {"qty": 1, "part": "Electrolytic capacitor 1000 µF 10 V", "typical": "Panasonic EEU-FR1A102", "ref": "C1"},
        ]
    if "buzzer" in parts:
        rows += [
            {"qty": 1, "part": "Magnetic buzzer (transducer) 5 V, 12 mm", "typical": "CUI CEM-1203(42)", "ref": "BZ1"},
            {"qty": 1, "part": "NPN transistor", "typical": "S8050 or 2N2222A (TO-92)", "ref": "Q1"},
            {"qty": 1, "part": "Resistor 1 kΩ 1/4 W (base)", "typical": "CF14JT1K00", "ref": "R2"},
            {"qty": 1, "part": "Diode (flyback)", "typical": "1N4148", "ref": "D1"},
        ]
    if "oled" in parts:
        o = parts["oled"]
        rows.append({"qty": 1, "part": f"OLED module {o['width']}×{o['height']} I2C, SSD1306",
                     "typical": "0.96\" SSD1306 I2C module (4 pin)", "ref": "DISP1"})
    if "rfid" in parts:
        rows.append({"qty": 1, "part": "RFID reader module 13.56 MHz, SPI", "typical": "RC522 (NXP MFRC522) module",
                     "ref": "RF1"})
        rows.append({"qty": CARD_STICKERS, "part": "NFC stickers, one card set", "typical": "NTAG213, 25 mm round",
                     "ref": "cards"})
    if "piezo" in parts:
        if parts["piezo"]["mode"] == "analog":
            rows += [
                {"qty": 1, "part": "Piezo disc 27 mm with leads", "typical": "Murata 7BB-27-4L0", "ref": "PZ1"},
                {"qty": 1, "part": "Resistor 1 MΩ 1/4 W (bleed)", "typical": "CF14JT1M00", "ref": "R3"},
                {"qty": 2, "part": "Resistor 100 kΩ 1/4 W (bias divider)", "typical": "CF14JT100K", "ref": "R6, R7"},
                {"qty": 1, "part": "Capacitor 10 µF 10 V (bias)", "typical": "electrolytic or X5R ceramic",
                 "ref": "C2"},
                {"qty": 1, "part": "Resistor 10 kΩ 1/4 W (series)", "typical": "CF14JT10K0", "ref": "R4"},
                {"qty": 1, "part": "Dual Schottky diode, series (clamps)", "typical": "BAT54S (SOT-23 on adapter)",
                 "ref": "D2, D3"},
            ]
        else:
            rows.append({"qty": 1, "part": "Piezo vibration module, LM393 comparator",
                         "typical": "generic 'piezo vibration sensor module' (3.3-5 V)", "ref": "PZ1"})
    if "jumper" in parts:
        rows += [
            {"qty": 1, "part": "Resistor 1 kΩ 1/4 W (jumper)", "typical": "CF14JT1K00", "ref": "R5"},
            {"qty": 1, "part": "Pin header 1×2 and jumper cap", "typical": "2.54 mm", "ref": "J1"},
        ]
    rows += [
        {"qty": 1, "part": "USB cable, data capable", "typical": "USB-A to micro-B / USB-C as the board needs",
         "ref": ""},
        {"qty": 1, "part": "Perfboard, wire, headers, enclosure", "typical": "", "ref": ""},
    ]
    if fam == "sim":
        rows = [{"qty": 0, "part": "Nothing to buy: the virtual unit simulates every part",
                 "typical": "`mausbox sim`", "ref": ""}]
    return rows


def bom_md(board: dict) -> str:
    rows = [[str(r["qty"]), r["part"], r["typical"], r["ref"]] for r in bom(board)]
    return (f"# {board['title']}: bill of materials\n\n"
            f"Generated from `boards/{board['name']}.json`. Part numbers are typical: any equivalent works.\n\n"
            + _table(["Qty", "Part", "Typical part number", "Ref"], rows))


def power(board: dict) -> dict:
    """Current budget in mA against the USB limit, with WiFi off and on."""
    parts = board.get("parts", {})
    off, on = MCU_MA[board["family"]]
    loads = []
    if "leds" in parts:
        loads.append((f"WS2812 × {board['players']} at full white (60 mA each)", LED_MA * board["players"]))
    for key, label in (("rfid", "MFRC522 reading"), ("oled", "SSD1306 OLED, all pixels on"),
                       ("buzzer", "Buzzer sounding")):
        if key in parts:
            loads.append((label, PART_MA[key]))
    if parts.get("piezo", {}).get("mode") == "digital":
        loads.append(("Comparator module", PART_MA["piezo_digital"]))
    others = sum(ma for _, ma in loads)
    led = LED_MA * board["players"] if "leds" in parts else 0
    res = {"limit_ma": USB_LIMIT_MA, "mcu_wifi_off_ma": off, "mcu_wifi_on_ma": on, "loads": loads,
           "total_wifi_off_ma": off + others, "total_wifi_on_ma": on + others}
    for k, mcu in (("wifi_off", off), ("wifi_on", on)):
        room = USB_LIMIT_MA - mcu - (others - led)
        res[f"led_max_brightness_{k}_pct"] = (max(0, min(100, room * 100 // led)) if led else 100)
    return res


def power_md(board: dict) -> str:
    p = power(board)
    fam = FAMILY_TITLE[board["family"]]
    rows = [[f"{fam}, CPU 240 MHz (WiFi off / WiFi on, TX peak)", str(p["mcu_wifi_off_ma"]),
             str(p["mcu_wifi_on_ma"])]]
    rows += [[label, str(ma), str(ma)] for label, ma in p["loads"]]
    rows.append(["**Total**", f"**{p['total_wifi_off_ma']}**", f"**{p['total_wifi_on_ma']}**"])
    rows.append(["USB 2.0 port limit", str(USB_LIMIT_MA), str(USB_LIMIT_MA)])
    out = [f"# {board['title']}: power budget\n\n",
           f"Generated from `boards/{board['name']}.json`. Worst-case typical currents in mA, everything on at once.\n\n"]
    if board["family"] == "sim":
        out.append("The virtual unit draws nothing; these are the figures an ESP32 build of this board would draw.\n\n")
    out += [
           _table(["Load", "WiFi off", "WiFi on"], rows), "\n"]
    for k, name in (("wifi_off", "WiFi off"), ("wifi_on", "WiFi on")):
        tot = p[f"total_{k}_ma"]
        verdict = "within" if tot <= USB_LIMIT_MA else f"**over by {tot - USB_LIMIT_MA} mA**"
        out.append(f"- {name}: {tot} mA, {verdict} the {USB_LIMIT_MA} mA a USB port must supply. "
                   f"LED brightness that fits: {p[f'led_max_brightness_{k}_pct']} % of full white.\n")
    out.append("\nThe firmware never lights every LED full white: player colours are single channels (20 mA) "
               "at reduced brightness. If you raise brightness or add LEDs, use a 5 V 2 A USB power supply, "
               "not a laptop port. Mausbox does not use WiFi during games.\n")
    return "".join(out)


def render(board: dict) -> dict[str, str]:
    """Every generated file of one board, by file name."""
    errs = boardmod.validate(board)
    if errs:
        raise ValueError(f"board {board.get('name', '?')} is not valid: " + "; ".join(errs))
    return {"wiring.svg": svg(board), "pins.md": pins_md(board), "bom.md": bom_md(board),
            "power.md": power_md(board)}


def write(board: dict, out_dir: Path) -> list[Path]:
    """Write the board's files into out_dir/<name>/ (each through a temp file and rename)."""
    files = render(board)
    d = Path(out_dir) / board["name"]
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = d / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


def stale(board: dict, out_dir: Path) -> list[str]:
    """Files in out_dir/<name>/ that differ from what the board generates now."""
    d = Path(out_dir) / board["name"]
    out = []
    for name, text in render(board).items():
        path = d / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out.append(str(path))
    return out


def load_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
