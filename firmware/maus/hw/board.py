# Board definitions: boards/<name>.json says which pin does what and which parts are fitted.
# Pure module: the unit checks its board at boot, the host checks boards and draws schematics.
# Format and rules: docs/boards.md.
import json

from micropython import const

_MIN_PLAYERS = const(2)
_MAX_PLAYERS = const(6)

# What the firmware does with a pin.
OUT = const(0)  # drives it: LED data, buzzer, SPI SCK/MOSI/CS, RST, I2C, jumper
IN = const(1)  # reads a driven signal: MISO, comparator output
BUTTON = const(2)  # input with a pull-up, switch to GND
ADC = const(3)  # analog input

FAMILIES = ("esp32", "esp32s3", "sim")
PARTS = ("leds", "buzzer", "oled", "rfid", "piezo", "jumper")

# part -> pin fields in wiring order
_PINS = {
    "leds": (("pin", OUT),),
    "buzzer": (("pin", OUT),),
    "oled": (("sda", OUT), ("scl", OUT)),
    "rfid": (("sck", OUT), ("mosi", OUT), ("miso", IN), ("cs", OUT), ("rst", OUT)),
    "piezo": (("pin", ADC),),  # IN in digital mode
    "jumper": (("out", OUT),),
}
# part -> other fields and their allowed values
_CHOICES = {
    "leds": (("type", ("ws2812",)),),
    "oled": (("addr", (60, 61)), ("width", (128,)), ("height", (32, 64))),  # 0x3C, 0x3D
    "piezo": (("mode", ("analog", "digital")),),
}
# part -> integer fields and their range
_RANGES = {
    # MFRC522 SPI clock: up to 10 Mbit/s (datasheet 8.1.2); optional, default drivers.mfrc522.SPI_HZ (4 MHz)
    "rfid": (("baud", 100000, 10000000),),
    "jumper": (("player", 1, _MAX_PLAYERS),),
}
# top-level field -> allowed values (None: any string)
_TOP = (
    ("name", None),
    ("title", None),
    ("family", FAMILIES),
    ("capture", ("irq", "poll")),
    ("pull", ("internal", "external")),
)
_KNOWN = ("name", "title", "family", "capture", "pull", "players", "buttons", "parts",
          "module", "psram", "usb_serial", "notes")  # the last four are optional
_PSRAM = {"esp32": ("none", "quad"), "esp32s3": ("none", "quad", "octal")}
# The module on the dev board -> (family, PSRAM): the PSRAM takes pins and decides which MicroPython
# image drives it (mausbox flash). Espressif's datasheets: WROOM-32x has none, WROVER-x 4-8 MB quad
# SPI PSRAM on GPIO16/17; S3-WROOM-1-NxRy has y MB PSRAM, R2 quad, R8 octal (GPIO33-37).
MODULES = {
    "ESP32-WROOM-32": ("esp32", "none"),
    "ESP32-WROOM-32D": ("esp32", "none"),
    "ESP32-WROOM-32E": ("esp32", "none"),
    "ESP32-WROOM-32UE": ("esp32", "none"),
    "ESP32-WROVER-B": ("esp32", "quad"),
    "ESP32-WROVER-E": ("esp32", "quad"),
    "ESP32-WROVER-IE": ("esp32", "quad"),
    "ESP32-S3-WROOM-1-N8": ("esp32s3", "none"),
    "ESP32-S3-WROOM-1-N16": ("esp32s3", "none"),
    "ESP32-S3-WROOM-1-N4R2": ("esp32s3", "quad"),
    "ESP32-S3-WROOM-1-N8R2": ("esp32s3", "quad"),
    "ESP32-S3-WROOM-1-N8R8": ("esp32s3", "octal"),
    "ESP32-S3-WROOM-1-N16R8": ("esp32s3", "octal"),
}


def load(path):
    # The board as a dict; ValueError names the file when it is not JSON.
    with open(path) as f:
        try:
            return json.load(f)
        except ValueError:
            raise ValueError("%s: not valid JSON" % path) from None


def _modules(fam):
    return ", ".join(k for k in sorted(MODULES) if MODULES[k][0] == fam)


def _isint(v):
    return type(v) is int  # not bool


def psram(board):
    # The board's "psram", else its module's; a board without either: none on esp32, octal on esp32s3
    # (the pins octal PSRAM takes stay off limits when in doubt).
    if "psram" in board:
        return board["psram"]
    m = MODULES.get(board.get("module"))
    if m is not None and m[0] == board.get("family"):
        return m[1]
    return "octal" if board.get("family") == "esp32s3" else "none"


