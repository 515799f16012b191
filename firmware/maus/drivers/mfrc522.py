# MFRC522 (NXP) ISO 14443-A reader chip over SPI, and the card protocol on top of it, in one module and
# one class (they are always in RAM together: one module's fixed cost, not three): the ISO 14443-3 type A
# reader side (REQA/WUPA, ANTICOLLISION for 4-, 7- and 10-byte UIDs, SELECT, HLTA), the anticollision
# loop that finds every tag on the pad (scan), and the NTAG21x READ. The tag type (GET_VERSION) is
# tagtype.identify's, WRITE the card writer's (tagwrite.write).
# Over 600 lines on purpose: split into modules, the parts would still be in RAM together, each paying a
# module's fixed heap cost (docs/architecture.md).
#
# Built for polling from a main loop: registers are const(), buffers are made once, the wait for
# an answer ends on the chip's own timer (an empty poll is about 1 ms), the CRC_A of a frame sent
# comes from the chip's CRC coprocessor (CalcCRC); an answer's CRC_A is checked in software. No
# public method lets an exception out: the results are status codes. Nothing on the poll path allocates.
#
# Making the reader object (its buffers), setting the chip up (init: at set-up and when a poll finds it lost
# its set-up), set_gain() and antenna() are maus.drivers.mfrc522_setup's: loaded for that and let go again,
# never for a poll that finds the chip as it left it.
#
# What it does not take on trust (datasheet section numbers from MFRC522 rev. 3.9):
# - after a reset it waits by the clock for the oscillator (8.8.2), bounded, then checks VersionReg;
# - every configuration write is read back (a bit error on the bus can hit any byte);
# - check() reads the configuration back in one burst: a chip that reset itself or lost a register
#   is noticed and set up again by its caller (rfid.Presence does it before every scan);
# - the timer is stopped before each frame (whether Idle stops it the datasheet does not say).
from micropython import const

if False:  # the type checker's only
    from typing import Callable

    from machine import SPI, Pin

from maus import moment

# Status codes.
OK = const(0)
NO_TAG = const(1)  # nothing answered before the timer ran out
ERROR = const(2)  # bad CRC/BCC, wrong length, protocol or bus error
COLLISION = const(3)
NAK = const(4)  # the tag answered with a 4-bit NAK

SPI_HZ = const(4000000)  # default SPI clock (board file "baud"): 8.1.2 allows 10 MHz, jumper wires often not

# Registers (datasheet table 20).
_CommandReg = const(0x01)
_ComIrqReg = const(0x04)
_DivIrqReg = const(0x05)
_ErrorReg = const(0x06)
_FIFODataReg = const(0x09)
_FIFOLevelReg = const(0x0A)
_FIFO_READ = const(0x80 | (_FIFODataReg << 1))  # its read address on the bus (8.1.2.1)
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
_CRC_SPIN = const(200)  # DivIrqReg reads, _CRC_POLL_US apart, before CalcCRC counts as failed
_CRC_POLL_US = const(10)
_ETU_CUS = const(944)  # a bit at 106 kbit/s: 128/fc = 9.44 us (ISO 14443-2), in 1/100 us
_FDT_US = const(80)  # a PICC answers 1172/fc = 86 us after the frame (ISO 14443-3 6.2.1.1)
_POLL_US = const(50)  # ComIrqReg is read this often while an answer may come
# VersionReg: NXP 0x90/0x91/0x92, clones 0x88/0x89 (FM17522/E), 0xB2, 0x12 and more (mfrc522_setup.chip_name).
# None is refused: a chip that answers any version but 0x00/0xFF (MISO floating) is tried, and it is a
# reader if it takes the configuration and reads it back.
_VersionReg = const(0x37)

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


