# Board definitions and the validator: every board in boards/ is clean, each rule rejects a bad board.
import json
import os

from fwtest import raises, repo_path
from maus.hw import board


def _boards_dir():
    for d in (repo_path("boards"), "boards"):
        try:
            if any(n.endswith(".json") for n in os.listdir(d)):
                return d
        except OSError:
            pass
    raise AssertionError("boards/ not found in the checkout or the working directory")


def _names():
    return sorted(n[:-5] for n in os.listdir(_boards_dir()) if n.endswith(".json"))


def _load(name):
    return board.load(_boards_dir() + "/" + name + ".json")


def _copy(b):
    return json.loads(json.dumps(b))


def test_every_board_validates_clean():
    names = _names()
    for required in ("esp32-devkitc", "esp32-devkitc-6p", "esp32-s3-devkitc", "sim"):
        assert required in names, required
    for name in names:
        b = _load(name)
        assert board.validate(b) == [], (name, board.validate(b))
        assert b["name"] == name, (name, b["name"])


def test_boards_as_specified():
    b = _load("esp32-devkitc")
    assert b["family"] == "esp32" and b["players"] == 4
    b = _load("esp32-devkitc-6p")
    assert b["family"] == "esp32" and b["players"] == 6
    assert _load("esp32-s3-devkitc")["family"] == "esp32s3"
    b = _load("sim")
    assert b["family"] == "sim" and b["players"] == 6
    assert sorted(b["parts"]) == sorted(board.PARTS)
    assert b["parts"]["piezo"]["mode"] == "analog"


def test_every_pin_listed():
    b = _load("esp32-devkitc")
    got = [(w, p) for w, p, _ in board.pins(b)]
    assert got[0] == ("buttons[0] (player 1)", 13)
    assert ("parts.rfid.miso", 19) in got and ("parts.jumper.out", 26) in got
    assert len(got) == 4 + 1 + 1 + 2 + 5 + 1 + 1
    roles = dict((w, r) for w, _, r in board.pins(b))
    assert roles["parts.piezo.pin"] == board.ADC and roles["parts.rfid.miso"] == board.IN
    assert roles["parts.leds.pin"] == board.OUT and roles["buttons[3] (player 4)"] == board.BUTTON
    b["parts"]["piezo"]["mode"] = "digital"
    assert dict((w, r) for w, _, r in board.pins(b))["parts.piezo.pin"] == board.IN


# (base board, change, substrings one error must hold); one entry per rule.
def _set(path, value):
    def change(b):
        d = b
        keys = path.split(".")
        for k in keys[:-1]:
            d = d[int(k)] if isinstance(d, list) else d[k]
        last = keys[-1]
        if value is _DELETE:
            del d[last]
        elif isinstance(d, list):
            d[int(last)] = value
        else:
            d[last] = value
    return change


_DELETE = object()


def _all(*changes):
    def change(b):
        for c in changes:
            c(b)
    return change


