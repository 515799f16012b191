# The RF field of the emulated MFRC522: which tags hear a frame, how their answers reach the receiver
# (Manchester half-bits superposed with each tag's strength and timing skew, a tag leaving at any bit),
# and the faults a test can inject. Not deployed to real units.
#
# PICC to PCD at 106 kbit/s (ISO 14443-2 8.2.5.1): logic 1 modulates the subcarrier in the first half
# of the bit period, logic 0 in the second; the SOF is a 1, the EOF a bit period without modulation.
# A parity bit (odd) follows every complete byte (ISO 14443-3 6.2.3.1); in a bit-oriented
# anticollision frame the PICC completes the split byte and sends its parity bit (6.2.3.2).
# The receiver syncs on the first SOF; a tag answering later by half a bit or more lands its
# modulation in the other half-bit. Where both halves of a bit carry modulation it reports a
# collision only if the weaker half reaches CollLevel of the stronger (MFRC522 datasheet 9.3.2.9,
# RxThresholdReg); below that the stronger card wins the bit: a strong card can mask a weak one.
# Nothing below MinLevel is heard at all. The datasheet gives no scale for either; here a card flat
# on the pad is strength 100, MinLevel counts 2 per step and CollLevel n means n/8 of the stronger.
from micropython import const

from maus.sim.nfc_tags import crc_a

# Fault kinds for inject(): each spoils the next n answers.
FAULT_COLLISION = const(1)  # the answer collides at an unknown position (CollPosNotValid)
FAULT_CRC = const(2)  # the last two bits of the answer flipped: parity holds, CRC/BCC do not
FAULT_TIMEOUT = const(3)  # the answer is lost (the tag still acted on the command)
FAULT_TRUNCATE = const(4)  # only the first half of the answer arrives
FAULT_REMOVE = const(5)  # the tags leave the field on the next READ, before answering
FAULT_WRITE_NAK = const(6)  # the next WRITE is refused with a NAK
FAULT_WRITE_LOST = const(7)  # the next WRITE is acknowledged but not stored

_RX_SIZE = const(65)
_MAX_PERIODS = const(176)  # SOF + 18 bytes with parity + spare: the longest answer (READ) is 163
_SOF_ERR = const(-2)  # exchange(): a frame whose SOF could not be decoded (ProtocolErr, no data)
# RFCfgReg RxGain 0..7 (18, 23, 18, 23, 33, 38, 43, 48 dB) against 33 dB, the reset value, x1000. A gain above
# what the field needs hears no more: the answer is clipped to the level of a card in a full field.
_GAIN = (178, 316, 178, 316, 1000, 1778, 3162, 5623)


