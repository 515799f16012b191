# MFRC522 (NXP) ISO 14443-A reader chip over SPI; the card protocol (REQA/WUPA, anticollision for
# 4-, 7- and 10-byte UIDs, SELECT, HLTA, NTAG21x READ/WRITE, scan) is iso14443a.PCD.
#
# Built for polling from a main loop: registers are const(), buffers are made once, the wait for
# an answer ends on the chip's own timer (an empty poll is about 1 ms), CRC_A comes from the chip's
# CRC coprocessor (CalcCRC). No public method lets an exception out: the results are status codes.
from micropython import const

from maus.drivers.anticoll import Scanner
from maus.drivers.iso14443a import COLLISION, ERROR, NAK, NO_TAG, OK  # noqa: F401 - re-exported

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
_VersionReg = const(0x37)

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
_HARD_ERR = const(0x13)  # ErrorReg: BufferOvfl, ParityErr, ProtocolErr
_COLL_ERR = const(0x08)
_COLL_POS_NOT_VALID = const(0x20)
_START_SEND = const(0x80)
_FLUSH = const(0x80)

_TICK_NS = const(9956)  # timer tick with TPrescaler 0x43: (2*67+1)/13.56 MHz
_PRESCALER = const(0x43)
_FIFO = const(64)
_LONGEST_ANSWER_US = const(5600)
_NO_VIEW = memoryview(b"")
_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0xB2)  # FM17522, MFRC522 0.0/1.0/2.0, FM17522E


class MFRC522(Scanner):
    timeout_us = 1000  # REQA/anticollision/SELECT/READ answer window
    gain = 4  # RFCfgReg RxGain: 0..7 = 18, 23, 18, 23, 33, 38, 43, 48 dB

    def __init__(self, spi, cs, rst):
        Scanner.__init__(self)
        self._spi = spi
        self._cs = cs
        self._rst = rst
        self._w2 = bytearray(2)
        self._r2 = bytearray(2)
        self._rxo = bytearray(1 + _FIFO)  # FIFO read addresses (_tx, _rxi and buf are PCD's)
        self._views = [_NO_VIEW] * (3 * (_FIFO + 2))  # memoryviews by length, made on first use
        self._reload = -1
        cs.value(1)
        self.ok = self.init()

    # --- bus ----------------------------------------------------------------------------------------
    def _view(self, which, n):
        k = which * (_FIFO + 2) + n
        v = self._views[k]
        if len(v) == 0:
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
    def init(self):
        """Hard reset, soft reset, timer and modulation set-up, antenna on. True if a chip answered."""
        try:
            self._rst.value(0)
            self._rst.value(1)
            self._wr(_CommandReg, _SOFT_RESET)
            for _ in range(100):
                if not self._rd(_CommandReg) & 0x10:  # PowerDown cleared: oscillator running
                    break
            self._wr(_TModeReg, 0x80 | (_PRESCALER >> 8))  # TAuto: timer starts after each frame
            self._wr(_TPrescalerReg, _PRESCALER & 0xFF)  # 13.56 MHz / 135 = ~100 kHz tick
            self._reload = -1
            self._wr(_TxASKReg, 0x40)  # Force100ASK
            self._wr(_ModeReg, 0x3D)  # CRC preset 0x6363 (ISO 14443-3 CRC_A)
            self._wr(_TxModeReg, 0x00)  # 106 kbit/s, no hardware CRC: CalcCRC is used
            self._wr(_RxModeReg, 0x00)
            self._wr(_CollReg, 0x00)  # ValuesAfterColl = 0: bits after a collision read 0
            self.set_gain(self.gain)
            self.antenna(True)
            return self.version() in _VERSIONS
        except Exception:  # noqa: BLE001 - a bus fault means "no reader"
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

    def set_gain(self, gain):
        """Receiver gain 0..7 (RFCfgReg RxGain); 4 = 33 dB, 7 = 48 dB for a pad under a thick lid."""
        self.gain = min(7, max(0, gain))
        try:
            self._wr(_RFCfgReg, self.gain << 4)
        except Exception:  # noqa: BLE001
            pass

    def antenna(self, on):
        try:
            v = self._rd(_TxControlReg)
            self._wr(_TxControlReg, v | 0x03 if on else v & 0xFC)  # Tx1RFEn, Tx2RFEn
        except Exception:  # noqa: BLE001
            pass

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
        # The chip's timer (or the end of the answer) ends every wait; this bound only stops a dead
        # chip from hanging the loop. A register read takes at least 1 us (16 bits at <= 16 MHz);
        # the timer stops when an answer starts, and a full FIFO takes 5.5 ms at 106 kbit/s.
        spin = timeout_us + _LONGEST_ANSWER_US
        while True:
            irq = self._rd(_ComIrqReg)
            if irq & done:
                break
            if irq & _TIMER_IRQ:
                self._wr(_CommandReg, _IDLE)
                return NO_TAG
            spin -= 1
            if spin == 0:
                self._wr(_CommandReg, _IDLE)
                return ERROR
        if transmit:
            return OK
        err = self._rd(_ErrorReg)
        if err & _HARD_ERR:
            return ERROR
        n = self._rd(_FIFOLevelReg) & 0x7F
        if n == 0 or n > _FIFO:
            return ERROR
        last = self._rd(_ControlReg) & 0x07
        self._fifo_read(n)
        self.rx_len = n
        self.rx_bits = n * 8 if last == 0 else (n - 1) * 8 + last
        if err & _COLL_ERR:
            c = self._rd(_CollReg)
            self.coll_bit = -1 if c & _COLL_POS_NOT_VALID else ((c & 0x1F) or 32) - 1
            return COLLISION
        return OK

    def _crc(self, src, n):
        # CRC_A of n bytes from src (self._tx[1:] or self.buf) by the CalcCRC command; -1 on failure.
        if src is not self._tx:
            t = self._tx
            for i in range(n):
                t[i + 1] = src[i]
        self._wr(_CommandReg, _IDLE)
        self._wr(_DivIrqReg, _CRC_IRQ)  # clear CRCIRq
        self._wr(_FIFOLevelReg, _FLUSH)
        self._fifo_write(n)
        self._wr(_CommandReg, _CALC_CRC)
        for _ in range(200):
            if self._rd(_DivIrqReg) & _CRC_IRQ:
                self._wr(_CommandReg, _IDLE)
                return self._rd(_CRCResultRegL) | self._rd(_CRCResultRegH) << 8
        self._wr(_CommandReg, _IDLE)
        return -1