def piezo_mode(board):
    p = board.get("parts", {}).get("piezo")
    return p.get("mode") if isinstance(p, dict) else None


def pins(board):
    # [(where, pin, role)] for every pin field that holds an integer, in wiring order.
    out = []
    buttons = board.get("buttons")
    if isinstance(buttons, list):
        for i, p in enumerate(buttons):
            if _isint(p):
                out.append(("buttons[%d] (player %d)" % (i, i + 1), p, BUTTON))
    parts = board.get("parts")
    if not isinstance(parts, dict):
        return out
    for part in PARTS:
        spec = parts.get(part)
        if not isinstance(spec, dict):
            continue
        for field, role in _PINS[part]:
            p = spec.get(field)
            if _isint(p):
                if part == "piezo" and spec.get("mode") == "digital":
                    role = IN
                out.append(("parts.%s.%s" % (part, field), p, role))
    return out


def _fields(board, errs):
    for key, allowed in _TOP:
        v = board.get(key)
        if not isinstance(v, str) or not v:
            errs.append("%s: required, a non-empty string" % key)
        elif allowed and v not in allowed:
            errs.append("%s: %r is not one of %s" % (key, v, ", ".join(allowed)))
    name = board.get("name")
    if isinstance(name, str):
        for c in name:
            if not ("a" <= c <= "z" or "0" <= c <= "9" or c == "-"):
                errs.append("name: %r may hold only a-z, 0-9 and -" % name)
                break
    for key in board:
        if key not in _KNOWN:
            errs.append("%s: unknown field" % key)
    fam = board.get("family")
    if "psram" in board:
        ok = _PSRAM.get(fam, ())
        if board["psram"] not in ok:
            errs.append("psram: %r is not one of %s for %s" % (board["psram"], ", ".join(ok) or "(none)", fam))
    if "usb_serial" in board and (fam != "esp32s3" or type(board["usb_serial"]) is not bool):
        errs.append("usb_serial: true or false, for family esp32s3 only")
    for key in ("module", "notes"):
        if key in board and not isinstance(board[key], str):
            errs.append("%s: must be a string" % key)
    mod = board.get("module")
    if fam in _PSRAM and (mod is None or isinstance(mod, str)):
        m = MODULES.get(mod)
        if mod is None:
            errs.append("module: required for %s, one of %s" % (fam, _modules(fam)))
        elif m is None:
            errs.append("module: %r is not a known module, one of %s" % (mod, _modules(fam)))
        elif m[0] != fam:
            errs.append("module: %s is an %s module, not %s" % (mod, m[0], fam))
        elif "psram" in board and board["psram"] != m[1]:
            errs.append("psram: %r, but the %s has %s PSRAM" % (board["psram"], mod, m[1]))
    players = board.get("players")
    if not _isint(players) or not _MIN_PLAYERS <= players <= _MAX_PLAYERS:
        errs.append("players: must be a whole number %d-%d" % (_MIN_PLAYERS, _MAX_PLAYERS))
        players = None
    buttons = board.get("buttons")
    if not isinstance(buttons, list):
        errs.append("buttons: required, a list of pins (player 1 first)")
    else:
        for i, p in enumerate(buttons):
            if not _isint(p):
                errs.append("buttons[%d] (player %d): must be a pin number" % (i, i + 1))
        if players is not None and len(buttons) != players:
            errs.append("buttons: %d listed but players is %d (one button per player)" % (len(buttons), players))
    parts = board.get("parts")
    if not isinstance(parts, dict):
        errs.append("parts: required, an object (may be empty)")
        return
    for part in parts:
        spec = parts[part]
        if part not in _PINS:
            errs.append("parts.%s: unknown part (known: %s)" % (part, ", ".join(PARTS)))
            continue
        if not isinstance(spec, dict):
            errs.append("parts.%s: must be an object" % part)
            continue
        known = [f for f, _ in _PINS[part]]
        for field, _ in _PINS[part]:
            if not _isint(spec.get(field)):
                errs.append("parts.%s.%s: required, a pin number" % (part, field))
        for field, values in _CHOICES.get(part, ()):
            known.append(field)
            if spec.get(field) not in values or type(spec.get(field)) is bool:
                errs.append("parts.%s.%s: %r is not one of %s"
                            % (part, field, spec.get(field), ", ".join([str(a) for a in values])))
        for field, lo, hi in _RANGES.get(part, ()):
            known.append(field)
            v = spec.get(field)
            if field in spec and (type(v) is not int or not lo <= v <= hi):  # absent: the default
                errs.append("parts.%s.%s: must be a whole number %d-%d" % (part, field, lo, hi))
        for field in spec:
            if field not in known:
                errs.append("parts.%s.%s: unknown field" % (part, field))
    j = parts.get("jumper")
    if isinstance(j, dict) and _isint(j.get("player")) and players is not None and j["player"] > players:
        errs.append("parts.jumper.player: player %d has no button (players is %d)" % (j["player"], players))