# ISO 14443-3 type A and NTAG21x commands.
_REQA = const(0x26)
_WUPA = const(0x52)
_HLTA = const(0x50)
_READ = const(0x30)
_CT = const(0x88)  # cascade tag
_MAX_CARDS = const(4)
_SETTLE = const(3)  # scans after a broken exchange that start with HLTA (Presence's miss_limit)
_VALS = const(6 * _MAX_CARDS)  # in _wstack: the CLn values one walk found, after the pending branches
_FOUND_N = const(10 * _MAX_CARDS)  # in _found: the UID lengths, after the UIDs
_SWEEP_US = const(400)  # REQA after the walk: an ATQA starts 86 us after the frame (ISO 14443-3 6.2.1.1)


# CRC_A (ISO 14443-3 annex B: reflected polynomial 0x8408, preset 0x6363) four bits at a time.
_CRC_NIBBLE = (0x0000, 0x1081, 0x2102, 0x3183, 0x4204, 0x5285, 0x6306, 0x7387,
               0x8408, 0x9489, 0xA50A, 0xB58B, 0xC60C, 0xD68D, 0xE70E, 0xF78F)


def crc_a(buf, n):
    """CRC_A of buf[:n] (sent low byte first)."""
    c = 0x6363
    t = _CRC_NIBBLE
    for i in range(n):
        c ^= buf[i]
        c = (c >> 4) ^ t[c & 0x0F]
        c = (c >> 4) ^ t[c & 0x0F]
    return c


