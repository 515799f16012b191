"""The board's text documents: the pin table (pins.md), the bill of materials (bom.md) and the power budget
(power.md)."""

from __future__ import annotations

from mausbox.schematic.parts import (
    DEVBOARD,
    FAMILY_TITLE,
    LED_MA,
    MCU_MA,
    PART_MA,
    USB_LIMIT_MA,
    connections,
    gpio,
    spi_mhz,
)


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
        out.append("\n" + _CIRCUITS["rfid"].format(mhz=spi_mhz(parts["rfid"])))
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
