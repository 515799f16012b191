# ISO 14443-A tag (PICC) models for the MFRC522 emulator: the anticollision state machine,
# NTAG213/215/216 page memory and GET_VERSION, MIFARE Ultralight (no GET_VERSION), MIFARE Classic 1K
# answering by UID. Each tag also has a field strength and a timing skew (rf_field superposes the
# answers with them) and can leave the field at any bit of an answer. Not deployed to real units.
from micropython import const

_FDT_FC = const(1172)  # PICC frame delay time after a frame ending with 0 (ISO 14443-3 6.2.1.1)
_WRITE_FC = const(55600)  # NTAG21x EEPROM write: about 4.1 ms
_GET_VERSION = const(0x60)  # NTAG21x datasheet 10.1 (MIFARE Ultralight MF0ICU1 does not know it)

# Faults the tags act on (the values of rf_field.FAULT_*).
_FAULT_REMOVE = const(5)
_FAULT_WRITE_NAK = const(6)
_FAULT_WRITE_LOST = const(7)

# Tag states (ISO 14443-3 figure 7).
IDLE = const(0)
READY = const(1)
ACTIVE = const(2)
HALT = const(3)

_SEL = (0x93, 0x95, 0x97)


# CRC_A's reflected polynomial 0x8408 four bits at a time (each entry: four single-bit steps of its index)
CRC_NIBBLE = (0x0000, 0x1081, 0x2102, 0x3183, 0x4204, 0x5285, 0x6306, 0x7387,
              0x8408, 0x9489, 0xA50A, 0xB58B, 0xC60C, 0xD68D, 0xE70E, 0xF78F)


def crc_a(buf, n, crc=0x6363, start=0):
    # ISO 14443-3 annex B: CRC_A, reflected polynomial 0x8408, preset 0x6363, sent low byte first.
    t = CRC_NIBBLE
    for i in range(start, start + n):
        crc ^= buf[i]
        crc = (crc >> 4) ^ t[crc & 0x0F]
        crc = (crc >> 4) ^ t[crc & 0x0F]
    return crc


