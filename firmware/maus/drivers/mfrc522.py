# MFRC522 (NXP) ISO 14443-A reader chip over SPI; the card protocol (REQA/WUPA, anticollision for
# 4-, 7- and 10-byte UIDs, SELECT, HLTA, NTAG21x READ/GET_VERSION, scan) is iso14443a.PCD and
# anticoll.Scanner; WRITE (the card writer's) is tagwrite.write.
#
# Built for polling from a main loop: registers are const(), buffers are made once, the wait for
# an answer ends on the chip's own timer (an empty poll is about 1 ms), the CRC_A of a frame sent
# comes from the chip's CRC coprocessor (CalcCRC); an answer's CRC_A is checked in software. No
# public method lets an exception out: the results are status codes.
#
# Making the reader object (its buffers), set_gain() and antenna() are maus.drivers.mfrc522_setup's:
# loaded for that and let go again, never per poll.
#
# What it does not take on trust (datasheet section numbers from MFRC522 rev. 3.9):
# - after a reset it waits by the clock for the oscillator (8.8.2), bounded, then checks VersionReg;
# - every configuration write is read back (a bit error on the bus can hit any byte);
# - check() reads the configuration back in one burst: a chip that reset itself or lost a register
#   is noticed and set up again by its caller (rfid.Presence does it before every scan);
# - the timer is stopped before each frame (whether Idle stops it the datasheet does not say).
from micropython import const

if False:  # the type checker's only
    from typing import Any

from maus import call_unloaded
from maus.drivers.anticoll import Scanner
from maus.drivers.iso14443a import COLLISION, ERROR, NAK, NO_TAG, OK  # noqa: F401 - re-exported

SPI_HZ = const(4000000)  # default SPI clock (board file "baud"): 8.1.2 allows 10 MHz, jumper wires often not

# Registers (datasheet table 20).
_CommandReg = const(0x01)
_ComIrqReg = const(0x04)
_DivIrqReg = const(0x05)
_ErrorReg = const(0x06)
_FIFODataReg = const(0x09)
_FIFOLevelReg = const(0x0A)
_ControlReg = const(0x0C)
_BitFramingReg = const(0x0D)
_CollReg = const(0x0E)
_ModeReg = const(0x11)
_TxModeReg = const(0x12)
_RxModeReg = const(0x13)
_TxControlReg = const(0x14)
_TxASKReg = const(0x15)
_CRCResultRegH = const(0x21)
_CRCResultRegL = const(0x22)
_RFCfgReg = const(0x26)
_TModeReg = const(0x2A)
_TPrescalerReg = const(0x2B)
_TReloadRegH = const(0x2C)
_TReloadRegL = const(0x2D)

# Commands.
_IDLE = const(0x00)
_CALC_CRC = const(0x03)
_TRANSMIT = const(0x04)
_TRANSCEIVE = const(0x0C)
_SOFT_RESET = const(0x0F)

# Bits.
_RX_IRQ = const(0x20)
_IDLE_IRQ = const(0x10)
_TIMER_IRQ = const(0x01)
_CRC_IRQ = const(0x04)
_POWER_DOWN = const(0x10)
_HARD_ERR = const(0x13)  # ErrorReg: BufferOvfl, ParityErr, ProtocolErr
_COLL_ERR = const(0x08)
_COLL_POS_NOT_VALID = const(0x20)
_START_SEND = const(0x80)
_FLUSH = const(0x80)
_T_STOP_NOW = const(0x80)

