# ISO 14443-A reader protocol (ISO 14443-3 type A) and the NFC Forum Type 2 commands of NTAG21x,
# on top of a PCD chip driver that provides _transceive() and _append_crc() (mfrc522.MFRC522 does).
#
# anticoll.Scanner adds scan(): every tag on the pad; the tag type (GET_VERSION) is tagtype.identify's,
# WRITE the card writer's (tagwrite.write). Nothing here allocates.
from micropython import const

if False:  # the type checker's only
    from typing import Any

# Status codes.
OK = const(0)
NO_TAG = const(1)  # nothing answered before the timer ran out
ERROR = const(2)  # bad CRC/BCC, wrong length, protocol or bus error
COLLISION = const(3)
NAK = const(4)  # the tag answered with a 4-bit NAK

_REQA = const(0x26)
_WUPA = const(0x52)
_HLTA = const(0x50)
_READ = const(0x30)


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


class PCD:
    """The reader side of ISO 14443-A. A chip driver subclass provides the frame exchange:
    _transceive(n, last_bits=0, align=0, timeout_us=0, transmit=False) sends self._tx[1:n+1] and leaves
    the answer in self.buf (rx_len bytes, rx_bits bits, coll_bit on COLLISION); _append_crc(n) appends
    the CRC_A of that frame and returns its new length (0 if it failed). Its state (buffers made once) is made with the chip driver's
    (mfrc522_setup.make): _tx, _rxi/buf, uid/uid_len, sak, atqa, page, the anticollision work buffers
    _cl, _path, _vals, _wstack, _queue, and the fault counter errors."""

    # (bare annotations: the compiler keeps nothing of them)
    _transceive: "Any"
    _append_crc: "Any"
    _tx: bytearray
    _rxi: bytearray
    buf: memoryview
    rx_len: int
    rx_bits: int
    coll_bit: int
    uid: bytearray
    uid_len: int
    sak: int
    atqa: int
    page: bytearray
    _cl: bytearray
    _path: bytearray
    _vals: bytearray
    _wstack: bytearray
    _queue: bytearray
    errors: int
    _collpos_frame: bool

    def _answer_crc_ok(self, n):
        # The answer has n data bytes followed by a valid CRC_A. Checked here, not by the chip: a chip
        # that stopped answering mid-frame leaves MISO floating, and its "coprocessor" would confirm
        # the garbage (16 bytes of FF with FF FF, or of 00 with 00 00).
        if self.rx_len != n + 2 or self.rx_bits != (n + 2) * 8:
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
