# Register-level MFRC522 emulator behind a fake SPI bus, with ISO 14443-A tag models.
# Over 600 lines on purpose: the chip's registers, FIFO, timer and commands are one state machine, laid out
# as the datasheet's sections; never deployed to a board.
#
# The bus object has the machine.SPI methods the driver uses (write, write_readinto, readinto).
# SPI framing as in datasheet 8.1.2: address byte (reg << 1) & 0x7E, bit 7 set for a read; a read
# returns the previous address's data on MISO, a write burst stores every data byte at one address.
# Time is virtual: every SPI transfer advances the chip clock (ns_per_byte from the SPI clock, plus
# ns_per_call for the host's own time per transfer), RF frames take their ISO 14443 bit times
# (128/fc per bit at 106 kbit/s), the timer counts 13.56 MHz cycles, the CRC coprocessor takes its
# time per byte, and after a reset the chip answers nothing until its oscillator runs.
# Where the datasheet leaves a behaviour open the emulator takes a named variant (VARIANTS).
# Nothing here allocates while answering a poll, so the driver's heap_lock test can run against it.
# Not deployed to real units: the virtual unit and the tests import it.
from micropython import const

from maus.sim.mfrc522_rf import RFUnit
from maus.sim.nfc_tags import CRC_NIBBLE, HALT, IDLE, NTAG, MifareClassic1K, Tag, Ultralight, crc_a  # noqa: F401 - re-exported
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
RxThresholdReg = const(0x18)
DemodReg = const(0x19)
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

# ComIrqReg / DivIrqReg / ErrorReg / Status bits.
_SET1 = const(0x80)
_ERR_IRQ = const(0x02)
_CRC_IRQ = const(0x04)
_BUFFER_OVFL = const(0x10)
_PROTOCOL_ERR = const(0x01)
_TEMP_ERR = const(0x40)
_POWER_DOWN = const(0x10)
_START_SEND = const(0x80)
_FLUSH_BUFFER = const(0x80)
_T_AUTO = const(0x80)

VERSION = const(0x92)  # VersionReg of an MFRC522 version 2.0 (datasheet 9.3.4.8): the default variant's
_FIFO_SIZE = const(64)  # datasheet 8.3: a 64 x 8-bit FIFO
_TD_NS = const(37740)  # 8.8.2: after the crystal runs, td = 1024/27 us before the chip can be addressed
_REBASE_NS = const(1 << 28)  # the clock restarts near 0 past this (see _rebase)

# Chip behaviours the datasheet (or the field) leaves open, one named variant per possibility, and the
# modules people buy. Fields:
# 0 crystal start-up after a hard reset, SoftReset or power-down (us; 8.8.2 gives only td on top),
# 1 ParityErr set with CollErr on a collided byte, 2 CollPos counting the RxAlign offset (9.3.1.15),
# 3 the Idle command stopping a running timer (table 149 says nothing about the timer), 4 a MIFARE Classic
# answering an unauthenticated READ with a NAK (else silence), 5 CRC coprocessor time per byte (ns;
# 8.4 gives none), 6 the byte MISO reads while the chip cannot be addressed (the pin floats),
# 7 VersionReg (9.3.4.8; clones: the values miguelbalboa/rfid lists, and one no list has),
# 8 the SPI clock (0: as the board asks) and 9 one bit in about this many flipped on the wire (0: clean),
# 10 the antenna's field at the card in % (a weak field: heard only with the receiver gain up, RFCfgReg),
# 11 a card put on the pad beside one other lies at its edge: its strength in % (100: flat like the first),
# 12 a card put on the pad breaks off its first answer this many bit periods in (0: never), then is back
# (it slid onto the pad at the edge of the field: a partial frame, and the card reset).
# Every variant differs from the default in what the chip does under the RFID suite (tests/fw/rfidkit.py
# variants_trace compares them): six that did not (the same tuple under another name) were removed.
_C = (200, 1, 1, 0, 1, 590, 0x00, 0x92, 0, 0, 100, 100, 0)  # the default's fields


def _v(**kw):
    # The default's fields with some changed (by index name: f<i>).
    t = list(_C)
    for k, val in kw.items():
        t[int(k[1:])] = val
    return tuple(t)