class Tag:
    """An ISO 14443-A PICC: the anticollision state machine common to every type."""

    SAK = 0x00

    def __init__(self, uid):
        n = len(uid)
        if n not in (4, 7, 10):
            raise ValueError("UID must have 4, 7 or 10 bytes")
        self.uid = bytes(uid)
        self.levels = (4, 7, 10).index(n) + 1
        cl = bytearray(5 * self.levels)  # UID CLn + BCC for each cascade level
        src = 0
        for lv in range(self.levels):
            o = lv * 5
            if lv < self.levels - 1:
                cl[o] = 0x88  # cascade tag
                cl[o + 1:o + 4] = uid[src:src + 3]
                src += 3
            else:
                cl[o:o + 4] = uid[src:src + 4]
            cl[o + 4] = cl[o] ^ cl[o + 1] ^ cl[o + 2] ^ cl[o + 3]
        self.cl = cl
        self.atqa = (0x04, 0x44, 0x84)[self.levels - 1]  # UID size bits 7-6, bit frame anticollision
        self.state = IDLE
        self.star = False  # woken from HALT: errors send it back to HALT
        self.level = 0
        self.in_field = False
        self.resp = bytearray(20)  # the answer being sent (bits resp_start .. resp_bits)
        self.resp_start = 0
        self.resp_bits = 0
        self.delay_fc = _FDT_FC
        # How the answer reaches the reader (rf_field): load modulation strength (100 = a card flat on
        # the pad; the reader's MinLevel hears about 16 and up), the answer's delay against the others
        # in carrier cycles (64 = half a bit), and a removal: the tag leaves the field `leave_bit` bit
        # periods into its `leave_in`-th answer from now (0 = the next one; -1 = it stays).
        self.strength = 100
        self.skew_fc = 0
        self.leave_in = -1
        self.leave_bit = 0
        self.bounce = False  # it comes back at once after leaving (rf_field: a card sliding onto the pad)

    def leave_at(self, answer, bit):
        """Take the tag off the pad in the middle of an answer: `bit` bit periods (SOF = period 0) into
        its `answer`-th answer from now (0 = the next). bit 0 means it never starts that answer."""
        self.leave_in = answer
        self.leave_bit = bit

    def power(self, on):
        self.in_field = on
        self.state = IDLE
        self.star = False

    def _fallback(self):
        self.state = HALT if self.star else IDLE

    def _answer(self, n, crc=False):
        # Answer n bytes from self.resp, optionally followed by CRC_A.
        if crc:
            c = crc_a(self.resp, n)
            self.resp[n] = c & 0xFF
            self.resp[n + 1] = c >> 8
            n += 2
        self.resp_start = 0
        self.resp_bits = n * 8
        self.delay_fc = _FDT_FC

    def _nibble(self, v):
        # A 4-bit ACK (0xA) or NAK; after a NAK the tag leaves the session (NTAG21x datasheet 9.3).
        self.resp[0] = v
        self.resp_start = 0
        self.resp_bits = 4
        if v != 0xA:
            self._fallback()

    def receive(self, f, bits, field):
        # One PCD frame f of `bits` bits. Sets resp_bits (0 = silent).
        self.resp_bits = 0
        if bits == 7:
            cmd = f[0] & 0x7F
            # READY or ACTIVE: REQA/WUPA is "any other data", back to IDLE/HALT in silence (NTAG21x 8.4)
            if cmd == 0x26 and self.state == IDLE or cmd == 0x52 and (self.state == IDLE or self.state == HALT):
                self.star = self.state == HALT
                self.state = READY
                self.level = 0
                self.resp[0] = self.atqa & 0xFF
                self.resp[1] = self.atqa >> 8
                self._answer(2)
            elif self.state == ACTIVE or self.state == READY:
                self._fallback()
            return
        if bits < 16 or self.state == IDLE or self.state == HALT:
            return
        nbytes = bits // 8
        if self.state == READY:
            if self.level > 2 or f[0] != _SEL[self.level]:
                self._fallback()
                return
            nvb = f[1]
            o = self.level * 5
            if nvb == 0x70 and bits == 72:
                if crc_a(f, 9) != 0:
                    self._fallback()
                    return
                for i in range(5):
                    if f[2 + i] != self.cl[o + i]:
                        self._fallback()
                        return
                self.level += 1
                if self.level < self.levels:
                    self.resp[0] = 0x04  # cascade bit: UID not complete
                else:
                    self.state = ACTIVE
                    self.resp[0] = self.SAK
                self._answer(1, True)
                return
            known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)
            if nvb & 0x0F > 7 or known < 0 or known > 39 or bits != 16 + known:
                self._fallback()
                return
            for b in range(known):
                if (f[2 + b // 8] ^ self.cl[o + b // 8]) >> (b & 7) & 1:
                    return  # not matching: stay READY, say nothing
            for i in range(5):
                self.resp[i] = self.cl[o + i]
            self.resp_start = known
            self.resp_bits = 40
            self.delay_fc = _FDT_FC
            return
        # ACTIVE
        if crc_a(f, nbytes) != 0:
            self._fallback()  # a frame with a bad CRC ends the session
            return
        if f[0] == 0x50 and f[1] == 0x00 and nbytes == 4:  # HLTA
            self.state = HALT
            return
        self.command(f, nbytes - 2, field)

    def command(self, f, n, field):
        # A command in ACTIVE state (without its CRC). Unknown commands end the session.
        self._fallback()


class NTAG(Tag):
    """NTAG213/215/216 (NFC Forum Type 2): page memory, READ 0x30, WRITE 0xA2, GET_VERSION 0x60, static
    lock bits."""

    SAK = 0x00
    # pages, CC size byte, GET_VERSION storage size byte (NTAG21x datasheet 8.5 and 10.1; 0: no GET_VERSION)
    MODELS = {213: (45, 0x12, 0x0F), 215: (135, 0x3E, 0x11), 216: (231, 0x6D, 0x13), 0: (16, 0x06, 0)}

    def __init__(self, uid, model=213):
        if len(uid) != 7:
            raise ValueError("NTAG21x UIDs have 7 bytes")
        Tag.__init__(self, uid)
        pages, size, self.storage = self.MODELS[model]
        self.model = model
        self.pages = pages
        self.user_end = 4 + size * 2  # first page after user memory
        m = bytearray(pages * 4)
        m[0:3] = uid[0:3]
        m[3] = self.cl[4]  # BCC0 = CT ^ UID0 ^ UID1 ^ UID2
        m[4:8] = uid[3:7]
        m[8] = self.cl[9]  # BCC1
        m[9] = 0x48  # internal
        m[12:16] = bytes((0xE1, 0x10, size, 0x00))  # capability container: NDEF 1.0, read/write
        m[16:19] = b"\x03\x00\xfe"  # empty NDEF message, terminator (as shipped)
        self.mem = m
        self.writes = 0

    def command(self, f, n, field):
        cmd = f[0]
        if cmd == _GET_VERSION and n == 1 and self.storage:
            # 00, vendor NXP, product NTAG, subtype 50 pF, major 1, minor 0, storage size, ISO 14443-3
            r = self.resp
            r[0] = 0x00
            r[1] = 0x04
            r[2] = 0x04
            r[3] = 0x02
            r[4] = 0x01
            r[5] = 0x00
            r[6] = self.storage
            r[7] = 0x03
            self._answer(8, True)
            return
        if cmd == 0x30 and n == 2:  # READ: four pages, rolling over at the end
            p = f[1]
            if p >= self.pages:
                self._nibble(0x0)  # NAK: invalid argument
                return
            if field.take_fault(_FAULT_REMOVE):
                self.power(False)  # out of the field (add_tag puts it back)
                return
            mem = self.mem
            base = p * 4
            size = self.pages * 4
            for i in range(16):
                self.resp[i] = mem[(base + i) % size]
            self._answer(16, True)
            return
        if cmd == 0xA2 and n == 6:  # WRITE one page
            p = f[1]
            if p < 2 or p >= self.user_end or self._locked(p):  # config pages are not emulated
                self._nibble(0x0)
                return
            if field.take_fault(_FAULT_WRITE_NAK):
                self._nibble(0x1)  # NAK: EEPROM write error
                return
            if not field.take_fault(_FAULT_WRITE_LOST):
                o = p * 4
                if p == 2:  # only the lock bytes are writable, bits can only be set
                    self.mem[o + 2] |= f[4]
                    self.mem[o + 3] |= f[5]
                elif p == 3:  # capability container: one-time programmable
                    for i in range(4):
                        self.mem[o + i] |= f[2 + i]
                else:
                    for i in range(4):
                        self.mem[o + i] = f[2 + i]
                self.writes += 1
            self._nibble(0xA)  # ACK
            self.delay_fc = _WRITE_FC
            return
        self._fallback()

    def garbage(self, seed=1):
        """Fault injection: fill the user memory with pseudo-random bytes behind an NDEF TLV type,
        so a reader finds something that looks like NDEF and is not."""
        s = seed or 1
        m = self.mem
        for i in range(16, self.user_end * 4):
            s ^= (s << 13) & 0xFFFFFFFF
            s ^= s >> 17
            s ^= (s << 5) & 0xFFFFFFFF
            m[i] = s & 0xFF
        m[16] = 0x03

    def _locked(self, p):
        # Static lock bits (page 2 bytes 2-3): bit k of byte 2 locks page k (3..7), byte 3 pages 8..15.
        if 3 <= p <= 7:
            return self.mem[10] >> p & 1
        if 8 <= p <= 15:
            return self.mem[11] >> (p - 8) & 1
        return 0


class Ultralight(NTAG):
    """MIFARE Ultralight (MF0ICU1): 16 pages, SAK 00 like an NTAG, but no GET_VERSION: it says nothing
    and leaves the session, so a reader must select it again."""

    def __init__(self, uid):
        NTAG.__init__(self, uid, 0)


class MifareClassic1K(Tag):
    """MIFARE Classic 1K: answers the anticollision by UID; a READ without authentication is refused
    with a NAK or not answered at all, as the chip variant says (field.classic_nak)."""

    SAK = 0x08

    def command(self, f, n, field):
        if f[0] == 0x30 and field.classic_nak:
            self._nibble(0x4)  # NAK: not authenticated
            return
        self._fallback()
