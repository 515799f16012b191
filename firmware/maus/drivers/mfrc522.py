# MFRC522 (NXP) ISO 14443-A reader over SPI: REQA/WUPA, bitwise anticollision for 4-, 7- and
# 10-byte UIDs, SELECT, HLTA, NTAG21x READ/WRITE.
#
# Built for polling from a main loop: registers are const(), buffers are made once, the wait for
# an answer ends on the chip's own timer (an empty poll is about 1 ms), CRC_A comes from the chip's
# CRC coprocessor (CalcCRC). No method lets an exception out: the results are status codes.
from micropython import const

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
_TX_IRQ = const(0x40)
_RX_IRQ = const(0x20)
_IDLE_IRQ = const(0x10)
_ERR_IRQ = const(0x02)
_TIMER_IRQ = const(0x01)
_CRC_IRQ = const(0x04)
_HARD_ERR = const(0x13)  # ErrorReg: BufferOvfl, ParityErr, ProtocolErr
_COLL_ERR = const(0x08)
_COLL_POS_NOT_VALID = const(0x20)
_START_SEND = const(0x80)
_FLUSH = const(0x80)

# ISO 14443-A / NTAG commands.
_REQA = const(0x26)
_WUPA = const(0x52)
_HLTA = const(0x50)
_READ = const(0x30)
_WRITE = const(0xA2)
_CT = const(0x88)  # cascade tag
_ACK = const(0x0A)

# Status codes.
OK = const(0)
NO_TAG = const(1)  # nothing answered before the timer ran out
ERROR = const(2)  # bad CRC/BCC, wrong length, protocol or bus error
COLLISION = const(3)
NAK = const(4)  # the tag answered with a 4-bit NAK

_TICK_NS = const(9956)  # timer tick with TPrescaler 0x43: (2*67+1)/13.56 MHz
_PRESCALER = const(0x43)
_FIFO = const(64)
_MAX_CARDS = const(4)
_MAX_SPIN = const(20000)  # register reads before a wait gives up (a dead or absent chip)
_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0xB2)  # FM17522, MFRC522 0.0/1.0/2.0, FM17522E


