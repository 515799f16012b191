# An SSD1306 I2C driver for the virtual unit where micropython-lib's `ssd1306` (what `mausbox deploy`
# installs with mip) is not installed: the same class and methods, and the controller's own command and
# data stream on the bus (SSD1306 datasheet 10.1: init, then each show() sets the column and page window
# and writes the whole GDDRAM), so maus.sim.wiring's controller model sees what a board's display sees.
# Not deployed to real units.
import framebuf


class SSD1306_I2C(framebuf.FrameBuffer):
    def __init__(self, width, height, i2c, addr=0x3C, external_vcc=False):
        self.width = width
        self.height = height
        self.pages = height // 8
        self.i2c = i2c
        self.addr = addr
        self.buffer = bytearray(self.pages * width)
        self._cmd = bytearray(2)
        self._data = [b"\x40", self.buffer]  # control byte: Co=0, D/C#=1, then the frame
        super().__init__(self.buffer, width, height, framebuf.MONO_VLSB)
        # display off; horizontal addressing; start line 0; column 127 to SEG0; multiplex; COM scan
        # reversed; no offset; COM pins; clock; precharge; VCOMH; contrast; RAM shown, not inverted; IREF;
        # charge pump on; display on (datasheet 10.1, the order of its application note)
        for c in (0xAE, 0x20, 0x00, 0x40, 0xA1, 0xA8, height - 1, 0xC8, 0xD3, 0x00, 0xDA,
                  0x02 if width > 2 * height else 0x12, 0xD5, 0x80, 0xD9, 0xF1, 0xDB, 0x30, 0x81, 0xFF, 0xA4,
                  0xA6, 0xAD, 0x30, 0x8D, 0x14, 0xAF):
            self.write_cmd(c)
        self.fill(0)
        self.show()

    def write_cmd(self, c):
        self._cmd[0] = 0x80  # Co=1, D/C#=0: one command byte
        self._cmd[1] = c
        self.i2c.writeto(self.addr, self._cmd)

    def poweroff(self):
        self.write_cmd(0xAE)

    def poweron(self):
        self.write_cmd(0xAF)

    def contrast(self, c):
        self.write_cmd(0x81)
        self.write_cmd(c)

    def invert(self, i):
        self.write_cmd(0xA6 | (i & 1))

    def show(self):
        x0 = (128 - self.width) // 2
        for c in (0x21, x0, x0 + self.width - 1, 0x22, 0, self.pages - 1):
            self.write_cmd(c)
        self.i2c.writevto(self.addr, self._data)
