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

# Tunes: the names, and their notes in one byte string: frequency (Hz, 0 = rest), ms, frequency, ms, ...,
# each a 16-bit big-endian number; tune k is _NOTES[_AT[k]:_AT[k + 1]].
_TUNES = const(("start", "reveal", "ok", "wrong", "cheese", "alarm", "tick", "win", "error", "prompt", "join"))
_NOTES = const(
    b"\x02\x0b\x00\x5a\x02\x93\x00\x5a\x03\x10\x00\x8c"  # start 523, 90, 659, 90, 784, 140
    b"\x03\x70\x00\x28"  # reveal 880, 40
    b"\x03\x10\x00\x50\x04\x17\x00\x8c"  # ok 784, 80, 1047, 140
    b"\x00\xdc\x00\xc8\x00\x00\x00\x28\x00\xc4\x01\x04"  # wrong 220, 200, 0, 40, 196, 260
    b"\x01\x4a\x00\x78\x01\x06\x00\x78\x00\xc4\x01\x04"  # cheese 330, 120, 262, 120, 196, 260
    b"\x05\x78\x00\x50\x00\x00\x00\x28\x05\x78\x00\x50\x00\x00\x00\x28\x05\x78\x00\xa0"  # alarm 1400, 80, 0, 40, 1400, 80, 0, 40, 1400, 160
    b"\x04\xb0\x00\x0f"  # tick 1200, 15
    b"\x02\x0b\x00\x64\x02\x93\x00\x64\x03\x10\x00\x64\x04\x17\x01\x2c"  # win 523, 100, 659, 100, 784, 100, 1047, 300
    b"\x00\x96\x01\x2c"  # error 150, 300
    b"\x02\x94\x00\x3c"  # prompt 660, 60
    b"\x02\xbc\x00\x3c\x03\x84\x00\x3c"  # join 700, 60, 900, 60
)
_AT = const(b"\x00\x0c\x10\x18\x24\x30\x44\x48\x58\x5c\x60\x68")

_BLINK = const(0x80)
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
        self.lines = ()  # type: tuple | list[str]  # what the display is to show; let go once shown
        self._dirty = False
        # by player id (0 unused): the colour's index in _COLOURS, _BLINK added when it blinks
        self._led = bytearray(len(hw.buttons) + 1)
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
        v = _COLOURS.index(colour) if colour in _COLOURS else 0  # None or an unknown colour: off
        if mode == "blink":
            v |= _BLINK
        leds = self._led
        if player == 0:
            for i in range(1, len(leds)):
                leds[i] = v
        elif 1 <= player < len(leds):
            leds[player] = v
        self._led_dirty = True

    def sound(self, name):
        if name not in _TUNES or self.hw.buzzer is None:
            return
        k = _TUNES.index(name)
        self._tune = _AT[k + 1]  # where its notes end in _NOTES
        self._tune_i = _AT[k] - 4
        self._tune_at = 0

    # --- driving the parts (main loop, outside races) -------------------------------------------------
    def update(self, now):
        if self._tune is not None and ticks_diff(now, self._tune_at) >= 0:
            self._step_tune(now)
        if ticks_diff(now, self._blink_at) >= 0:
            self._blink(now)
        if self._led_dirty:
            self._write_leds()
        if self._dirty and self.hw.display is not None:
            self._show()

    # update() runs every main-loop pass: the rare work in calls of their own keeps its frame within the
    # 11 words the VM keeps on the C stack (py/objfun.c VM_MAX_STATE_ON_STACK), off the heap.
    def _blink(self, now):
        self._blink_at = now + 250
        self._blink_on = not self._blink_on
        for v in self._led:
            if v & _BLINK:
                self._led_dirty = True
                break

    def _show(self):
        self._dirty = False
        d = self.hw.display
        if not isinstance(getattr(d, "write_data", _Paged), _Paged):
            d.write_data = _Paged(d.write_data)  # (the driver's show() writes its frame through it)
        d.fill(0)
        for i, line in enumerate(self.lines):
            d.text(line, 0, i * 8, 1)
        self.lines = ()
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
        i = self._tune_i + 4
        self._tune_i = i
        if i >= self._tune:
            buz.duty_u16(0)
            self._tune = None
            return
        f = _NOTES[i] << 8 | _NOTES[i + 1]
        ms = _NOTES[i + 2] << 8 | _NOTES[i + 3]
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
            v = self._led[i]
            k = 3 * (v & 0x7F)
            if v & _BLINK and not self._blink_on:
                k = 0
            leds[i - 1] = (_RGB[k] * level // 255, _RGB[k + 1] * level // 255, _RGB[k + 2] * level // 255)
        leds.write()


class _Paged:
    # The display driver's write_data, a page (128 bytes, ~3 ms at 400 kHz) per bus transfer: a transfer is a C
    # call that holds the buttons' soft IRQs off, and a press during a whole frame's one transfer (23 ms) got its
    # first edge up to 23 ms late (a second claim right after the first one's prompt, M is for Mouse C).
    def __init__(self, write):
        self.write = write

    def __call__(self, buf):
        mv = memoryview(buf)
        for i in range(0, len(mv), 128):
            self.write(mv[i:i + 128])