_TICK_NS = const(9956)  # timer tick with TPrescaler 0x43: (2*67+1)/13.56 MHz (8.5)
_PRESCALER = const(0x43)
_FIFO = const(64)
_LONGEST_ANSWER_US = const(5600)
_RESET_LOW_US = const(2)  # 8.8.1: NRSTPD low for at least 100 ns
_TD_US = const(50)  # 8.8.2: td = 1024/27 = 37.74 us once the crystal runs, plus margin
_READY_POLL_US = const(10000)  # the longest wait between two looks
_READY_MAX_US = const(150000)  # 8.8.2 leaves the crystal's start-up open; miguelbalboa allows 3 x 50 ms
_TRIES = const(3)  # configuration writes that must read back right
_CRC_SPIN = const(200)  # DivIrqReg reads, _CRC_POLL_US apart, before CalcCRC counts as failed
_CRC_POLL_US = const(10)
_ETU_CUS = const(944)  # a bit at 106 kbit/s: 128/fc = 9.44 us (ISO 14443-2), in 1/100 us
_FDT_US = const(80)  # a PICC answers 1172/fc = 86 us after the frame (ISO 14443-3 6.2.1.1)
_POLL_US = const(50)  # ComIrqReg is read this often while an answer may come
_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0xB2, 0x12)  # FM17522, MFRC522 0.0/1.0/2.0, FM17522E, a common clone
_VersionReg = const(0x37)
_SETUP = "maus.drivers.mfrc522_setup"

# The configuration init() writes: (register, value, readback mask). Value 0xFF in RFCfgReg means the
# gain, in TReloadRegH/L the answer window (both set at run time). CommandReg: PowerDown must read 0.
_CFG = bytes((
    _TModeReg, 0x80 | (_PRESCALER >> 8), 0xFF,  # TAuto: the timer starts after each frame
    _TPrescalerReg, _PRESCALER & 0xFF, 0xFF,  # 13.56 MHz / 135 = ~100 kHz tick
    _TxASKReg, 0x40, 0xFF,  # Force100ASK
    _ModeReg, 0x3D, 0xFF,  # CRC preset 0x6363 (ISO 14443-3 CRC_A)
    _TxModeReg, 0x00, 0xFF,  # 106 kbit/s, no hardware CRC: CalcCRC is used
    _RxModeReg, 0x00, 0xFF,
    _CollReg, 0x00, 0x80,  # ValuesAfterColl = 0: bits after a collision read 0 (the rest is status)
    _RFCfgReg, 0xFF, 0x70,  # RxGain
    _TxControlReg, 0x83, 0x03,  # Tx1RFEn, Tx2RFEn: antenna on
))
_NCFG = const(9)
# check()'s burst: a read address for each configuration register, TReload H/L and CommandReg, then 0.
_CHK_OUT = bytes([0x80 | _CFG[3 * i] << 1 for i in range(_NCFG)]
                 + [0x80 | _TReloadRegH << 1, 0x80 | _TReloadRegL << 1, 0x80 | _CommandReg << 1, 0])