_E = "esp32-devkitc"
_S3 = "esp32-s3-devkitc"
_BAD = [
    # ESP32 pins
    (_E, _set("buttons.0", 6), ("buttons[0] (player 1)", "GPIO 6 ", "SPI flash")),
    (_E, _set("parts.buzzer.pin", 11), ("parts.buzzer.pin", "GPIO 11 ", "SPI flash")),
    (_E, _set("parts.leds.pin", 0), ("parts.leds.pin", "GPIO 0 ", "strapping pin")),
    (_E, _set("parts.leds.pin", 2), ("GPIO 2 ", "strapping pin")),
    (_E, _set("parts.rfid.cs", 5), ("parts.rfid.cs", "GPIO 5 ", "strapping pin")),
    (_E, _set("buttons.1", 12), ("GPIO 12 ", "strapping pin")),
    (_E, _set("buttons.1", 15), ("GPIO 15 ", "strapping pin")),
    (_E, _set("buttons.1", 1), ("GPIO 1 ", "UART0")),
    (_E, _set("buttons.1", 3), ("GPIO 3 ", "UART0")),
    (_E, _set("parts.leds.pin", 35), ("parts.leds.pin", "GPIO 35 ", "input-only")),
    (_E, _set("parts.buzzer.pin", 36), ("parts.buzzer.pin", "GPIO 36 ", "input-only")),
    (_E, _set("parts.rfid.sck", 39), ("parts.rfid.sck", "GPIO 39 ", "input-only")),
    (_E, _set("parts.rfid.mosi", 35), ("parts.rfid.mosi", "GPIO 35 ", "input-only")),
    (_E, _set("parts.rfid.cs", 35), ("parts.rfid.cs", "GPIO 35 ", "input-only")),
    (_E, _set("parts.rfid.rst", 35), ("parts.rfid.rst", "GPIO 35 ", "input-only")),
    (_E, _set("parts.oled.sda", 35), ("parts.oled.sda", "GPIO 35 ", "input-only")),
    (_E, _set("parts.oled.scl", 35), ("parts.oled.scl", "GPIO 35 ", "input-only")),
    (_E, _set("parts.jumper.out", 35), ("parts.jumper.out", "GPIO 35 ", "input-only")),
    (_E, _set("buttons.3", 35), ("buttons[3] (player 4)", "GPIO 35 ", "no internal pull-up")),
    (_E, _all(_set("pull", "external"), _set("buttons.3", 36)), ("GPIO 36 ", "glitches while the ADC")),
    (_E, _all(_set("pull", "external"), _set("buttons.3", 39)), ("GPIO 39 ", "glitches while the ADC")),
    (_E, _all(_set("parts.jumper", _DELETE), _set("parts.piezo.pin", 26)),
     ("parts.piezo.pin", "GPIO 26 ", "not an ADC1 pin")),
    (_E, _set("buttons.0", 20), ("GPIO 20 ", "does not exist")),
    (_E, _set("buttons.0", 24), ("GPIO 24 ", "does not exist")),
    (_E, _set("buttons.0", 30), ("GPIO 30 ", "does not exist")),
    (_E, _set("buttons.0", 40), ("GPIO 40 ", "does not exist")),
    (_E, _set("buttons.0", -1), ("GPIO -1 ", "does not exist")),
    (_E, _set("psram", "quad"), ("parts.rfid.rst", "GPIO 16 ", "PSRAM")),
    (_E, _set("parts.oled.sda", 4), ("parts.oled.sda", "GPIO 4 ", "already used by parts.leds.pin")),
    (_E, _set("buttons.2", 13), ("buttons[2] (player 3)", "GPIO 13 ", "already used by buttons[0]")),
    # ESP32-S3 pins
    (_S3, _set("buttons.0", 26), ("buttons[0] (player 1)", "GPIO 26 ", "SPI flash/PSRAM")),
    (_S3, _set("buttons.0", 32), ("GPIO 32 ", "SPI flash/PSRAM")),
    (_S3, _set("buttons.0", 35), ("GPIO 35 ", "octal PSRAM")),
    (_S3, _set("parts.buzzer.pin", 0), ("GPIO 0 ", "strapping pin (0, 3, 45, 46)")),
    (_S3, _set("parts.buzzer.pin", 3), ("GPIO 3 ", "strapping pin")),
    (_S3, _set("parts.buzzer.pin", 45), ("GPIO 45 ", "strapping pin")),
    (_S3, _set("parts.buzzer.pin", 46), ("GPIO 46 ", "strapping pin")),
    (_S3, _set("parts.buzzer.pin", 19), ("parts.buzzer.pin", "GPIO 19 ", "USB D-/D+")),
    (_S3, _set("parts.buzzer.pin", 20), ("GPIO 20 ", "USB D-/D+")),
    (_S3, _set("buttons.5", 43), ("GPIO 43 ", "UART0")),
    (_S3, _set("buttons.5", 44), ("GPIO 44 ", "UART0")),
    (_S3, _set("parts.piezo.pin", 38), ("parts.piezo.pin", "GPIO 38 ", "not an ADC1 pin (1-10)")),
    (_S3, _set("buttons.0", 22), ("GPIO 22 ", "does not exist on the ESP32-S3")),
    (_S3, _set("buttons.0", 49), ("GPIO 49 ", "does not exist on the ESP32-S3")),
    (_S3, _set("parts.oled.scl", 8), ("GPIO 8 ", "already used")),
    # sim
    ("sim", _set("buttons.0", 40), ("GPIO 40 ", "does not exist on the ESP32")),  # an emulated ESP32's pins
    ("sim", _set("parts.piezo.pin", 27), ("parts.piezo.pin", "GPIO 27 ", "not an ADC1 pin")),
    ("sim", _set("parts.buzzer.pin", 13), ("parts.buzzer.pin", "GPIO 13 ", "already used by buttons[0]")),
    # fields
    (_E, _set("players", 5), ("buttons: 4 listed but players is 5",)),
    (_E, _all(_set("players", 1), _set("buttons", [13])), ("players: must be a whole number 2-6",)),
    (_E, _all(_set("players", 7), _set("buttons", [13, 14, 27, 33, 32, 35, 36])), ("players: must be",)),
    (_E, _set("players", "4"), ("players: must be a whole number",)),
    (_E, _set("players", True), ("players: must be a whole number",)),
    (_E, _set("capture", _DELETE), ("capture: required",)),
    (_E, _set("capture", "dma"), ("capture: 'dma' is not one of irq, poll",)),
    (_E, _set("pull", "up"), ("pull: 'up' is not one of",)),
    (_E, _set("family", "esp8266"), ("family: 'esp8266' is not one of",)),
    (_E, _set("name", "ESP 32"), ("name: 'ESP 32' may hold only",)),
    (_E, _set("title", 3), ("title: required",)),
    (_E, _set("buttons", 13), ("buttons: required, a list",)),
    (_E, _set("buttons.0", "13"), ("buttons[0] (player 1): must be a pin number",)),
    (_E, _set("buttons.0", True), ("buttons[0] (player 1): must be a pin number",)),
    (_E, _set("parts", []), ("parts: required",)),
    (_E, _set("parts.led", {"pin": 4}), ("parts.led: unknown part",)),
    (_E, _set("parts.buzzer", 25), ("parts.buzzer: must be an object",)),
    (_E, _set("parts.buzzer.volume", 3), ("parts.buzzer.volume: unknown field",)),
    (_E, _set("parts.rfid.cs", _DELETE), ("parts.rfid.cs: required, a pin number",)),
    (_E, _set("parts.rfid.baud", 20000000), ("parts.rfid.baud: must be a whole number",)),
    (_E, _set("parts.oled.addr", 62), ("parts.oled.addr: 62 is not one of 60, 61",)),
    (_E, _set("parts.oled.height", 48), ("parts.oled.height",)),
    (_E, _set("parts.leds.type", "apa102"), ("parts.leds.type: 'apa102' is not one of ws2812",)),
    (_E, _set("parts.piezo.mode", "loud"), ("parts.piezo.mode",)),
    (_E, _set("parts.jumper.player", 5), ("parts.jumper.player: player 5 has no button",)),
    (_E, _set("parts.jumper.player", 0), ("parts.jumper.player: must be a whole number 1-6",)),
    (_E, _set("colour", "red"), ("colour: unknown field",)),
    (_E, _set("usb_serial", False), ("usb_serial: true or false, for family esp32s3 only",)),
    (_E, _set("psram", "octal"), ("psram: 'octal' is not one of none, quad for esp32",)),
    (_S3, _set("psram", "huge"), ("psram: 'huge' is not one of",)),
    (_E, _set("module", 32), ("module: must be a string",)),
]


