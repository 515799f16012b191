# Register-level MFRC522 emulator behind a fake SPI bus, with ISO 14443-A tag models.
#
# The bus object has the machine.SPI methods the driver uses (write, write_readinto, readinto).
# SPI framing as in datasheet 8.1.2: address byte (reg << 1) & 0x7E, bit 7 set for a read; a read
# returns the previous address's data on MISO, a write burst stores every data byte at one address.
# Time is virtual: every SPI byte advances the chip clock (ns_per_byte), RF frames take their
# ISO 14443 bit times (128/fc per bit at 106 kbit/s), the timer counts 13.56 MHz cycles.
# Nothing here allocates while answering a poll, so the driver's heap_lock test can run against it.
# Not deployed to real units: the virtual unit and the tests import it.
from micropython import const

from maus.sim.mfrc522_rf import RFUnit
from maus.sim.nfc_tags import HALT, IDLE, NTAG, MifareClassic1K, Tag, crc_a  # noqa: F401 - re-exported
from maus.sim.rf_field import (  # noqa: F401 - re-exported
    FAULT_COLLISION,
    FAULT_CRC,
    FAULT_REMOVE,
    FAULT_TIMEOUT,
    FAULT_TRUNCATE,
    FAULT_WRITE_LOST,
    FAULT_WRITE_NAK,
    make_tag,
)

# Registers (datasheet table 20).
CommandReg = const(0x01)
ComIEnReg = const(0x02)
DivIEnReg = const(0x03)
ComIrqReg = const(0x04)
DivIrqReg = const(0x05)
ErrorReg = const(0x06)
Status1Reg = const(0x07)
Status2Reg = const(0x08)
FIFODataReg = const(0x09)
FIFOLevelReg = const(0x0A)
WaterLevelReg = const(0x0B)
ControlReg = const(0x0C)
BitFramingReg = const(0x0D)
CollReg = const(0x0E)
ModeReg = const(0x11)
TxModeReg = const(0x12)
RxModeReg = const(0x13)
TxControlReg = const(0x14)
TxASKReg = const(0x15)
CRCResultRegH = const(0x21)
CRCResultRegL = const(0x22)
RFCfgReg = const(0x26)
TModeReg = const(0x2A)
TPrescalerReg = const(0x2B)
TReloadRegH = const(0x2C)
TReloadRegL = const(0x2D)
TCounterValRegH = const(0x2E)
TCounterValRegL = const(0x2F)
VersionReg = const(0x37)

# Commands (datasheet table 149).
CMD_IDLE = const(0x00)
CMD_MEM = const(0x01)
CMD_GENERATE_RANDOM_ID = const(0x02)
CMD_CALC_CRC = const(0x03)
CMD_TRANSMIT = const(0x04)
CMD_NO_CMD_CHANGE = const(0x07)
CMD_RECEIVE = const(0x08)
CMD_TRANSCEIVE = const(0x0C)
CMD_MF_AUTHENT = const(0x0E)
CMD_SOFT_RESET = const(0x0F)

# ComIrqReg / DivIrqReg / ErrorReg / CollReg / Status bits.
_SET1 = const(0x80)
_IDLE_IRQ = const(0x10)
_ERR_IRQ = const(0x02)
_CRC_IRQ = const(0x04)
_BUFFER_OVFL = const(0x10)
_PROTOCOL_ERR = const(0x01)
_START_SEND = const(0x80)
_FLUSH_BUFFER = const(0x80)
_T_AUTO = const(0x80)

VERSION = const(0x92)  # MFRC522 version 2.0
_FIFO_SIZE = const(64)
_REBASE_NS = const(1 << 28)


