# SSD1306 OLED (128x64 or 128x32) on I2C: a framebuf.FrameBuffer the firmware draws into, and show() sends it.
# The project's own (not fetched at deploy time: a classroom without internet gets its display too); the API is
# micropython-lib's ssd1306 (MIT; SSD1306_I2C(width, height, i2c, addr), show, fill, text, contrast, poweroff/on),
# whose shape it follows, so either works. Commands and the set-up sequence from the Solomon Systech SSD1306 datasheet rev 1.1, section 9
# and 10 and its application note's init order.
import framebuf
from micropython import const

_SET_CONTRAST = const(0x81)
_SET_ENTIRE_ON = const(0xA4)  # follow the RAM
_SET_NORM_INV = const(0xA6)
_SET_DISP = const(0xAE)  # | 1: on
_SET_MEM_ADDR = const(0x20)
_SET_COL_ADDR = const(0x21)
_SET_PAGE_ADDR = const(0x22)
_SET_DISP_START_LINE = const(0x40)
_SET_SEG_REMAP = const(0xA0)
_SET_MUX_RATIO = const(0xA8)
_SET_COM_OUT_DIR = const(0xC0)
_SET_DISP_OFFSET = const(0xD3)
_SET_COM_PIN_CFG = const(0xDA)
_SET_DISP_CLK_DIV = const(0xD5)
_SET_PRECHARGE = const(0xD9)
_SET_VCOM_DESEL = const(0xDB)
_SET_CHARGE_PUMP = const(0x8D)


class SSD1306(framebuf.FrameBuffer):
    def __init__(self, width, height):
        self.width = width
        self.height = height
        self.pages = height // 8
        self.buffer = bytearray(self.pages * width)
        super().__init__(self.buffer, width, height, framebuf.MONO_VLSB)
        self.init_display()

    def init_display(self):
        for cmd in (
            _SET_DISP,  # off while it is set up
            _SET_MEM_ADDR, 0x00,  # horizontal addressing: show() sends the whole buffer in one go
            _SET_DISP_START_LINE,
            _SET_SEG_REMAP | 0x01,  # column 127 is SEG0
            _SET_MUX_RATIO, self.height - 1,
            _SET_COM_OUT_DIR | 0x08,  # scan from COM[N-1] to COM0
            _SET_DISP_OFFSET, 0x00,
            _SET_COM_PIN_CFG, 0x02 if self.width > 2 * self.height else 0x12,  # 128x32: sequential COM pins
            _SET_DISP_CLK_DIV, 0x80,  # the reset value: divide by 1, oscillator mid
            _SET_PRECHARGE, 0xF1,  # internal charge pump
            _SET_VCOM_DESEL, 0x30,  # 0.83 x Vcc
            _SET_CONTRAST, 0xFF,
            _SET_ENTIRE_ON,
            _SET_NORM_INV,
            _SET_CHARGE_PUMP, 0x14,  # on: the modules people buy have no external VCC
            _SET_DISP | 0x01,
        ):
            self.write_cmd(cmd)
        self.fill(0)
        self.show()

    def write_cmd(self, cmd):  # the bus's (SSD1306_I2C)
        raise NotImplementedError

    def write_data(self, buf):
        raise NotImplementedError

    def poweroff(self):
        self.write_cmd(_SET_DISP)

    def poweron(self):
        self.write_cmd(_SET_DISP | 0x01)

    def contrast(self, contrast):
        self.write_cmd(_SET_CONTRAST)
        self.write_cmd(contrast)

    def invert(self, invert):
        self.write_cmd(_SET_NORM_INV | (invert & 1))

    def show(self):
        x0 = 0
        x1 = self.width - 1
        if self.width != 128:
            x0 += (128 - self.width) // 2  # narrower panels sit in the middle of the 128 columns
            x1 += (128 - self.width) // 2
        for cmd in (_SET_COL_ADDR, x0, x1, _SET_PAGE_ADDR, 0, self.pages - 1):
            self.write_cmd(cmd)
        self.write_data(self.buffer)


class SSD1306_I2C(SSD1306):
    def __init__(self, width, height, i2c, addr=0x3C):
        self.i2c = i2c
        self.addr = addr
        self.temp = bytearray(2)
        self.write_list = [b"\x40", None]  # Co = 0, D/C# = 1: the rest is display RAM
        super().__init__(width, height)

    def write_cmd(self, cmd):
        self.temp[0] = 0x80  # Co = 1, D/C# = 0: one command byte follows
        self.temp[1] = cmd
        self.i2c.writeto(self.addr, self.temp)

    def write_data(self, buf):
        self.write_list[1] = buf
        self.i2c.writevto(self.addr, self.write_list)