VARIANTS = {
    "start-0ms": _v(f0=0),
    "start-0.2ms": _C,
    "start-1ms": _v(f0=1000),
    "start-50ms": _v(f0=50000),
    "coll-noparity": _v(f1=0),
    "collpos-frame": _v(f2=0),
    "idle-stops-timer": _v(f3=1),
    "classic-silent": _v(f4=0),
    "crc-1etu": _v(f5=9440),  # a byte per bit time at 106 kbit/s (the default: a byte per 8 carrier cycles)
    "miso-high": _v(f6=0xFF),  # (the default: MISO reads low)
    "mfrc522-v1": _v(f7=0x91),  # NXP MFRC522 version 1.0
    "mfrc522-v0": _v(f7=0x90),  # version 0.0
    "fm17522": _v(f7=0x88),  # Fudan FM17522, sold as RC522
    "fm17522e": _v(f7=0x89),  # FM17522E: many modules sold as RC522 today
    "clone-b2": _v(f7=0xB2),  # FM17522 marked 0xB2
    "clone-12": _v(f7=0x12),  # a counterfeit chip
    "version-unknown": _v(f7=0x3A),  # a version no list has: tried, and it works
    "spi-10mhz-noisy": _v(f8=10000000, f9=40000),  # a long jumper wire at 10 MHz
    "field-weak": _v(f10=20),  # a detuned antenna: 1/5 of the field
    "cards-unequal": _v(f11=60),  # the second card at the pad's edge: 3/5 of the first, still a collision
    "card-flutter": _v(f12=12),  # a card's first ATQA breaks off after 12 bit periods
    "worst": (50000, 1, 0, 0, 0, 9440, 0xFF, 0x89, 10000000, 40000, 20, 60, 12),  # every unkind choice at once
}
DEFAULT_VARIANT = "start-0.2ms"


