# The ESP32 image's frozen `neopixel` on the unix port: a GRB byte buffer sent with machine.bitstream, which
# maus.sim.wiring hands to the LED strip wired to the pin. Not deployed to real units.
from machine import bitstream

_ORDER = (1, 0, 2, 3)  # R G B W -> the byte each goes to (WS2812: green first)


class NeoPixel:
    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        pin.init(pin.OUT)
        self.timing = ((400, 850, 800, 450) if timing else (800, 1700, 1600, 900)) if isinstance(timing, int) \
            else timing

    def __len__(self):
        return self.n

    def __setitem__(self, i, v):
        o = i * self.bpp
        for k in range(self.bpp):
            self.buf[o + _ORDER[k]] = v[k]

    def __getitem__(self, i):
        o = i * self.bpp
        return tuple(self.buf[o + _ORDER[k]] for k in range(self.bpp))

    def fill(self, v):
        for i in range(self.n):
            self[i] = v

    def write(self):
        bitstream(self.pin, 0, self.timing, self.buf)
