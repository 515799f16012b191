"""The wiring diagram (wiring.svg): a small SVG writer with the schematic symbols it needs, and the drawing."""

from __future__ import annotations

from collections.abc import Callable
from xml.sax.saxutils import escape

from mausbox.schematic.parts import DEVBOARD, FAMILY_TITLE, Conn, connections, gpio, spi_mhz


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


def _module(s: Svg, y: int, h: int, title: str, rows: list[Conn], wire: Callable[[Conn, int, int], None], x0: int,
            name: str, power: tuple[str, ...], notes: tuple[str, ...]) -> None:
    """A module on a bus: its block and box, a wire per signal into it, its name and power pins inside, notes beside."""
    _block(s, y, h, title)
    bx = x0 + 200
    s.rect(bx, y + 26, 250, h - 36, "box")
    for i, c in enumerate(rows):
        wy = y + 50 + i * _ROW
        wire(c, wy, bx)
        s.text(bx + 8, wy + 4, c.signal, "t")
    s.text(bx + 110, y + 50, name, "t")
    for k, t in enumerate(power):
        s.text(bx + 110, y + 66 + 14 * k, t, "v")
    for k, t in enumerate(notes):
        s.text(bx + 270, y + 50 + 14 * k, t, "n")


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
        _module(s, y, h, f"SSD1306 OLED {o['width']}×{o['height']}, I2C address 0x{o['addr']:02X}", rows, wire, x0,
                "0.96\" OLED module", ("VCC → 3V3", "GND → GND"),
                ("Pull-ups (4.7-10 kΩ) are on the module.", "Check the silk-screen pin order:",
                 "VCC and GND swap between makers."))
        y += h + 14

    if "rfid" in by_part:
        rows = by_part["rfid"]
        h = 30 + _ROW * len(rows) + 6
        _module(s, y, h, "MFRC522 RFID reader (SPI), under the catch pad", rows, wire, x0,
                "RC522 module", ("3.3V → 3V3", "GND → GND", "IRQ: not connected"),
                ("Power from 3V3 only: 5 V destroys it.", f"SPI mode 0, {spi_mhz(parts['rfid'])} MHz; wires under 15 cm.",
                 "Antenna faces up; no metal within 2 cm."))
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