class MFRC522:
    timeout_us = 1000  # REQA/anticollision/SELECT/READ answer window
    gain = 7  # RFCfgReg RxGain: 0..7 = 18, 23, 18, 23, 33, 38, 43, 48 dB; 48: a weak field (a detuned antenna,
    # a thick lid) is still heard (the reset value 33 dB loses a card a few mm above the pad)
    # Made by mfrc522_setup.make (bare annotations: the compiler keeps nothing of them)
    _spi: "SPI"
    _cs: "Pin"
    _rst: "Pin"
    _sleep: "Callable[[int], None]"  # time.sleep_us, or the caller's
    _w2: bytearray
    _r2: bytearray
    _views: dict
    _reload: int
    _chk_in: bytearray
    ok: bool
    # ISO 14443-A: frame bytes go in _tx[1:], the answer comes in buf (_rxi[1:], rx_bits long); uid, sak
    # of the card just selected; page: the last READ; _cl, _path, _wstack, _queue: anticollision work.
    # (Few attributes: 29 fill the instance's table exactly, py/map.c hash_allocation_sizes.)
    _tx: bytearray
    _rxi: bytearray
    buf: memoryview
    rx_bits: int
    coll_bit: int
    uid: bytearray
    sak: int
    atqa: int
    page: bytearray
    _cl: bytearray
    _path: bytearray
    _wstack: bytearray
    _queue: bytearray
    errors: int
    _collpos_frame: bool
    # the anticollision loop: _settle (scans that start with HLTA), _answered (the last WUPA was
    # answered), _levels (of the card on_card sees), _found (this scan's UIDs, then their lengths)
    _settle: int
    _answered: bool
    _levels: int
    _found: bytearray

    def __init__(self, spi, cs, rst, sleep_us=None):
        # The reader's state and its set-up: mfrc522_setup.make (ok: a known chip took the configuration).
        with moment():
            import maus.drivers.mfrc522_setup

            maus.drivers.mfrc522_setup.make(self, spi, cs, rst, sleep_us)

    # --- bus ----------------------------------------------------------------------------------------
    def _view(self, which, n):
        # _tx[:n] (which 0) or _rxi[:n] (which 1), made once per length.
        k = which * (_FIFO + 2) + n
        v = self._views.get(k)
        if v is None:
            v = memoryview(self._rxi if which else self._tx)[:n]
            self._views[k] = v
        return v

    # Every bus function's frame state (locals + VM stack words, + 3 words per try) is at most 11 words
    # (py/objfun.c VM_MAX_STATE_ON_STACK): it goes on the C stack, not the heap, at every transfer. Hence few
    # locals, and in _xfer a bare except (no exception match: 2 words less) calling _cs_high (1 less than
    # self._cs.value(1)): a handler's 4 reserved words (py/emitbc.c start_except_handler) make 44 bytes.
    def _xfer(self, out, into):
        # One SPI transfer under CS (a write if into is None); CS goes high again whatever happens.
        self._cs.value(0)
        try:
            if into is None:
                self._spi.write(out)
            else:
                self._spi.write_readinto(out, into)
        except:  # noqa: E722 - re-raised: what `except BaseException` does, in a smaller frame
            self._cs_high()
            raise
        self._cs.value(1)

    def _cs_high(self):
        self._cs.value(1)

    def _wr(self, reg, val):
        self._w2[0] = (reg << 1) & 0x7E
        self._w2[1] = val
        self._xfer(self._w2, None)

    def _rd(self, reg):
        self._w2[0] = ((reg << 1) & 0x7E) | 0x80
        self._w2[1] = 0
        self._xfer(self._w2, self._r2)
        return self._r2[1]

    def _fifo_write(self, n):
        # Burst: one address byte, then the n frame bytes of self._tx[1:].
        self._tx[0] = (_FIFODataReg << 1) & 0x7E
        self._xfer(self._view(0, n + 1), None)

    def _fifo_read(self, n):
        # Burst: n read addresses and a closing 0, sent from _tx (every frame is built anew in it before it
        # is sent); the data lands in self.buf[:n].
        for i in range(n):
            self._tx[i] = _FIFO_READ
        self._tx[n] = 0
        self._xfer(self._view(0, n + 1), self._view(1, n + 1))

    # --- set-up ---------------------------------------------------------------------------------------
    def init(self):
        """Hard reset, wait for the oscillator, soft reset, configure (read back), antenna on.
        True if a chip answered (any version) and took the configuration. At set-up and after the chip
        lost its set-up (a poll's check() failed): maus.drivers.mfrc522_setup's, loaded for that moment. False
        too when there is no memory to load it (a game's heap): the reader tries again later."""
        try:
            with moment():
                import maus.drivers.mfrc522_setup

                return maus.drivers.mfrc522_setup.init(self, _CFG)
        except MemoryError:
            return False

    def check(self):
        """True if the chip still holds the configuration init() wrote. One burst read; a mismatch is
        read once more (a bit error on MISO passes), then it counts: the chip reset itself, lost a
        register to a bus error, or went into power-down."""
        try:
            got = self._chk_in
            for _ in range(2):
                self._xfer(_CHK_OUT, got)
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
        """VersionReg: 0x91/0x92 for MFRC522 1.0/2.0, 0x88/0x89/0xB2 for FM17522 clones; 0 on a bus fault
        (0x00 or 0xFF: nothing answers). Its name: mfrc522_setup.chip_name."""
        try:
            return self._rd(_VersionReg)
        except Exception:  # noqa: BLE001
            return 0

    def self_test(self):
        """True if a chip answers (a version other than 0x00/0xFF: MISO floating or held)."""
        v = self.version()
        return v != 0 and v != 0xFF

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

    # --- ISO 14443-A reader side (ISO 14443-3 type A, NTAG21x READ) -----------------------------------------
    def _answer_crc_ok(self, n):
        # The answer has n data bytes followed by a valid CRC_A. Checked here, not by the chip: a chip
        # that stopped answering mid-frame leaves MISO floating, and its "coprocessor" would confirm
        # the garbage (16 bytes of FF with FF FF, or of 00 with 00 00).
        if self.rx_bits != (n + 2) * 8:
            return False
        c = crc_a(self.buf, n)
        return self.buf[n] == c & 0xFF and self.buf[n + 1] == c >> 8

    def _fail(self, st):
        if st == ERROR:
            self.errors += 1
        return st

    # --- ISO 14443-3 --------------------------------------------------------------------------------------
    def _request(self, cmd, timeout_us=0):
        self._tx[1] = cmd
        st = self._transceive(1, 7, timeout_us=timeout_us)  # short frame: 7 bits
        if st == ERROR or st != NO_TAG and self.rx_bits != 16:
            # A broken ATQA: a card sliding onto the pad left the field mid-answer and is back, reset
            # (a partial frame). Ask once more at once; HLTA first sends any tag left READY to IDLE.
            self._halt()
            self._tx[1] = cmd
            st = self._transceive(1, 7, timeout_us=timeout_us)
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
        got = (self.rx_bits + 7) >> 3  # bytes in the FIFO
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
            # Where CollPos counts from the datasheet leaves open: bit 0 of the first FIFO byte (the
            # RxAlign offset included, as NXP's reader library reads it) or the first received bit.
            # The first reading never lies after the true position, and following a bit before the
            # true collision only costs an empty branch of the walk (all tags there agree on it), so
            # it is taken unless it points before the known bits: then only the second fits, and the
            # chip is known to count that way from then on.
            p = self.coll_bit
            if p < 0:
                return ERROR
            bit = known + p if self._collpos_frame else nb * 8 + p
            if bit < known:
                self._collpos_frame = True
                bit = known + p
            if bit >= 32:
                return ERROR
            self.coll_bit = bit
            return COLLISION
        if nb * 8 + self.rx_bits != 40:
            return ERROR
        if cl[4] != cl[0] ^ cl[1] ^ cl[2] ^ cl[3]:
            return ERROR  # BCC
        return OK

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
            self._transceive(n, transmit=True)  # no answer is the answer: transmit only

    def halt(self):
        """HLTA to the selected tag."""
        try:
            self._halt()
        except Exception:  # noqa: BLE001
            self.errors += 1

    # --- NTAG21x ----------------------------------------------------------------------------------------
    def read(self, page):
        """READ: 16 bytes (4 pages) from `page` into self.page. OK, NO_TAG, NAK or ERROR.

        An answer whose CRC fails is asked for once more: the tag stays selected after sending it,
        and the fault may have been on the reader's own bus."""
        try:
            for _ in range(2):
                st = self._command2(_READ, page)
                if st != OK:
                    return self._fail(st)
                if self.rx_bits == 4:
                    return NAK
                if self._answer_crc_ok(16):
                    for i in range(16):
                        self.page[i] = self.buf[i]
                    return OK
            return self._fail(ERROR)
        except Exception:  # noqa: BLE001
            return self._fail(ERROR)

    def _command2(self, cmd, arg):
        # A two-byte command with CRC_A (READ, or tagtype's GET_VERSION with arg < 0); OK when an answer came.
        t = self._tx
        t[1] = cmd
        if arg >= 0:
            t[2] = arg
        n = self._append_crc(1 if arg < 0 else 2)
        if not n:
            return ERROR
        st = self._transceive(n)
        return ERROR if st == COLLISION else st

    # --- every tag on the pad: the ISO 14443-3 anticollision loop -------------------------------------------
    # A binary tree walk of ANTICOLLISION frames at each cascade level finds every UID CLn (the tags
    # stay READY), then SELECT, the caller's callback, HLTA; tags left behind are woken again with WUPA
    # and selected by their known UID. A card whose answer a stronger card masked (no collision to see)
    # is found by a REQA after the walk, or selected directly by a UID the caller already knows.
    def _walk(self, level):
        # Find every UID CLn answering at this level by a binary tree walk with ANTICOLLISION
        # frames only (tags stay READY). Fills _wstack[_VALS:]; returns how many were found.
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
                    ws[_VALS + o + i] = cl[i]
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
        if self._settle:
            # A recent scan stopped half way or lost an answer: tags it left READY or ACTIVE
            # would take this WUPA for an error and fall back to IDLE/HALT in silence (NTAG21x
            # 8.4). Any frame does that; HLTA does it without waiting for an answer.
            self._settle -= 1
            self._halt()
        e0 = self.errors
        st = self._request(_WUPA)
        if st != OK:
            if st != NO_TAG or self._answered:
                self._settle = _SETTLE
            self._answered = False
            return 0
        self._answered = True
        q = self._queue
        qn = 1
        q[0] = 0  # the empty path: start at cascade level 1
        fresh = True
        swept = False
        found = 0
        path = self._path
        cl = self._cl
        while found < _MAX_CARDS:
            if qn == 0:
                # Every path done. A card a stronger one masked heard the others' SELECTs and went
                # back to IDLE; REQA wakes only IDLE tags (the ones found are HALT): walk once more.
                if swept or found == 0 or self._request(_REQA, _SWEEP_US) != OK:
                    break
                swept = True
                qn = 1
                q[0] = 0
                fresh = True
            qn -= 1
            o = qn * 16
            levels = q[o]  # CLn values on the path; all but the last are cascade levels
            for i in range(15):
                path[i] = q[o + 1 + i]
            if not fresh:
                # Tags left behind went back to HALT or IDLE: wake them and select the path again.
                if self._request(_WUPA) != OK or not self._replay(levels - 1):
                    self._settle = _SETTLE
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
                                q[o + 1 + levels * 5 + i] = self._wstack[_VALS + k * 5 + i]
                            qn += 1
                    for i in range(5):
                        path[levels * 5 + i] = self._wstack[_VALS + i]
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
                self.sak = sak
                self._levels = levels
                if not self._seen_before(found, u, n):  # (a card on_card sent back to IDLE, met again)
                    o = found * 10  # remember it
                    for i in range(n):
                        self._found[o + i] = u[i]
                    self._found[_FOUND_N + found] = n
                    found += 1
                    try:
                        on_card(u, n, sak)
                    except Exception:  # noqa: BLE001 - the caller's fault must not stop the scan
                        self.errors += 1
                self._halt()
                break
        if self.errors != e0:
            self._settle = _SETTLE
        return found

    def _seen_before(self, found, u, n):
        for k in range(found):
            if self._found[_FOUND_N + k] != n:
                continue
            o = k * 10
            for i in range(n):
                if self._found[o + i] != u[i]:
                    break
            else:
                return True
        return False

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

    def select_known(self, uid, n, on_card, off=0):
        """Wake the pad and SELECT the tag with the UID uid[off:off+n] (4, 7 or 10 bytes) without
        anticollision: a tag that a stronger one masks in every walk still answers its own SELECT.
        on_card(uid, n, sak) runs while it is selected, then it is halted. 1 if it answered, else 0."""
        try:
            levels = 1 if n == 4 else 2 if n == 7 else 3 if n == 10 else 0
            if levels == 0:
                return 0
            path = self._path
            src = off
            for lv in range(levels):
                o = lv * 5
                if lv < levels - 1:
                    path[o] = _CT
                    for i in range(3):
                        path[o + 1 + i] = uid[src + i]
                    src += 3
                else:
                    for i in range(4):
                        path[o + i] = uid[src + i]
                path[o + 4] = path[o] ^ path[o + 1] ^ path[o + 2] ^ path[o + 3]
            if self._request(_WUPA) != OK or not self._reselect_path(levels):
                return 0
            u = self.uid
            for i in range(n):
                u[i] = uid[off + i]
            self._levels = levels
            try:
                on_card(u, n, self.sak)
            except Exception:  # noqa: BLE001
                self.errors += 1
            self._halt()
            return 1
        except Exception:  # noqa: BLE001
            self.errors += 1
            return 0

    def _reselect_path(self, levels):
        # SELECT every level of self._path (the tags are READY after a REQA/WUPA); sets self.sak.
        if not self._replay(levels - 1):
            return False
        cl = self._cl
        for i in range(5):
            cl[i] = self._path[(levels - 1) * 5 + i]
        sak = self._select(levels - 1)
        if sak < 0 or sak & 0x04:
            return False
        self.sak = sak
        return True