def test_known_bad_boards_rejected():
    for i, (base, change, want) in enumerate(_BAD):
        b = _copy(_load(base))
        change(b)
        errs = board.validate(b)
        hit = [e for e in errs if all(w in e for w in want)]
        assert hit, (i, want, errs)


def test_each_pin_error_names_pin_and_rule():
    b = _copy(_load(_E))
    b["buttons"][0] = 6
    b["parts"]["buzzer"]["pin"] = 35
    errs = board.validate(b)
    assert errs == ["buttons[0] (player 1): GPIO 6 is wired to the SPI flash (6-11), never usable",
                    "parts.buzzer.pin: GPIO 35 is input-only (34-39), cannot drive an output"], errs


def test_rules_that_a_change_makes_legal():
    # The same pins pass once the board says how they are wired.
    b = _copy(_load(_E))
    b["pull"] = "external"
    b["buttons"][3] = 35
    assert board.validate(b) == []
    b["buttons"][3] = 36
    assert board.validate(b) != []
    b["parts"]["piezo"] = {"mode": "digital", "pin": 39}
    assert board.validate(b) == [], board.validate(b)
    s3 = _copy(_load(_S3))
    s3["parts"]["buzzer"]["pin"] = 19
    s3["buttons"][0] = 35
    assert len(board.validate(s3)) == 2
    s3["usb_serial"] = False
    s3["module"] = "ESP32-S3-WROOM-1-N8R2"  # quad PSRAM: GPIO 35 is free again
    s3["psram"] = "quad"
    assert board.validate(s3) == []
    s3["parts"]["buzzer"]["pin"] = 38  # no input-only pins on the S3
    assert board.validate(s3) == []