class MFRC522(Scanner):
    timeout_us = 1000  # REQA/anticollision/SELECT/READ answer window
    gain = 4  # RFCfgReg RxGain: 0..7 = 18, 23, 18, 23, 33, 38, 43, 48 dB
    # Made by mfrc522_setup.make (bare annotations: the compiler keeps nothing of them)
    _spi: "Any"
    _cs: "Any"
    _rst: "Any"
    _sleep: "Any"
    _w2: bytearray
    _r2: bytearray
    _rxo: bytearray
    _views: dict
    _reload: int
    _chk_in: bytearray
    ok: bool

    def __init__(self, spi, cs, rst, sleep_us=None):
        # The reader's state and its set-up: mfrc522_setup.make (ok: a known chip took the configuration).
        call_unloaded(_SETUP, "make", self, spi, cs, rst, sleep_us)

    # --- bus ----------------------------------------------------------------------------------------
    def _view(self, which, n):
        k = which * (_FIFO + 2) + n
        v = self._views.get(k)
        if v is None:
            v = memoryview((self._tx, self._rxo, self._rxi)[which])[:n]
            self._views[k] = v
        return v

    def _wr(self, reg, val):
        b = self._w2
        b[0] = (reg << 1) & 0x7E
        b[1] = val
        self._cs.value(0)
        try:
            self._spi.write(b)
        finally:
            self._cs.value(1)

    def _rd(self, reg):
        b = self._w2
        b[0] = ((reg << 1) & 0x7E) | 0x80
        b[1] = 0
        self._cs.value(0)
        try:
            self._spi.write_readinto(b, self._r2)
        finally:
            self._cs.value(1)
        return self._r2[1]

    def _fifo_write(self, n):
        # Burst: one address byte, then the n frame bytes of self._tx[1:].
        self._tx[0] = (_FIFODataReg << 1) & 0x7E
        self._cs.value(0)
        try:
            self._spi.write(self._view(0, n + 1))
        finally:
            self._cs.value(1)

    def _fifo_read(self, n):
        # Burst: n read addresses and a closing 0; the data lands in self.buf[:n].
        o = self._rxo
        a = ((_FIFODataReg << 1) & 0x7E) | 0x80
        for i in range(n):
            o[i] = a
        o[n] = 0
        self._cs.value(0)
        try:
            self._spi.write_readinto(self._view(1, n + 1), self._view(2, n + 1))
        finally:
            self._cs.value(1)

    # --- set-up ---------------------------------------------------------------------------------------
    def _set(self, reg, val, mask=0xFF):
        # A configuration write that must read back: a bit error may hit the address or the value.
        for _ in range(_TRIES):
            self._wr(reg, val)
            if (self._rd(reg) ^ val) & mask == 0:
                return True
        return False

    def init(self):
        """Hard reset, wait for the oscillator, soft reset, configure (read back), antenna on.
        True if a known chip answered and took the configuration."""
        try:
            self._reload = -1
            self._rst.value(0)
            self._sleep(_RESET_LOW_US)
            self._rst.value(1)  # a rising edge on NRSTPD: hard reset (8.8.1)
            if not self._ready():
                return False  # nothing answers: no chip, no power, or MISO/SCK/CS wiring
            for _ in range(_TRIES):
                # SoftReset as well: a board without RST wired gets its reset here. The chip is back
                # in reset state when TModeReg reads 0 (a bit error may have spoilt the command).
                self._wr(_CommandReg, _SOFT_RESET)
                if self._ready() and self._rd(_TModeReg) == 0:
                    break
            else:
                return False
            version = self._rd(_VersionReg)
            for _ in range(_TRIES):
                for i in range(_NCFG):
                    reg = _CFG[3 * i]
                    val = _CFG[3 * i + 1]
                    if reg == _RFCfgReg:
                        val = self.gain << 4
                    if not self._set(reg, val, _CFG[3 * i + 2]):
                        return False
                if self.check():  # all of it at once: a later write's bit error can hit an earlier register
                    return version in _VERSIONS
            return False
        except Exception:  # noqa: BLE001 - a bus fault means "no reader"
            return False

    def _ready(self):
        # 8.8.2: the chip cannot be addressed until its oscillator runs and td has passed; until then
        # MISO floats (reads 0x00 or 0xFF). Ready: PowerDown reads 0 and VersionReg is a known one.
        wait = _TD_US
        waited = 0
        while waited < _READY_MAX_US:
            self._sleep(wait)  # first td, then twice as long each time, at most _READY_POLL_US
            waited += wait
            if not self._rd(_CommandReg) & _POWER_DOWN and self._rd(_VersionReg) in _VERSIONS:
                return True
            wait = min(wait * 2, _READY_POLL_US)
        return False

    def check(self):
        """True if the chip still holds the configuration init() wrote. One burst read; a mismatch is
        read once more (a bit error on MISO passes), then it counts: the chip reset itself, lost a
        register to a bus error, or went into power-down."""
        try:
            got = self._chk_in
            for _ in range(2):
                self._cs.value(0)
                try:
                    self._spi.write_readinto(_CHK_OUT, got)
                finally:
                    self._cs.value(1)
                for i in range(_NCFG):
                    val = _CFG[3 * i + 1]
                    if _CFG[3 * i] == _RFCfgReg:
                        val = self.gain << 4
                    if (got[i + 1] ^ val) & _CFG[3 * i + 2]:
                        break
                else:
                    r = self._reload
                    if (r < 0 or got[10] == r >> 8 and got[11] == r & 0xFF) and not got[12] & _POWER_DOWN:
                        return True
            return False
        except Exception:  # noqa: BLE001
            return False

    def version(self):
        """VersionReg: 0x91/0x92 for MFRC522 1.0/2.0, 0x88/0xB2 for FM17522 clones; 0 on a bus fault."""
        try:
            return self._rd(_VersionReg)
        except Exception:  # noqa: BLE001
            return 0

    def self_test(self):
        """True if the chip answers with a known version."""
        return self.version() in _VERSIONS

    # --- frames ---------------------------------------------------------------------------------------
    def _set_timeout(self, us):
        r = us * 1000 // _TICK_NS
        if r != self._reload:
            self._wr(_TReloadRegH, r >> 8)
            self._wr(_TReloadRegL, r & 0xFF)
            self._reload = r

    def _transceive(self, n, last_bits=0, align=0, timeout_us=0, transmit=False):
        # Send self._tx[1:n+1] (last byte has last_bits bits, 0 = 8) and collect the answer.
        self._wr(_CommandReg, _IDLE)
        self._wr(_ControlReg, _T_STOP_NOW)  # a timer still running from the last frame would fire into this one
        self._wr(_ComIrqReg, 0x7F)  # clear every interrupt request bit
        self._wr(_FIFOLevelReg, _FLUSH)
        self._fifo_write(n)
        timeout_us = timeout_us or self.timeout_us
        self._set_timeout(timeout_us)
        framing = (align << 4) | last_bits
        if not transmit:
            self._wr(_CommandReg, _TRANSCEIVE)
            self._wr(_BitFramingReg, _START_SEND | framing)
            done = _RX_IRQ | _IDLE_IRQ
        else:
            self._wr(_BitFramingReg, framing)
            self._wr(_CommandReg, _TRANSMIT)
            done = _IDLE_IRQ
        # The frame itself is on the air for its bit times (a SELECT for 0.8 ms): no use asking before.
        # Then the chip's timer (or the end of the answer) ends the wait; the bound only stops a dead
        # chip from hanging the loop: the timer stops when an answer starts, and a full FIFO takes
        # 5.5 ms at 106 kbit/s.
        bits = n * 8 if last_bits == 0 else (n - 1) * 8 + last_bits
        self._sleep((bits + bits // 8 + 2) * _ETU_CUS // 100 + _FDT_US)
        waited = 0
        while True:
            irq = self._rd(_ComIrqReg)
            if irq & done:
                break
            if irq & _TIMER_IRQ:
                self._wr(_CommandReg, _IDLE)
                return NO_TAG
            if waited > timeout_us + _LONGEST_ANSWER_US:
                self._wr(_CommandReg, _IDLE)
                return ERROR
            self._sleep(_POLL_US)
            waited += _POLL_US
        if transmit:
            return OK
        # A collision first (as NXP's reader library): the chip may flag the collided byte's parity as
        # well, and the bits before the collision are still good.
        coll = self._rd(_ErrorReg)
        if coll & _HARD_ERR and not coll & _COLL_ERR:
            return ERROR
        n = self._rd(_FIFOLevelReg) & 0x7F
        if n == 0 or n > _FIFO:
            return ERROR
        last = self._rd(_ControlReg) & 0x07
        self._fifo_read(n)
        self.rx_len = n
        self.rx_bits = n * 8 if last == 0 else (n - 1) * 8 + last
        if not coll & _COLL_ERR:
            return OK
        c = self._rd(_CollReg)
        self.coll_bit = -1 if c & _COLL_POS_NOT_VALID else ((c & 0x1F) or 32) - 1
        return COLLISION

    def _append_crc(self, n):
        # Append the CRC_A of the frame self._tx[1:n+1], from the CalcCRC command; the new length, or 0.
        self._wr(_CommandReg, _IDLE)
        self._wr(_DivIrqReg, _CRC_IRQ)  # clear CRCIRq
        self._wr(_FIFOLevelReg, _FLUSH)
        self._fifo_write(n)
        self._wr(_CommandReg, _CALC_CRC)
        for _ in range(_CRC_SPIN):  # the coprocessor takes its time per byte (8.4 gives no figure)
            if self._rd(_DivIrqReg) & _CRC_IRQ:
                self._wr(_CommandReg, _IDLE)
                t = self._tx
                t[n + 1] = self._rd(_CRCResultRegL)
                t[n + 2] = self._rd(_CRCResultRegH)
                return n + 2
            self._sleep(_CRC_POLL_US)
        self._wr(_CommandReg, _IDLE)
        return 0