class MFRC522:
    timeout_us = 1000  # REQA/anticollision/SELECT/READ answer window
    write_timeout_us = 10000  # NTAG21x EEPROM write takes about 4.1 ms
    gain = 4  # RFCfgReg RxGain: 0..7 = 18, 23, 18, 23, 33, 38, 43, 48 dB

    def __init__(self, spi, cs, rst):
        self._spi = spi
        self._cs = cs
        self._rst = rst
        self._w2 = bytearray(2)
        self._r2 = bytearray(2)
        self._tx = bytearray(1 + _FIFO)  # FIFODataReg address + frame
        self._rxo = bytearray(1 + _FIFO)  # FIFO read addresses
        self._rxi = bytearray(1 + _FIFO)
        self._views = [None] * (3 * (_FIFO + 2))  # memoryviews by length, made on first use
        self.buf = memoryview(self._rxi)[1:]  # the last answer
        self.rx_len = 0
        self.rx_bits = 0
        self.coll_bit = -1
        self._reload = -1
        self.uid = bytearray(10)  # the card just selected by scan()
        self.uid_len = 0
        self.sak = 0
        self.atqa = 0
        self.page = bytearray(16)  # the last READ
        self._cl = bytearray(5)  # UID CLn + BCC being resolved
        self._path = bytearray(15)  # CLn of the levels selected so far
        self._vals = bytearray(5 * _MAX_CARDS)  # CLn values found by one anticollision walk
        self._wstack = bytearray(6 * _MAX_CARDS)  # pending walk branches: 5 bytes + known bits
        self._queue = bytearray(16 * _MAX_CARDS)  # pending cards: levels + path
        self.errors = 0  # operations that ended in ERROR (a fault counter)
        cs.value(1)
        self.ok = self.init()

    # --- bus ----------------------------------------------------------------------------------------
    def _view(self, which, n):
        k = which * (_FIFO + 2) + n
        v = self._views[k]
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

    def _transceive(self, n, last_bits=0, align=0, timeout_us=0, cmd=_TRANSCEIVE):
        # Send self._tx[1:n+1] (last byte has last_bits bits, 0 = 8) and collect the answer.
        self._wr(_CommandReg, _IDLE)
        self._wr(_ComIrqReg, 0x7F)  # clear every interrupt request bit
        self._wr(_FIFOLevelReg, _FLUSH)
        self._fifo_write(n)
        self._set_timeout(timeout_us or self.timeout_us)
        self._wr(_CommandReg, cmd)
        framing = (align << 4) | last_bits
        if cmd == _TRANSCEIVE:
            self._wr(_BitFramingReg, _START_SEND | framing)
            done = _RX_IRQ | _IDLE_IRQ
        else:
            self._wr(_BitFramingReg, framing)
            done = _IDLE_IRQ
        spin = _MAX_SPIN
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
        if cmd != _TRANSCEIVE:
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

    def _append_crc(self, n):
        # Append CRC_A to the frame self._tx[1:n+1]; returns the new length or 0.
        c = self._crc(self._tx, n)
        if c < 0:
            return 0
        self._tx[n + 1] = c & 0xFF
        self._tx[n + 2] = c >> 8
        return n + 2

    def _answer_crc_ok(self, n):
        # The answer has n data bytes followed by a valid CRC_A.
        if self.rx_len != n + 2 or self.rx_bits != (n + 2) * 8:
            return False
        c = self._crc(self.buf, n)
        return c >= 0 and self.buf[n] == c & 0xFF and self.buf[n + 1] == c >> 8

    def _fail(self, st):
        if st == ERROR:
            self.errors += 1
        return st

    # --- ISO 14443-3 --------------------------------------------------------------------------------------
    def _request(self, cmd):
        self._tx[1] = cmd
        st = self._transceive(1, 7)  # short frame: 7 bits
        if st == COLLISION:
            return OK  # several tags with different ATQAs: still "tags present"
        if st != OK:
            return st
        if self.rx_bits != 16:
            return ERROR
        self.atqa = self.buf[0] | self.buf[1] << 8
        return OK

    def request(self, wake=False):
        """REQA (or WUPA if wake: halted tags answer too). OK if any tag answered, else NO_TAG/ERROR."""
        try:
            return self._fail(self._request(_WUPA if wake else _REQA))
        except Exception:  # noqa: BLE001
            return self._fail(ERROR)

    def _anticoll(self, level, known):
        # One ANTICOLLISION frame at cascade level 0..2 with `known` bits of self._cl known.
        nb = known >> 3
        rem = known & 7
        t = self._tx
        t[1] = 0x93 + 2 * level  # SEL: 0x93, 0x95, 0x97
        t[2] = ((2 + nb) << 4) | rem  # NVB: bytes and bits sent
        cl = self._cl
        n = nb + (1 if rem else 0)
        for i in range(n):
            t[3 + i] = cl[i]
        st = self._transceive(2 + n, rem, rem)
        if st != OK and st != COLLISION:
            return st
        # Merge the answer: its first bit lands at bit `known` of the field (RxAlign = rem).
        got = self.rx_len
        if nb + got > 5:
            return ERROR
        b = self.buf
        for i in range(got):
            v = b[i]
            if i == 0 and rem:
                m = (1 << rem) - 1
                v = (cl[nb] & m) | (v & ~m & 0xFF)
            cl[nb + i] = v
        if st == COLLISION:
            # CollPos counts from bit 0 of the first FIFO byte, so it includes RxAlign.
            if self.coll_bit < 0:
                return ERROR
            bit = nb * 8 + self.coll_bit
            if bit < known or bit >= 32:
                return ERROR
            self.coll_bit = bit
            return COLLISION
        if nb * 8 + self.rx_bits != 40:
            return ERROR
        if cl[4] != cl[0] ^ cl[1] ^ cl[2] ^ cl[3]:
            return ERROR  # BCC
        return OK

    def _walk(self, level):
        # Find every UID CLn answering at this level by a binary tree walk with ANTICOLLISION
        # frames only (tags stay READY). Fills self._vals; returns how many were found.
        cl = self._cl
        ws = self._wstack
        depth = 0
        found = 0
        known = 0
        for i in range(5):
            cl[i] = 0
        steps = 0
        while found < _MAX_CARDS and steps < 40 * _MAX_CARDS:
            steps += 1
            st = self._anticoll(level, known)
            if st == COLLISION:
                bit = self.coll_bit
                if depth < _MAX_CARDS:  # remember the 0 branch for later
                    o = depth * 6
                    for i in range(5):
                        ws[o + i] = cl[i]
                    ws[o + (bit >> 3)] &= ~(1 << (bit & 7)) & 0xFF
                    ws[o + 5] = bit + 1
                    depth += 1
                cl[bit >> 3] |= 1 << (bit & 7)  # follow the 1 branch now
                known = bit + 1
                continue
            if st == OK:
                o = found * 5
                for i in range(5):
                    self._vals[o + i] = cl[i]
                found += 1
            elif st == ERROR:
                self.errors += 1
            if depth == 0:
                break
            depth -= 1
            o = depth * 6
            for i in range(5):
                cl[i] = ws[o + i]
            known = ws[o + 5]
        return found

    def _select(self, level):
        # SELECT the UID CLn in self._cl: returns SAK (0..255) or -1.
        t = self._tx
        t[1] = 0x93 + 2 * level
        t[2] = 0x70  # NVB: all 40 bits
        for i in range(5):
            t[3 + i] = self._cl[i]
        n = self._append_crc(7)
        if not n:
            return -1
        if self._transceive(n) != OK or not self._answer_crc_ok(1):
            return -1
        return self.buf[0]

    def _halt(self):
        t = self._tx
        t[1] = _HLTA
        t[2] = 0x00
        n = self._append_crc(2)
        if n:
            self._transceive(n, cmd=_TRANSMIT)  # no answer is the answer: transmit only

    def halt(self):
        """HLTA to the selected tag."""
        try:
            self._halt()
        except Exception:  # noqa: BLE001
            self.errors += 1

    def scan(self, on_card):
        """Find every tag on the pad (up to 4), selecting each in turn.

        on_card(uid, uid_len, sak) is called while the tag is selected (it may READ/WRITE), then the
        tag is halted. Halted tags answer the next scan's WUPA. Returns the number of tags found.
        """
        try:
            return self._scan(on_card)
        except Exception:  # noqa: BLE001 - a bus fault ends the scan
            self.errors += 1
            return 0

    def _scan(self, on_card):
        if self._request(_WUPA) != OK:
            return 0
        q = self._queue
        qn = 1
        q[0] = 0  # the empty path: start at cascade level 1
        fresh = True
        found = 0
        path = self._path
        cl = self._cl
        while qn > 0 and found < _MAX_CARDS:
            qn -= 1
            o = qn * 16
            levels = q[o]  # CLn values on the path; all but the last are cascade levels
            for i in range(15):
                path[i] = q[o + 1 + i]
            if not fresh:
                # Tags left behind went back to HALT or IDLE: wake them and select the path again.
                if self._request(_WUPA) != OK or not self._replay(levels - 1):
                    continue
            fresh = False
            sel = levels - 1  # the level whose CLn is on the path but not yet selected
            while True:
                if sel < 0:
                    if levels >= 3:
                        break
                    nv = self._walk(levels)
                    if nv == 0:
                        break
                    for k in range(1, nv):  # other branches: revisit later from a fresh WUPA
                        if qn < _MAX_CARDS:
                            o = qn * 16
                            q[o] = levels + 1
                            for i in range(levels * 5):
                                q[o + 1 + i] = path[i]
                            for i in range(5):
                                q[o + 1 + levels * 5 + i] = self._vals[k * 5 + i]
                            qn += 1
                    for i in range(5):
                        path[levels * 5 + i] = self._vals[i]
                    sel = levels
                    levels += 1
                for i in range(5):
                    cl[i] = path[sel * 5 + i]
                sak = self._select(sel)
                if sak < 0:
                    self.errors += 1
                    break
                if sak & 0x04:  # cascade bit: the UID goes on at the next level
                    if cl[0] != _CT:
                        self.errors += 1
                        break
                    sel = -1
                    continue
                # Complete: the UID is the CLn bytes without the cascade tags.
                u = self.uid
                n = 0
                for lv in range(levels):
                    s = lv * 5 + (1 if lv < levels - 1 else 0)
                    for i in range(s, lv * 5 + 4):
                        u[n] = path[i]
                        n += 1
                self.uid_len = n
                self.sak = sak
                found += 1
                try:
                    on_card(u, n, sak)
                except Exception:  # noqa: BLE001 - the caller's fault must not stop the scan
                    self.errors += 1
                self._halt()
                break
        return found

    def _replay(self, levels):
        # SELECT the first `levels` cascade levels of self._path again.
        cl = self._cl
        for lv in range(levels):
            for i in range(5):
                cl[i] = self._path[lv * 5 + i]
            sak = self._select(lv)
            if sak < 0 or not sak & 0x04:
                return False
        return True

    # --- NTAG21x ----------------------------------------------------------------------------------------
    def read(self, page):
        """READ: 16 bytes (4 pages) from `page` into self.page. OK, NO_TAG, NAK or ERROR."""
        try:
            t = self._tx
            t[1] = _READ
            t[2] = page
            n = self._append_crc(2)
            if not n:
                return self._fail(ERROR)
            st = self._transceive(n)
            if st != OK:
                return self._fail(ERROR if st == COLLISION else st)
            if self.rx_bits == 4:
                return NAK
            if not self._answer_crc_ok(16):
                return self._fail(ERROR)
            for i in range(16):
                self.page[i] = self.buf[i]
            return OK
        except Exception:  # noqa: BLE001
            return self._fail(ERROR)

    def write(self, page, data, off=0):
        """WRITE: 4 bytes data[off:off+4] to `page`. OK on ACK; NAK, NO_TAG or ERROR."""
        try:
            t = self._tx
            t[1] = _WRITE
            t[2] = page
            for i in range(4):
                t[3 + i] = data[off + i]
            n = self._append_crc(6)
            if not n:
                return self._fail(ERROR)
            st = self._transceive(n, timeout_us=self.write_timeout_us)
            if st != OK:
                return self._fail(ERROR if st == COLLISION else st)
            if self.rx_bits != 4:
                return self._fail(ERROR)
            return OK if self.buf[0] & 0x0F == _ACK else NAK
        except Exception:  # noqa: BLE001
            return self._fail(ERROR)
