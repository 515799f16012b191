# The bring-up check: the first power-up of a unit someone has just soldered, part by part (docs/build.md,
# "First power-up"). Each part gets a pass/fail, and a failure a hint naming its pins from the board file.
# It ends with a one-screen summary, saved as bringup.json (pulled with the logs, shown by `mausbox doctor
# --hardware`). From the menu ("Bring-up check") or the host (`mausbox doctor --hardware`); loaded for its
# moment only (maus.moment) and let go again.
#
# The parts, in order: each player's button (a press on another player's pin names the swap), each LED in
# its colour and the buzzer (shown: the person looks and listens), any card (UID and type), a knock on the
# castle (the piezo's level), the OLED's test pattern, and the latency self-test where the jumper is fitted.
import json

from maus.checks.selftest import pins
from maus.ticks import ticks_diff

OK = "ok"
FAIL = "FAIL"
LOOK = "look"  # shown or sounded: only the person can tell (the LED's data line and the buzzer have no read-back)
SKIP = "skip"  # not fitted on this board
FILE = "bringup.json"

wait_ms = 15000  # a press, a card or a knock: the person has this long
knock_level = 4000  # a knock lifts the piezo this far over its baseline (ADC counts of 65535)
stuck_high = 64000  # a baseline above this: the input is tied to 3.3 V (or floats high)