class MFRC522Emu(RFUnit):
    """The chip: 64 registers, the 64-byte FIFO, the CRC coprocessor, the timer and the RF front end."""

    ns_per_byte = 800  # SPI at 10 MHz
    ns_per_call = 0  # host time per SPI transaction; ~20000 models MicroPython on an ESP32 (fewer wait reads)

    def __init__(self, seed=1):
        RFUnit.__init__(self)
        self.mem25 = bytearray(25)
        self._b1 = bytearray(1)
        self.spi_bytes = 0
        self.base_ns = 0  # ns of virtual time before `now` last restarted at 0
        self.wait_reads = 0  # ComIrqReg/DivIrqReg reads that found the chip still busy
        self._seed = seed or 1
        self._crc_on = False
        self._crc = 0
        self._soft_reset()

    # --- tags (the RF field holds them) --------------------------------------------------------
    @property
    def tags(self):
        return self.field.tags

    def add_tag(self, tag):
        self.field.add_tag(tag)

    def remove_tag(self, tag):
        self.field.remove_tag(tag)

    put = add_tag  # put a tag on the pad
    take = remove_tag  # take it off

    def make_tag(self, ident, model=213):
        return make_tag(ident, model)

    def inject(self, kind, n=1):
        self.field.inject(kind, n)

    # --- SPI --------------------------------------------------------------------------------------
    def write(self, buf):
        n = len(buf)
        self._spend(n)
        if n == 0:
            return
        a = buf[0]
        if a & 0x80:
            for i in range(1, n):
                self._read(buf[i - 1] >> 1 & 0x3F)
            return
        reg = a >> 1 & 0x3F
        for i in range(1, n):
            self._write(reg, buf[i])

    def write_readinto(self, out, into):
        n = len(out)
        self._spend(n)
        if n == 0:
            return
        into[0] = 0
        a = out[0]
        if a & 0x80:
            for i in range(1, n):
                into[i] = self._read(out[i - 1] >> 1 & 0x3F)
            return
        reg = a >> 1 & 0x3F
        for i in range(1, n):
            into[i] = 0
            self._write(reg, out[i])

    def readinto(self, buf, write=0):
        # Clocking out a constant byte: a read only if it is a read address.
        n = len(buf)
        self._spend(n)
        for i in range(n):
            buf[i] = 0
        if write & 0x80:
            for i in range(1, n):
                buf[i] = self._read(write >> 1 & 0x3F)

    def reset_pin(self, level):
        # NRSTPD: low = hard power-down (field off), rising edge = reset.
        was = self._field_on()
        if not level:
            self.powered = False
        elif not self.powered:
            self.powered = True
            self._soft_reset()
        self._field(was)

    def _spend(self, n):
        self.spi_bytes = (self.spi_bytes + n) & 0x3FFFFFFF
        self.now += n * self.ns_per_byte + self.ns_per_call
        if self.now > _REBASE_NS and not self._busy() and self._rx_at < 0:
            # Nothing timed is pending: restart the ns clock at 0 so it stays a small int on a 32-bit
            # port (2**30 ns is only 1.07 s); elapsed_ns() keeps the total for tests and benchmarks.
            self.base_ns += self.now
            self.now = 0

    def elapsed_ns(self):
        return self.base_ns + self.now

    # --- registers --------------------------------------------------------------------------------
    def _soft_reset(self):
        r = self.regs
        for i in range(64):
            r[i] = 0
        r[CommandReg] = 0x20
        r[ComIEnReg] = 0x80
        r[ComIrqReg] = 0x14
        r[Status1Reg] = 0x21
        r[WaterLevelReg] = 0x08
        r[ControlReg] = 0x10
        r[CollReg] = 0xA0
        r[ModeReg] = 0x3F
        r[TxControlReg] = 0x80
        r[0x16] = 0x10  # TxSelReg
        r[0x17] = 0x84  # RxSelReg
        r[0x18] = 0x84  # RxThresholdReg
        r[0x19] = 0x4D  # DemodReg
        r[CRCResultRegH] = 0xFF
        r[CRCResultRegL] = 0xFF
        r[RFCfgReg] = 0x48
        r[VersionReg] = VERSION
        self.fifo_n = self.fifo_r = 0
        self._crc_on = False
        self._crc = 0
        self._tx_end = -1
        self._rx_at = -1
        self._rx_end = -1
        self._timer_at = -1
        self._timer_start = -1
        self._rx_n = 0
        self._rx_last = 0
        self._rx_err = 0
        self._rx_coll = 0

    def _field(self, was_on):
        on = self._field_on()
        if on != was_on:
            self.field.power(on)

    def _read(self, reg):
        self._update()
        r = self.regs
        if reg == FIFODataReg:
            if self.fifo_r < self.fifo_n:
                v = self.fifo[self.fifo_r]
                self.fifo_r += 1
                return v
            return 0
        if reg == FIFOLevelReg:
            return self.fifo_n - self.fifo_r
        if reg == ComIrqReg or reg == DivIrqReg:
            if self._busy():
                self.wait_reads += 1
            return r[reg] & 0x7F
        if reg == Status1Reg:
            v = 0x01 if self.fifo_n - self.fifo_r <= r[WaterLevelReg] else 0  # LoAlert
            if self._crc_on:
                v |= 0x20  # CRCReady
                if self._crc == 0:
                    v |= 0x40  # CRCOk
            if self._timer_at >= 0:
                v |= 0x08  # TRunning
            if r[ComIrqReg] & r[ComIEnReg] & 0x7F:
                v |= 0x10  # IRq
            return v
        if reg == TCounterValRegH or reg == TCounterValRegL:
            c = self._timer_count()
            return c >> 8 if reg == TCounterValRegH else c & 0xFF
        if reg == VersionReg:
            return VERSION
        return r[reg]

    def _write(self, reg, v):
        self._update()
        r = self.regs
        if reg == FIFODataReg:
            if self._crc_on:
                self._b1[0] = v
                self._crc = crc_a(self._b1, 1, self._crc)
                self._crc_done()
                return
            if self.fifo_n >= _FIFO_SIZE:
                r[ErrorReg] |= _BUFFER_OVFL
                return
            self.fifo[self.fifo_n] = v
            self.fifo_n += 1
            return
        if reg == FIFOLevelReg:
            if v & _FLUSH_BUFFER:
                self.fifo_n = self.fifo_r = 0
                r[ErrorReg] &= ~_BUFFER_OVFL & 0xFF
            return
        if reg == ComIrqReg or reg == DivIrqReg:
            if v & _SET1:
                r[reg] |= v & 0x7F
            else:
                r[reg] &= ~v & 0x7F
            return
        if reg == CommandReg:
            r[CommandReg] = (r[CommandReg] & 0xF0) | (v & 0x30)
            self._command(v & 0x0F)
            return
        if reg == BitFramingReg:
            r[reg] = v & 0x7F
            if v & _START_SEND and r[CommandReg] & 0x0F == CMD_TRANSCEIVE:
                self._transmit()
            return
        if reg == TxControlReg:
            was = self._field_on()
            r[reg] = v
            self._field(was)
            return
        if reg == VersionReg or reg == ErrorReg or reg == Status1Reg:
            return  # read-only
        if reg == Status2Reg:
            r[reg] &= v | 0xF7  # MFCrypto1On: software can only clear it
            return
        if reg == ControlReg:
            r[reg] = (r[reg] & 0x07) | (v & 0x38)
            if v & 0x40:  # TStartNow
                self._start_timer(self.now)
            if v & 0x80:  # TStopNow
                self._timer_at = -1
            return
        r[reg] = v

    # --- commands ---------------------------------------------------------------------------------
    def _command(self, cmd):
        r = self.regs
        if cmd == CMD_NO_CMD_CHANGE:
            return  # only the PowerDown/RcvOff bits were meant
        self._crc_on = False
        self._tx_end = self._rx_at = self._rx_end = -1
        r[CommandReg] = (r[CommandReg] & 0xF0) | cmd
        if cmd == CMD_SOFT_RESET:
            was = self._field_on()
            self._soft_reset()
            self._field(was)
            r[CommandReg] = 0x20
        elif cmd == CMD_CALC_CRC:
            pre = r[ModeReg] & 0x03
            self._crc = (0x0000, 0x6363, 0xA671, 0xFFFF)[pre]
            self._crc_on = True
            n = self.fifo_n - self.fifo_r
            self._crc = crc_a(self.fifo, n, self._crc, self.fifo_r)
            self.fifo_n = self.fifo_r = 0
            self._crc_done()
        elif cmd == CMD_TRANSMIT:
            self._transmit()
        elif cmd == CMD_RECEIVE:
            if r[TModeReg] & _T_AUTO:
                self._start_timer(self.now)
        elif cmd == CMD_MEM:
            n = self.fifo_n - self.fifo_r
            if n >= 25:
                for i in range(25):
                    self.mem25[i] = self.fifo[self.fifo_r + i]
                self.fifo_n = self.fifo_r = 0
            else:
                self.fifo_n = self.fifo_r = 0
                for i in range(25):
                    self.fifo[i] = self.mem25[i]
                self.fifo_n = 25
            self._idle()
        elif cmd == CMD_GENERATE_RANDOM_ID:
            for i in range(10):
                self.mem25[i] = self._rand() & 0xFF
            self._idle()
        elif cmd == CMD_MF_AUTHENT:
            r[ErrorReg] |= _PROTOCOL_ERR  # Crypto1 is not emulated
            r[ComIrqReg] |= _ERR_IRQ
            self._idle()
        elif cmd == CMD_IDLE:
            self._timer_at = -1
        elif cmd != CMD_TRANSCEIVE:
            self._idle()

    def _crc_done(self):
        self.regs[CRCResultRegH] = self._crc >> 8
        self.regs[CRCResultRegL] = self._crc & 0xFF
        self.regs[DivIrqReg] |= _CRC_IRQ

    def _rand(self):
        s = self._seed
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        self._seed = s
        return s


class Pin:
    """An output pin for CS/RST; the RST pin can drive the emulator's NRSTPD input."""

    def __init__(self, value=1, emu=None):
        self._v = value
        self._emu = emu

    def value(self, v=None):
        if v is None:
            return self._v
        self._v = 1 if v else 0
        if self._emu is not None:
            self._emu.reset_pin(self._v)
        return None

    def __call__(self, v=None):
        return self.value(v)