def _esp32(board, pin, role, bad):
    if not 0 <= pin <= 39 or pin in (20, 24, 28, 29, 30, 31):
        return bad.append("does not exist on the ESP32 (0-39 without 20, 24, 28-31)")
    if 6 <= pin <= 11:
        bad.append("is wired to the SPI flash (6-11), never usable")
    if pin in (0, 2, 5, 12, 15):
        bad.append("is a strapping pin (0, 2, 5, 12, 15)")
    if pin in (1, 3):
        bad.append("is UART0 TX/RX (1, 3), the USB serial REPL")
    if pin in (16, 17) and psram(board) != "none":
        bad.append("is the PSRAM clock/CS (16, 17) on WROVER modules")
    if pin >= 34:
        if role == OUT:
            bad.append("is input-only (34-39), cannot drive an output")
        if role == BUTTON and board.get("pull") == "internal":
            bad.append('has no internal pull-up (34-39): needs "pull": "external"')
        if role == BUTTON and pin in (36, 39) and piezo_mode(board) == "analog":
            bad.append("glitches while the ADC is powered (36, 39): no button with an analog piezo")
    if role == ADC and pin < 32:
        bad.append("is not an ADC1 pin (32-39); ADC2 is unusable with WiFi")


def _esp32s3(board, pin, role, bad):
    if not 0 <= pin <= 48 or 22 <= pin <= 25:
        return bad.append("does not exist on the ESP32-S3 (0-21, 26-48)")
    if 26 <= pin <= 32:
        bad.append("is wired to the SPI flash/PSRAM (26-32), never usable")
    if 33 <= pin <= 37 and psram(board) == "octal":
        bad.append("is used by octal PSRAM (33-37) on N8R8-type modules")
    if pin in (0, 3, 45, 46):
        bad.append("is a strapping pin (0, 3, 45, 46)")
    if pin in (19, 20) and board.get("usb_serial", True) is not False:
        bad.append("is USB D-/D+ (19, 20), used by the USB serial REPL")
    if pin in (43, 44):
        bad.append("is UART0 TX/RX (43, 44), wired to the USB-UART bridge")
    if role == ADC and not 1 <= pin <= 10:
        bad.append("is not an ADC1 pin (1-10); ADC2 is unusable with WiFi")


# The virtual unit runs the ESP32 board code on an emulated ESP32 (maus.sim.machine): the ESP32's pin rules.
_RULES = {"esp32": _esp32, "esp32s3": _esp32s3, "sim": _esp32}


def validate(board):
    # A list of error strings, empty when the board is good; pin errors name the GPIO and the rule.
    if not isinstance(board, dict):
        return ["board: must be a JSON object"]
    errs = []  # type: list[str]
    _fields(board, errs)
    rule = _RULES.get(board.get("family") or "")
    seen = {}  # type: dict[int, str]
    bad = []  # type: list[str]
    for where, pin, role in pins(board):
        if rule is not None:
            rule(board, pin, role, bad)
            for msg in bad:
                errs.append("%s: GPIO %d %s" % (where, pin, msg))
            bad.clear()
        if pin in seen:
            errs.append("%s: GPIO %d is already used by %s (no pin used twice)" % (where, pin, seen[pin]))
        else:
            seen[pin] = where
    return errs


def summary(board):
    # A few lines of at most 16 characters, for the boot screen.
    words = []
    parts = board.get("parts", {})
    for part, short in (("leds", "led"), ("buzzer", "bz"), ("oled", "oled"), ("rfid", "rfid"), ("jumper", "jmp")):
        if part in parts:
            words.append(short)
    mode = piezo_mode(board)
    if mode:
        words.append("piezo-" + mode[0])
    lines = [str(board.get("name", "?"))[:16],
             "%s players %s" % (board.get("players", "?"), board.get("capture", "?")),
             ("pull " + str(board.get("pull", "?")))[:16]]
    line = ""
    for w in words:
        if line and len(line) + 1 + len(w) > 16:
            lines.append(line)
            line = w
        else:
            line = line + " " + w if line else w
    if line:
        lines.append(line)
    return "\n".join(lines)
