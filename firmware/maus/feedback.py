# One place for everything the players see and hear: display, LEDs, buzzer.
#
# Nothing here touches the hardware during a race window: the runtime calls update() only outside
# races, so a display refresh (~23 ms of I2C on the ESP32) can never delay a press's IRQ handler.
from micropython import const

from maus.ticks import ticks_diff

# LED colours: the names, and their (r, g, b) three bytes each in the same order.
_COLOURS = const(("off", "red", "blue", "green", "yellow", "purple", "cyan", "white", "orange"))
_RGB = const(b"\x00\x00\x00\xff\x00\x00\x00\x3c\xff\x00\xff\x00\xff\xb4\x00\xa0\x00\xff\x00\xff\xc8"
             b"\xff\xff\xff\xff\x50\x00")

# Tunes: the names, and each one's notes as frequency (Hz, 0 = rest), ms, frequency, ms, ...
_TUNES = const(("start", "reveal", "ok", "wrong", "cheese", "alarm", "tick", "win", "error", "prompt", "join"))
_NOTES = const((
    (523, 90, 659, 90, 784, 140),
    (880, 40),
    (784, 80, 1047, 140),
    (220, 200, 0, 40, 196, 260),
    (330, 120, 262, 120, 196, 260),
    (1400, 80, 0, 40, 1400, 80, 0, 40, 1400, 160),
    (1200, 15),
    (523, 100, 659, 100, 784, 100, 1047, 300),
    (150, 300),
    (660, 60),
    (700, 60, 900, 60),
))

_VOLUME = const((0, 1500, 6000, 20000))  # duty_u16 by volume setting 0..3


def wrap(text, width=16):
    """Display lines: breaks at "\n", and lines longer than width at their last space."""
    lines = []
    for part in text.split("\n"):
        while len(part) > width:
            cut = part.rfind(" ", 0, width + 1)
            if cut <= 0:
                cut = width
            lines.append(part[:cut])
            part = part[cut:].lstrip()
        lines.append(part)
    return lines


class Feedback:
    def __init__(self, hw, settings):
        self.hw = hw
        self.settings = settings
        self.lines = []
        self._dirty = False
        self._led = [("off", "on")] * (len(hw.buttons) + 1)  # (colour, mode) by player id; 0 unused
        self._led_dirty = True
        self._blink_on = True
        self._blink_at = 0
        self._tune = None
        self._tune_i = 0
        self._tune_at = 0
        self.console = False  # True: prompt lines go to the serial console too

    # --- what to show ------------------------------------------------------------------------------
    def text(self, text):
        self.lines = wrap(text)[:8]
        self._dirty = True
        if self.console:
            print("SAY", " | ".join(self.lines))

    def led(self, player, colour, mode="on"):
        if colour is None:
            colour = "off"
        if player == 0:
            for i in range(1, len(self._led)):
                self._led[i] = (colour, mode)
        elif 1 <= player < len(self._led):
            self._led[player] = (colour, mode)
        self._led_dirty = True

    def sound(self, name):
        if name not in _TUNES or self.hw.buzzer is None:
            return
        self._tune = _NOTES[_TUNES.index(name)]
        self._tune_i = -2
        self._tune_at = 0

    # --- driving the parts (main loop, outside races) -------------------------------------------------
    def update(self, now):
        if self._tune is not None and ticks_diff(now, self._tune_at) >= 0:
            self._step_tune(now)
        if ticks_diff(now, self._blink_at) >= 0:
            self._blink_at = now + 250
            self._blink_on = not self._blink_on
            for _colour, mode in self._led:
                if mode == "blink":
                    self._led_dirty = True
                    break
        if self._led_dirty:
            self._write_leds()
        if self._dirty and self.hw.display is not None:
            self._dirty = False
            d = self.hw.display
            d.fill(0)
            for i, line in enumerate(self.lines):
                d.text(line, 0, i * 8, 1)
            d.show()

    def next_due(self, now):
        """ms until update() has work, for the idle loop."""
        best = ticks_diff(self._blink_at, now)
        if self._tune is not None:
            best = min(best, ticks_diff(self._tune_at, now))
        if self._dirty or self._led_dirty:
            best = 0
        return max(best, 0)

    def _step_tune(self, now):
        buz = self.hw.buzzer
        self._tune_i += 2
        if self._tune_i >= len(self._tune):
            buz.duty_u16(0)
            self._tune = None
            return
        f = self._tune[self._tune_i]
        ms = self._tune[self._tune_i + 1]
        if f:
            buz.freq(f)
            buz.duty_u16(_VOLUME[self.settings.get("volume")])
        else:
            buz.duty_u16(0)
        self._tune_at = now + ms

    def _write_leds(self):
        leds = self.hw.leds
        self._led_dirty = False
        if leds is None:
            return
        level = self.settings.get("brightness")
        for i in range(1, len(self._led)):
            colour, mode = self._led[i]
            k = 3 * _COLOURS.index(colour) if colour in _COLOURS else 0  # an unknown colour: off
            if mode == "blink" and not self._blink_on:
                k = 0
            leds[i - 1] = (_RGB[k] * level // 255, _RGB[k + 1] * level // 255, _RGB[k + 2] * level // 255)
        leds.write()