class Field:
    def __init__(self):
        self.tags = []
        self.on = False
        self.rx = bytearray(_RX_SIZE)  # the received answer, RxAlign applied
        self._zero = bytes(_RX_SIZE)  # what clears it
        self.coll = -1  # first collided data bit of the last answer (received bit index), -1 if none
        self.parity_err = False  # a byte of the last answer failed its parity check
        self.protocol_err = False  # the last answer's SOF was not a valid SOF
        self.coll_parity = False  # a byte holding a collision counts as a parity error too (chip variant)
        self.delay_fc = 0  # frame delay of the last answer (carrier cycles)
        self.periods = 0  # bit periods of the last answer that reached the receiver, SOF included
        self.min_amp = 16  # RxThresholdReg MinLevel (reset 8) * 2
        self.coll_level = 4  # RxThresholdReg CollLevel (reset 4)
        self.classic_nak = True  # MIFARE Classic refuses an unauthenticated READ with a NAK (else silence)
        self.gain = 4  # RFCfgReg RxGain (the chip sets it at each frame)
        self.field_pct = 100  # the antenna's field at the card (chip variant: a weak field)
        self.edge_pct = 100  # a card put beside one other lies at the pad's edge: its strength (chip variant)
        self.flutter_bit = 0  # a card put on the pad breaks off its first answer there, then is back (chip variant)
        self._sc = 1000  # what reaches the receiver, x1000 of a card's strength (field and gain)
        self.fault = 0
        self.fault_n = 0
        self._h1 = [0] * _MAX_PERIODS  # modulation amplitude in the first / second half of each bit period
        self._h2 = [0] * _MAX_PERIODS
        self._gone = []  # tags that left during the last answer (removed after it)

    def add_tag(self, tag):
        if tag not in self.tags:
            if len(self.tags) == 1 and tag.strength == 100 and self.edge_pct != 100:
                tag.strength = self.edge_pct  # beside the first card, at the pad's edge
            if self.flutter_bit and tag.leave_in < 0:
                tag.leave_at(0, self.flutter_bit)
                tag.bounce = True
            self.tags.append(tag)
        tag.power(self.on)

    def remove_tag(self, tag):
        if tag in self.tags:
            self.tags.remove(tag)
        tag.power(False)

    def power(self, on):
        # Field off and on again: every tag resets to IDLE.
        self.on = on
        for t in self.tags:
            t.power(on)

    def inject(self, kind, n=1):
        self.fault = kind
        self.fault_n = n

    def take_fault(self, kind):
        if self.fault == kind and self.fault_n > 0:
            self.fault_n -= 1
            if self.fault_n == 0:
                self.fault = 0
            return True
        return False

    def exchange(self, tx, bits, align, values_after_coll):
        # Deliver a frame to every tag in the field, then receive their answers. Returns the number of
        # data bits received (0: silence; _SOF_ERR: a broken SOF); the bits are in rx from bit `align`.
        rx = self.rx
        rx[:] = self._zero  # (a copy in C: no allocation, the slice is the VM's own)
        self.coll = -1
        self.parity_err = False
        self.protocol_err = False
        self.periods = 0
        n = 0
        one = None
        delay = 0
        sc = self.field_pct * _GAIN[self.gain & 7] // 100
        sc = self._sc = sc if sc < 1000 else 1000
        for t in self.tags:
            if not t.in_field:
                continue
            t.receive(tx, bits, self)
            if t.resp_bits - t.resp_start <= 0 or t.strength * sc < self.min_amp * 1000:
                t.resp_bits = t.resp_start  # silent, or too weak to be heard at all
                continue
            n += 1
            one = t
            if t.delay_fc > delay:
                delay = t.delay_fc
        self.delay_fc = delay
        if n == 0:
            return 0
        if n == 1 and one.leave_in < 0:
            nrx = self._single(one, align)
        else:
            nrx = self._superpose(align)
        if self._gone:
            for t in self._gone:
                if t.bounce:  # it slid back onto the pad: powered again, from IDLE
                    t.bounce = False
                    t.power(False)
                    t.power(self.on)
                else:
                    self.remove_tag(t)  # off the pad: add_tag puts it back
            self._gone.clear()
        f = self.fault
        if nrx > 0 and f and f < FAULT_REMOVE and self.take_fault(f):  # inject(kind, 0) clears it
            if f == FAULT_TIMEOUT:
                nrx = 0
            elif f == FAULT_COLLISION:
                self.coll = 64  # beyond what CollPos can show: CollPosNotValid
            elif f == FAULT_CRC:
                for lb in range(align + max(0, nrx - 2), align + nrx):  # two bits: parity still holds
                    rx[lb >> 3] ^= 1 << (lb & 7)
            elif f == FAULT_TRUNCATE:
                nrx = max(1, nrx // 2 if nrx < 16 else (nrx // 16) * 8)
                self.periods = 1 + nrx + nrx // 8
        c = self.coll
        if 0 <= c < nrx and not values_after_coll:
            for i in range(c + 1, nrx):  # ValuesAfterColl = 0: the bits after a collision read 0
                db = align + i
                rx[db >> 3] &= ~(1 << (db & 7)) & 0xFF
        return nrx

    def _single(self, t, align):
        # One tag, heard clearly: its bits as sent, the parity right, nothing collides.
        nb = t.resp_bits - t.resp_start
        s = t.resp_start
        rx = self.rx
        if s & 7 == align:
            # Received bit i is the tag's bit s + i and lands at FIFO bit align + i: same bit positions.
            k = s >> 3
            nbytes = (align + nb + 7) >> 3
            for j in range(nbytes):
                rx[j] = t.resp[k + j]
            rx[0] &= (0xFF << align) & 0xFF
            last = (align + nb) & 7
            if last:
                rx[nbytes - 1] &= (1 << last) - 1
        else:
            for i in range(nb):
                sb = s + i
                if t.resp[sb >> 3] >> (sb & 7) & 1:
                    db = align + i
                    rx[db >> 3] |= 1 << (db & 7)
        self.periods = 1 + nb + (s + nb) // 8 - s // 8  # SOF, data, a parity bit per completed byte
        return nb

    def _superpose(self, align):
        # Several tags, or one that leaves mid-answer: build the modulation of every half-bit as the
        # receiver sees it, then decode it bit period by bit period.
        h1 = self._h1
        h2 = self._h2
        for p in range(_MAX_PERIODS):
            h1[p] = 0
            h2[p] = 0
        first = 1 << 20
        for t in self.tags:
            if t.in_field and t.resp_bits > t.resp_start and t.skew_fc < first:
                first = t.skew_fc
        for t in self.tags:
            if not t.in_field or t.resp_bits <= t.resp_start:
                continue
            shift = (t.skew_fc - first + 32) >> 6  # half-bits late against the first SOF
            stop = _MAX_PERIODS
            if t.leave_in == 0:
                stop = t.leave_bit  # it leaves the field this many bit periods into the answer
                t.leave_in = -1
                self._gone.append(t)
            elif t.leave_in > 0:
                t.leave_in -= 1
            amp = t.strength * self._sc // 1000
            resp = t.resp
            if stop > 0:
                self._mod(0, 1, shift, amp)  # the SOF
            p = 1
            sb = t.resp_start
            while sb < t.resp_bits and p < stop:
                self._mod(p, resp[sb >> 3] >> (sb & 7) & 1, shift, amp)
                p += 1
                sb += 1
                if sb & 7 == 0 and p < stop:
                    self._mod(p, _odd_parity(resp[(sb - 1) >> 3]), shift, amp)  # the byte's parity bit
                    p += 1
        return self._decode(align)

    def _mod(self, p, v, shift, amp):
        # One tag modulates bit period p with value v (1: first half, 0: second), `shift` half-bits late.
        half = 2 * p + 1 - v + shift
        if half < 2 * _MAX_PERIODS:
            if half & 1:
                self._h2[half >> 1] += amp
            else:
                self._h1[half >> 1] += amp

    def _decode(self, align):
        h1 = self._h1
        h2 = self._h2
        lo = self.min_amp
        cl = self.coll_level
        rx = self.rx
        a1 = h1[0]
        a2 = h2[0]
        if a1 < lo and a2 < lo:
            return 0  # nothing heard
        if a2 >= lo and (a1 < lo or a2 * 8 >= a1 * cl):
            self.protocol_err = True  # no clean SOF: ProtocolErr, nothing goes to the FIFO
            self.periods = 1
            return _SOF_ERR
        i = 0  # data bits received
        group = 8 - align  # data bits before the next parity bit (the split byte first)
        in_group = 0
        byte_v = 0
        byte_coll = False
        checked = align == 0  # the first parity bit is not checked after RxAlign (as the MFRC531's)
        p = 1
        while p < _MAX_PERIODS:
            a1 = h1[p]
            a2 = h2[p]
            big = a1 if a1 > a2 else a2
            if big < lo:
                break  # EOF: a bit period without modulation
            small = a2 if a1 > a2 else a1
            coll = small >= lo and small * 8 >= big * cl
            v = 1 if a1 >= a2 else 0
            p += 1
            if in_group == group:
                # a parity bit
                if coll or byte_coll:
                    if self.coll_parity:
                        self.parity_err = True
                elif checked and v != _odd_parity(byte_v):
                    self.parity_err = True
                checked = True
                group = 8
                in_group = 0
                byte_v = 0
                byte_coll = False
                continue
            db = align + i
            if v:
                rx[db >> 3] |= 1 << (db & 7)
                byte_v |= 1 << (db & 7)
            if coll:
                byte_coll = True
                if self.coll < 0:
                    self.coll = i
            i += 1
            in_group += 1
            if align + i >= 8 * _RX_SIZE:
                break
        self.periods = p
        return i


def _odd_parity(b):
    # The parity bit that makes the number of ones in the byte and its parity bit odd.
    b ^= b >> 4
    b ^= b >> 2
    b ^= b >> 1
    return (b & 1) ^ 1


def card_text(ident):
    """The text the card writer (maus.cards.file) puts on a card for `ident`: "mausbox:" and the canonical
    identity, or the text itself when it is no identity (a garbled card). The firmware's rule, maus.cards.ident,
    used as it is loaded, or loaded for this and let go again. The host works it out before the game (a scenario's
    "card" field, mausbox.sim.run): in a game the firmware's heap is the board's, and this module load is not."""
    import sys

    import maus

    cards = sys.modules.get("maus.cards.ident")
    mark = None
    if cards is None:
        mark = maus.loaded()
        from maus.cards import ident as cards
    canon = cards.normalise(ident)
    text = cards.PREFIX + canon if canon else ident
    if mark is not None:
        maus.unload_since(mark)
    return text


def make_tag(ident, model=213, text=None):
    """An NTAG holding `text` (card_text(ident) if None) as the card writer writes it (maus.drivers.ndef_write:
    one NDEF text record in an NDEF TLV); the UID is derived from the identity. A card is no part of a board's
    heap: the record is laid out in the tag's memory in place (tests/fw/test_rfid.py checks it is the writer's)."""
    if text is None:
        text = card_text(ident)
    b = ident.encode()
    c = crc_a(b, len(b), 0xFFFF)
    d = crc_a(b, len(b), 0x1234)
    uid = bytes((0x04, c & 0xFF, c >> 8, d & 0xFF, d >> 8, len(b) & 0xFF, 0x80))  # 0x04: NXP
    from maus.sim.nfc_tags import NTAG

    tag = NTAG(uid, model)
    text = text.encode()
    n = 3 + len(text)  # the payload: status byte (language length 2), "en", the text
    if n > 0xFF or 7 + n > (tag.user_end - 4) * 4:
        raise ValueError("card text too long for a short record on this tag")
    m = tag.mem
    m[16] = 0x03  # NDEF message TLV (NFC Forum Type 2 Tag 2.4), its length: the record
    m[17] = 4 + n
    m[18] = 0xD1  # MB, ME, SR, TNF well-known (NDEF 1.0 3.2)
    m[19] = 1  # type length
    m[20] = n
    m[21] = 0x54  # "T"
    m[22] = 2
    m[23] = 0x65  # "e"
    m[24] = 0x6E  # "n"
    i = 25
    for x in text:
        m[i] = x
        i += 1
    m[i] = 0xFE  # terminator TLV
    return tag