class Check:
    def __init__(self, u, say=None):
        self.u = u
        self.hw = u.hw
        self.board = u.hw.board
        self.parts = self.board.get("parts", {})
        self.results = []  # [part, result, detail, hint]
        self._say = say

    def say(self, msg):
        self.u.fb.text(msg)
        self.u.fb.update(self.hw.ticks_ms())
        print("BRINGUP ask", msg)
        if self._say is not None:
            self._say("? " + msg)

    def result(self, part, res, detail, hint=""):
        self.results.append([part, res, detail, hint if res == FAIL else ""])
        line = "%s %s: %s%s" % (res, part, detail, (" -> " + hint) if res == FAIL and hint else "")
        print("BRINGUP", line)
        if self._say is not None:
            self._say(line)

    def _wait(self, ms, done):
        # Until done() is true or ms passed, feeding the watchdog; -> done()'s last value.
        hw = self.hw
        t0 = hw.ticks_ms()
        while True:
            v = done()
            if v:
                return v
            if ticks_diff(hw.ticks_ms(), t0) >= ms:
                return v
            hw.wdt_feed()
            hw.idle(5)

    # --- the parts ----------------------------------------------------------------------------------------
    def buttons(self):
        hw = self.hw
        gpio = self.board.get("buttons", [])
        for i in range(len(hw.buttons)):
            p = i + 1
            self._released()
            self.say("Bring-up: press P%d's button" % p)
            low = self._wait(wait_ms, self._low)
            if low == p:
                self.result("button%d" % p, OK, "P%d on GPIO %s" % (p, gpio[i]))
            elif low:
                self.result("button%d" % p, FAIL, "P%d's press came on GPIO %s (P%d's pin), not on GPIO %s"
                            % (p, gpio[low - 1], low, gpio[i]),
                            "the wires of P%d and P%d are swapped: P%d goes to GPIO %s, P%d to GPIO %s"
                            % (p, low, p, gpio[i], low, gpio[low - 1]))
            else:
                self.result("button%d" % p, FAIL, "no press on GPIO %s" % gpio[i],
                            "check P%d's button: one leg to GPIO %s, the other to GND" % (p, gpio[i]))

    def _low(self):
        # The player whose pin is low now (the first), or 0.
        for i, pin in enumerate(self.hw.buttons):
            if not pin.value():
                return i + 1
        return 0

    def _released(self):
        self._wait(2000, lambda: not self._low())

    def leds(self):
        if self.hw.leds is None:
            self.result("leds", SKIP, "no LEDs on this board")
            return
        fb = self.u.fb
        names = []
        for p in range(1, len(self.hw.buttons) + 1):
            fb.led(0, "off")
            fb.led(p, _COLOURS[p])
            self.say("Bring-up: LED %d should light %s" % (p, _COLOURS[p]))
            self._wait(800, lambda: False)
            names.append("%d %s" % (p, _COLOURS[p]))
        fb.led(0, "off")
        fb.update(self.hw.ticks_ms())
        self.result("leds", LOOK, "lit in turn: " + ", ".join(names),
                    "a dark or wrong LED: check the data line (GPIO %s), 5 V and GND" % self.parts["leds"].get("pin"))

    def buzzer(self):
        if self.hw.buzzer is None:
            self.result("buzzer", SKIP, "no buzzer on this board")
            return
        self.say("Bring-up: listen to the buzzer")
        self.u.fb.sound("ok")
        self._wait(1200, lambda: self.u.fb.update(self.hw.ticks_ms()) and False)
        self.result("buzzer", LOOK, "played a tune on GPIO %s (silent: check the buzzer's pin and GND)"
                    % self.parts["buzzer"].get("pin"))

    def card(self):
        if "rfid" not in self.parts:
            self.result("card", SKIP, "no reader on this board")
            return
        where = "pins " + pins(self.board, "rfid", ("sck", "mosi", "miso", "cs", "rst"))
        r = getattr(self.u, "reader", None)
        if r is None or not (r.ok or r.init()):
            v = r.version() if r is not None else 0
            self.result("card", FAIL, "RFID reader not found" if v in (0, 0xFF) else
                        "RFID reader 0x%02X answers but refuses its configuration" % v,
                        "check SPI wiring, " + where + ", and its 3.3 V")
            return
        self.say("Bring-up: tap any card on the pad")
        got = []

        def on_card(uid, n, sak):
            from maus.drivers import tagtype

            t = tagtype.identify(r, sak)
            got.append(("".join("%02X" % uid[i] for i in range(n)), _TYPES[t] if t < len(_TYPES) else "?"))

        self._wait(wait_ms, lambda: r.scan(on_card) or got)
        if got:
            self.result("card", OK, "UID %s, %s" % got[0])
        else:
            self.result("card", FAIL, "no card read in %d s" % (wait_ms // 1000),
                        "the reader answers: hold the card flat on the pad; still nothing: the antenna, " + where)

    def piezo(self):
        adc = self.hw.adc
        if adc is None:
            self.result("piezo", SKIP, "no analog piezo on this board")
            return
        pin = self.parts.get("piezo", {}).get("pin")
        total = 0
        for _ in range(32):
            total += adc.read_u16()
        base = total // 32
        if base >= stuck_high:
            self.result("piezo", FAIL, "input stuck high (%d of 65535)" % base,
                        "GPIO %s reads 3.3 V: the bleed resistor (1 MOhm to GND) is missing or the disc's wire "
                        "touches 3.3 V" % pin)
            return
        self.say("Bring-up: knock the castle")
        peak = [0]

        def knocked():
            for _ in range(100):  # a knock rings for tens of ms: sampled between the waits' idles
                v = adc.read_u16() - base
                if v < 0:
                    v = -v
                if v > peak[0]:
                    peak[0] = v
            return peak[0] >= knock_level

        self._wait(wait_ms, knocked)
        if peak[0] >= knock_level:
            self.result("piezo", OK, "baseline %d, knock +%d" % (base, peak[0]))
        else:
            self.result("piezo", FAIL, "baseline %d, no knock seen (at most +%d)" % (base, peak[0]),
                        "check the piezo disc's cable to GPIO %s and GND" % pin)

    def oled(self):
        if "oled" not in self.parts:
            self.result("oled", SKIP, "no display on this board")
            return
        o = self.parts["oled"]
        d = self.hw.display
        if d is None:
            self.result("oled", FAIL, "no display answered on I2C",
                        "check SDA (GPIO %s), SCL (GPIO %s), 3.3 V and GND; address %s" % (o.get("sda"), o.get("scl"),
                                                                                    o.get("addr", 60)))
            return
        w = o.get("width", 128)
        h = o.get("height", 64)
        d.fill(0)
        d.rect(0, 0, w, h, 1)
        for x in range(0, w, 8):
            d.fill_rect(x, 8, 4, 4, 1)
        d.text("Mausbox", 4, 24, 1)
        d.show()
        self._wait(1500, lambda: False)
        self.result("oled", LOOK, "test pattern shown: a frame, a row of squares and 'Mausbox'")

    def latency(self):
        if self.hw.jumper is None:
            self.result("latency", SKIP, "no jumper fitted")
            return
        from maus.checks import latency

        self.say("Bring-up: latency self-test through the jumper")
        res = latency.latency(self.hw, self.u, 5)
        if res is None:
            self.result("latency", FAIL, "no edge came through the jumper",
                        "fit the jumper between GPIO %s and P1's button" % self.parts["jumper"].get("out"))
        else:
            self.result("latency", OK, "capture error median %d us, max %d us (%s)" % (res["med"], res["max"], res["mode"]))

    # --- all of it ------------------------------------------------------------------------------------------
    def run(self):
        for step in (self.buttons, self.leds, self.buzzer, self.card, self.piezo, self.oled, self.latency):
            try:
                step()
            except Exception as e:  # noqa: BLE001 - one part's fault must not end the check
                self.result(step.__name__, FAIL, "the check itself failed: %r" % e)
            self.hw.wdt_feed()
        return self.summary()

    def summary(self):
        bad = [r for r in self.results if r[1] == FAIL]
        lines = ["Bring-up: %d fail" % len(bad) if bad else "Bring-up: all ok"]
        for r in self.results:
            if r[1] != SKIP:
                lines.append("%s %s" % (r[1], r[0]))
        self.u.fb.text("\n".join(lines[:8]))
        self.u.fb.update(self.hw.ticks_ms())
        out = {"passed": not bad, "parts": [{"part": r[0], "result": r[1], "detail": r[2], "hint": r[3]}
                                        for r in self.results], "board": self.board.get("name")}
        try:
            from maus import write_atomic

            write_atomic(FILE, json.dumps(out))
        except OSError:
            pass
        print("BRINGUP done", "ok" if not bad else "%d fail" % len(bad))
        return out


_COLOURS = ("", "red", "blue", "green", "yellow", "purple", "cyan")  # maus.games.base's player colours
_TYPES = ("unknown", "NTAG213", "NTAG215", "NTAG216", "NTAG", "Ultralight EV1", "Ultralight", "MIFARE Classic 1K",
          "MIFARE Classic 4K", "MIFARE Classic Mini", "ISO 14443-4")


def run(u, say=None):
    """The whole check on unit u; -> the summary (also in bringup.json)."""
    return Check(u, say).run()