class MFRC522Emu(RFUnit):
    """The chip: 64 registers, the 64-byte FIFO, the CRC coprocessor, the timer and the RF front end."""

    made = 0  # emulators constructed (the tests use it to tell which tests the chip variant reaches)

    def __init__(self, seed=1, variant=None, spi_hz=4000000):
        RFUnit.__init__(self)
        MFRC522Emu.made += 1
        name = variant or DEFAULT_VARIANT
        if name not in VARIANTS:
            raise ValueError("no MFRC522 variant %r (known: %s)" % (name, ", ".join(sorted(VARIANTS))))
        v = VARIANTS[name]
        self.variant = name
        self.startup_ns = v[0] * 1000 + _TD_NS
        self._coll_parity = v[1]
        self._collpos_rxalign = v[2]
        self._idle_stops_timer = v[3]
        self.field.classic_nak = bool(v[4])
        self.field.coll_parity = bool(v[1])
        self.crc_ns = v[5]
        self.miso_idle = v[6]
        self.version = v[7]
        self.field.field_pct = v[10]
        self.field.edge_pct = v[11]
        self.field.flutter_bit = v[12]
        self.tags = self.field.tags
        self.set_spi_hz(v[8] or spi_hz)
        self.ns_per_call = 20000  # host time per SPI transfer: MicroPython on an ESP32 spends ~20-50 us
        self.spi_error_rate = v[9]  # 0: a clean bus; N: one bit in about N flipped (MOSI and MISO alike)
        self.spi_errors = 0  # bits flipped so far
        self.mem25 = bytearray(25)
        self.spi_bytes = 0
        self._base_ms = 0  # virtual time before `now` last restarted (elapsed_ns adds it up)
        self._base_ns = 0
        self.wait_reads = 0  # ComIrqReg/DivIrqReg reads that found the chip still busy
        self.resets = 0  # hard resets, SoftResets and spontaneous resets
        self._seed = (seed & 0xFFFF) or 1
        self._err_left = 0
        self._ready_at = -1  # not addressable until then (oscillator start-up), -1: running
        self._pd = False  # soft power-down (CommandReg PowerDown) or waking from it
        self._wake_at = -1
        self._crc_on = False
        self._crc = 0
        self._crc_t = -1  # the coprocessor finishes its next FIFO byte then
        self._soft_reset()

    # No property on this class: one makes MicroPython look every attribute store up in the class and its base
    # first (MP_TYPE_FLAG_HAS_SPECIAL_ACCESSORS), some 1,600 stores a poll with a card on the pad.
    def set_spi_hz(self, hz):
        # datasheet 8.1.2: SPI up to 10 Mbit/s; a byte is 8 clocks. spi_hz: the clock that byte time makes.
        self.ns_per_byte = 8000000 // (hz // 1000)
        self.spi_hz = 8000000 // self.ns_per_byte * 1000

    # --- tags (the RF field holds them: tags is its list) ----------------------------------------------
    def add_tag(self, tag):
        self.field.add_tag(tag)

    def remove_tag(self, tag):
        self.field.remove_tag(tag)

    put = add_tag  # put a tag on the pad
    take = remove_tag  # take it off

    def make_tag(self, ident, model=213, text=None):
        return make_tag(ident, model, text)

    def inject(self, kind, n=1):
        self.field.inject(kind, n)

    # --- power and resets -------------------------------------------------------------------------
    def reset_pin(self, level):
        # NRSTPD (8.6.1): low = hard power-down (oscillator and field off), rising edge = reset.
        if not level:
            if self.powered:
                was = self._field_on()
                self.powered = False
                self._field(was)
        elif not self.powered:
            self.powered = True
            self._hard_reset()

    def chip_reset(self):
        """The chip resets itself (a brown-out, a spike on the supply): reset values, field off, and
        nothing answers until the oscillator runs again. The driver is not told."""
        was = self._field_on()
        self._hard_reset()
        self._field(was)

    def _hard_reset(self):
        for i in range(25):
            self.mem25[i] = 0
        self._soft_reset()
        self._ready_at = self.now + self.startup_ns
        self._pd = False
        self._wake_at = -1
        self.resets += 1

    def _addressable(self):
        if not self.powered:
            return False
        if self._ready_at >= 0:
            if self.now < self._ready_at:
                return False
            self._ready_at = -1
        return True

    # --- SPI --------------------------------------------------------------------------------------
    # The virtual unit's RFID poll makes ~50 transfers, most of its time: write and write_readinto take a
    # clean bus and a running chip (the common case) without the per-byte wire calls, a register access
    # (2 bytes) without a loop, and keep their frames within the VM's 11 words (py/objfun.c
    # VM_MAX_STATE_ON_STACK): a larger one is allocated on the heap at every call. The rest: _wire.
    def write(self, buf):
        n = len(buf)
        self.spi_bytes = (self.spi_bytes + n) & 0x3FFFFFFF  # _spend(n)
        self.now += n * self.ns_per_byte + self.ns_per_call
        if self.now > _REBASE_NS:
            self._rebase()
        if n != 2 or self.spi_error_rate or not self.powered or self._ready_at >= 0:
            self._wire(buf, None, n)
        elif buf[0] & 0x80:
            _emu_read(self, buf[0] >> 1 & 0x3F)
        else:
            _emu_write(self, buf[0] >> 1 & 0x3F, buf[1])

    def write_readinto(self, out, into):
        n = len(out)
        self.spi_bytes = (self.spi_bytes + n) & 0x3FFFFFFF  # _spend(n)
        self.now += n * self.ns_per_byte + self.ns_per_call
        if self.now > _REBASE_NS:
            self._rebase()
        if n != 2 or self.spi_error_rate or not self.powered or self._ready_at >= 0:
            self._wire(out, into, n)
            return
        into[0] = 0
        if out[0] & 0x80:
            into[1] = _emu_read(self, out[0] >> 1 & 0x3F)
        else:
            into[1] = 0
            _emu_write(self, out[0] >> 1 & 0x3F, out[1])

    def _wire(self, out, into, n):
        # A transfer of n bytes byte by byte (into: what MISO carries, None for a write), the clock moved on.
        if n == 0:
            return
        if not self._addressable():
            for i in range(n):
                self._mosi(0)  # the bits still cross the wire (and may be hit)
                if into is not None:
                    into[i] = self._miso(self.miso_idle)  # MISO floats: what the pin's level reads
            return
        if into is not None:
            into[0] = self._miso(0)
        a = self._mosi(out[0])
        if a & 0x80:
            for i in range(1, n):
                v = self._miso(self._read(a >> 1 & 0x3F))
                if into is not None:
                    into[i] = v
                a = self._mosi(out[i])
            return
        a = a >> 1 & 0x3F
        for i in range(1, n):
            if into is not None:
                into[i] = self._miso(0)
            self._write(a, self._mosi(out[i]))

    def readinto(self, buf, write=0):
        # Clocking out a constant byte: a read only if it is a read address.
        n = len(buf)
        self._spend(n)
        for i in range(n):
            buf[i] = self._miso(self.miso_idle if not self._addressable() else 0)
        if write & 0x80 and self._addressable():
            for i in range(1, n):
                buf[i] = self._miso(self._read(write >> 1 & 0x3F))

    def _mosi(self, v):
        # A byte the host sends; with spi_error_rate one bit in about that many is flipped.
        if not self.spi_error_rate:
            return v
        self._err_left -= 8
        if self._err_left > 0:
            return v
        bit = -self._err_left & 7
        self._err_left += self._gap()
        self.spi_errors += 1
        return v ^ (1 << bit)

    _miso = _mosi  # a byte the chip sends: the same wire noise

    def _gap(self):
        # Bits to the next flipped bit: uniform in 1 .. 2 * spi_error_rate (mean: the rate).
        u = (self._rand() << 14) | (self._rand() >> 2)  # 30 bits, a small int
        return 1 + u % (2 * self.spi_error_rate)

    def _spend(self, n):
        self.spi_bytes = (self.spi_bytes + n) & 0x3FFFFFFF
        self.now += n * self.ns_per_byte + self.ns_per_call
        if self.now > _REBASE_NS:
            self._rebase()

    def sleep_us(self, us):
        """The host waits: the chip's clock runs on (the driver's sleep in tests and the virtual unit)."""
        while us > 0:
            step = us if us < 100000 else 100000
            self.now += step * 1000
            us -= step
            if self.now > _REBASE_NS:
                self._rebase()

    def _rebase(self):
        # Restart the ns clock near 0 so that every time stays a small int on a 32-bit port (2**30 ns
        # is only 1.07 s): shift `now` and every pending event time by the same amount, never below 0.
        # elapsed_ns() keeps the total for tests and benchmarks.
        s = self.now
        s = _before(self._tx_end, s)  # (no tuple to loop over: this runs on the poll path)
        s = _before(self._rx_at, s)
        s = _before(self._rx_end, s)
        s = _before(self._rx_stop, s)
        s = _before(self._timer_at, s)
        s = _before(self._ready_at, s)
        s = _before(self._wake_at, s)
        s = _before(self._crc_t, s)
        self.now -= s
        if self._tx_end >= 0:
            self._tx_end -= s
        if self._rx_at >= 0:
            self._rx_at -= s
        if self._rx_end >= 0:
            self._rx_end -= s
        if self._rx_stop >= 0:
            self._rx_stop -= s
        if self._timer_at >= 0:
            self._timer_at -= s
        if self._ready_at >= 0:
            self._ready_at -= s
        if self._wake_at >= 0:
            self._wake_at -= s
        if self._crc_t >= 0:
            self._crc_t -= s
        self._base_ns += s
        ms = self._base_ns // 1000000
        self._base_ms += ms
        self._base_ns -= ms * 1000000

    def elapsed_ns(self):
        return self._base_ms * 1000000 + self._base_ns + self.now

    # --- registers --------------------------------------------------------------------------------
    def _soft_reset(self):
        # Reset values (datasheet 9.3); the 25-byte internal buffer keeps its contents (10.3.1.10).
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
        r[RxThresholdReg] = 0x84  # MinLevel 8, CollLevel 4
        r[DemodReg] = 0x4D
        r[CRCResultRegH] = 0xFF
        r[CRCResultRegL] = 0xFF
        r[RFCfgReg] = 0x48
        r[VersionReg] = self.version
        self.fifo_n = self.fifo_r = 0
        self._crc_on = False
        self._crc = 0
        self._crc_t = -1
        self._rf_reset()

    def _field(self, was_on):
        on = self._field_on()
        if on != was_on:
            self.field.power(on)

    def _tick(self):
        # Bring the chip up to `now`: waking from power-down, the CRC coprocessor, the air and the timer.
        if self._wake_at >= 0 and self.now >= self._wake_at:
            was = self._field_on()
            self._wake_at = -1
            self._pd = False
            self._field(was)
        if self._crc_t >= 0 and self.now >= self._crc_t:
            self._crc_run()
        _rf_update(self)

    def _read(self, reg):
        if self._tx_end >= 0 or self._timer_at >= 0 or self._rx_at >= 0 or self._wake_at >= 0 or self._crc_t >= 0:
            _emu_tick(self)  # (else nothing is under way: the calls are saved)
        r = self.regs
        if reg == FIFODataReg:
            return _fifo_pop(self) if self.fifo_n else 0
        if reg == FIFOLevelReg:
            return self.fifo_n
        if reg == ComIrqReg or reg == DivIrqReg:
            if self._tx_end >= 0 or self._rx_end >= 0 or self._timer_at >= 0 or self._crc_t >= 0:  # still busy
                self.wait_reads += 1
            return r[reg] & 0x7F
        if reg == CommandReg:
            return r[CommandReg] | (_POWER_DOWN if self._pd else 0)  # PowerDown reads 1 until awake
        if reg == Status1Reg:
            n = self.fifo_n
            w = r[WaterLevelReg]
            v = 0x01 if n <= w else 0  # LoAlert
            if _FIFO_SIZE - n <= w:
                v |= 0x02  # HiAlert
            if self._crc_on and self._crc_t < 0:
                v |= 0x20  # CRCReady
                if self._crc == 0:
                    v |= 0x40  # CRCOk
            if self._timer_at >= 0:
                v |= 0x08  # TRunning
            if r[ComIrqReg] & r[ComIEnReg] & 0x7F or r[DivIrqReg] & r[DivIEnReg] & 0x14:
                v |= 0x10  # IRq
            return v
        if reg == TCounterValRegH or reg == TCounterValRegL:
            c = self._timer_count()
            return c >> 8 if reg == TCounterValRegH else c & 0xFF
        return r[reg]

    def _write(self, reg, v):
        if self._tx_end >= 0 or self._timer_at >= 0 or self._rx_at >= 0 or self._wake_at >= 0 or self._crc_t >= 0:
            _emu_tick(self)
        r = self.regs
        if reg == FIFODataReg:
            if self.fifo_n >= _FIFO_SIZE:
                r[ErrorReg] |= _BUFFER_OVFL  # 9.3.1.7: the host writes to a full FIFO
                return
            _fifo_push(self, v)
            if self._crc_on and self._crc_t < 0:
                self._crc_t = self.now + self.crc_ns  # CalcCRC goes on with each byte written (10.3.1.4)
            return
        if reg == FIFOLevelReg:
            if v & _FLUSH_BUFFER:  # 9.3.1.11: clears the pointers and BufferOvfl
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
            self._command_reg(v)
            return
        if reg == BitFramingReg:
            r[reg] = v & 0x7F
            if v & _START_SEND and r[CommandReg] & 0x0F == CMD_TRANSCEIVE and not self._pd:
                self._transmit()
            return
        if reg == TxControlReg:
            was = self._field_on()
            r[reg] = v
            self._field(was)
            return
        if reg == VersionReg or reg == ErrorReg or reg == Status1Reg or reg == TCounterValRegH \
                or reg == TCounterValRegL or reg == CRCResultRegH or reg == CRCResultRegL:
            return  # read-only
        if reg == CollReg:
            r[reg] = (r[reg] & 0x7F) | (v & 0x80)  # only ValuesAfterColl is writable (9.3.1.15)
            return
        if reg == Status2Reg:
            r[reg] &= v | 0xF7  # MFCrypto1On: software can only clear it
            return
        if reg == ControlReg:
            if v & 0x40:  # TStartNow
                self._start_timer(self.now)
            if v & 0x80:  # TStopNow
                self._timer_at = -1
            return
        r[reg] = v

    # --- commands (10.3) --------------------------------------------------------------------------------
    def _command_reg(self, v):
        # (k: the one spare local, the field's state or an index: a frame within the VM's 11 words, no heap)
        r = self.regs
        cmd = v & 0x0F
        if cmd != CMD_SOFT_RESET:
            if v & _POWER_DOWN and not self._pd:  # 8.6.2: soft power-down, the field goes off
                k = self._field_on()
                self._pd = True
                self._wake_at = -1
                self._field(k)
            elif not v & _POWER_DOWN and self._pd and self._wake_at < 0:
                self._wake_at = self.now + self.startup_ns  # the wake-up: PowerDown reads 1 meanwhile
        r[CommandReg] = (r[CommandReg] & 0xC0) | (v & 0x20) | (r[CommandReg] & 0x0F)
        if cmd == CMD_NO_CMD_CHANGE:
            return  # only the PowerDown/RcvOff bits were meant
        r[ErrorReg] &= _TEMP_ERR  # 9.3.1.7: command execution clears every error bit but TempErr
        self._crc_on = False
        self._crc_t = -1
        self._tx_end = self._rx_at = self._rx_end = self._rx_stop = -1
        r[CommandReg] = (r[CommandReg] & 0xF0) | cmd
        if cmd == CMD_SOFT_RESET:
            k = self._field_on()
            self._soft_reset()
            self._ready_at = self.now + self.startup_ns  # the datasheet gives no time: as a reset
            self.resets += 1
            self._field(k)
        elif cmd == CMD_CALC_CRC:
            pre = r[ModeReg] & 0x03
            self._crc = (0x0000, 0x6363, 0xA671, 0xFFFF)[pre]
            self._crc_on = True
            if self.fifo_n:
                self._crc_t = self.now + self.crc_ns
            else:
                self._crc_done()
        elif cmd == CMD_TRANSMIT:
            if not self._pd:
                self._transmit()
        elif cmd == CMD_RECEIVE:
            if r[TModeReg] & _T_AUTO:
                self._start_timer(self.now)
        elif cmd == CMD_MEM:
            if self.fifo_n >= 25:
                for k in range(25):
                    self.mem25[k] = self._fifo_pop()
                self.fifo_n = self.fifo_r = 0
            else:
                self.fifo_n = self.fifo_r = 0
                for k in range(25):
                    self._fifo_push(self.mem25[k])
            self._idle()
        elif cmd == CMD_GENERATE_RANDOM_ID:
            for k in range(10):
                self.mem25[k] = self._rand() & 0xFF
            self._idle()
        elif cmd == CMD_MF_AUTHENT:
            r[ErrorReg] |= _PROTOCOL_ERR  # Crypto1 is not emulated
            r[ComIrqReg] |= _ERR_IRQ
            self._idle()
        elif cmd == CMD_IDLE:
            if self._idle_stops_timer:
                self._timer_at = -1
        elif cmd != CMD_TRANSCEIVE:
            self._idle()

    def _crc_run(self):
        # The coprocessor takes the FIFO's bytes one after another, crc_ns each (10.3.1.4).
        while self.fifo_n and self.now >= self._crc_t:
            c = self._crc ^ self._fifo_pop()
            c = (c >> 4) ^ CRC_NIBBLE[c & 0x0F]
            self._crc = (c >> 4) ^ CRC_NIBBLE[c & 0x0F]
            self._crc_t += self.crc_ns
        if self.fifo_n == 0:
            self._crc_t = -1
            self._crc_done()

    def _crc_done(self):
        self.regs[CRCResultRegH] = self._crc >> 8
        self.regs[CRCResultRegL] = self._crc & 0xFF
        self.regs[DivIrqReg] |= _CRC_IRQ  # DivIrqReg CRCIRq: all data processed

    def _rand(self):
        # xorshift16 (7, 9, 8): 16-bit values, so everything stays a small int on a 32-bit port.
        s = self._seed
        s ^= (s << 7) & 0xFFFF
        s ^= s >> 9
        s ^= (s << 8) & 0xFFFF
        self._seed = s
        return s


# The transfers' path calls these by module name, not as self._read: a method is looked up in the instance's
# attribute table first, and that miss walks the emulator's 45 entries to an empty slot (MicroPython's
# tables grow only once full); a module name is found at once.
_emu_read = MFRC522Emu._read
_emu_write = MFRC522Emu._write
_emu_tick = MFRC522Emu._tick
_rf_update = RFUnit._update
_fifo_pop = RFUnit._fifo_pop
_fifo_push = RFUnit._fifo_push


def _before(t, s):
    return t if 0 <= t < s else s


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