def test_parts_are_optional():
    b = _copy(_load(_E))
    b["parts"] = {}
    assert board.validate(b) == []
    assert board.summary(b).split("\n")[-1] == "pull internal"


def test_not_an_object():
    assert board.validate([1, 2]) == ["board: must be a JSON object"]
    assert board.validate("x") == ["board: must be a JSON object"]


def test_summary_fits_the_screen():
    for name in _names():
        s = board.summary(_load(name))
        lines = s.split("\n")
        assert lines[0] == name[:16]
        assert 3 <= len(lines) <= 8
        for line in lines:
            assert len(line) <= 16, line
    s = board.summary(_load(_E))
    assert "4 players poll" in s and "rfid" in s and "piezo-a" in s


def test_load_bad_json_names_the_file():
    path = "/tmp/mausbox-test-board-bad.json"
    with open(path, "w") as f:
        f.write('{"name": "x",')
    e = raises(ValueError, board.load, path)
    assert path in str(e) and "not valid JSON" in str(e)
    os.remove(path)
    raises(OSError, board.load, "/nonexistent/board.json")


def test_the_module_is_known_and_fits_the_family_and_its_psram():
    b = _copy(_load(_E))
    assert board.psram(b) == "none"
    del b["module"]
    assert board.validate(b)[0].startswith("module: required for esp32, one of ESP32-WROOM-32")
    b["module"] = "ESP32-WROOM-99"
    assert "is not a known module" in board.validate(b)[0]
    b["module"] = "ESP32-S3-WROOM-1-N8R8"
    assert board.validate(b) == ["module: ESP32-S3-WROOM-1-N8R8 is an esp32s3 module, not esp32"]
    b["module"] = "ESP32-WROOM-32E"
    b["psram"] = "quad"
    assert board.validate(b)[0] == "psram: 'quad', but the ESP32-WROOM-32E has none PSRAM"
    b["module"] = "ESP32-WROVER-E"
    del b["psram"]
    assert board.psram(b) == "quad"  # from the module: GPIO16/17 are the PSRAM's
    assert any("16" in e for e in board.validate(b))  # this board's reader uses them: refused
