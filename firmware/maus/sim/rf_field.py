# The RF field of the emulated MFRC522: which tags hear a frame, how their answers superpose
# (bitwise anticollision), and the faults a test can inject. Not deployed to real units.
from micropython import const

from maus.sim.nfc_tags import NTAG, crc_a

# Fault kinds for inject(): each spoils the next n answers.
FAULT_COLLISION = const(1)  # the answer collides at an unknown position (CollPosNotValid)
FAULT_CRC = const(2)  # the last two bits of the answer flipped: parity holds, CRC/BCC do not
FAULT_TIMEOUT = const(3)  # the answer is lost (the tag still acted on the command)
FAULT_TRUNCATE = const(4)  # only the first half of the answer arrives
FAULT_REMOVE = const(5)  # the tags leave the field on the next READ, before answering
FAULT_WRITE_NAK = const(6)  # the next WRITE is refused with a NAK
FAULT_WRITE_LOST = const(7)  # the next WRITE is acknowledged but not stored

_RX_SIZE = const(65)


class Field:
    def __init__(self):
        self.tags = []
        self.on = False
        self.rx = bytearray(_RX_SIZE)  # the superposed answer, RxAlign applied
        self.zeros = bytearray(_RX_SIZE)  # bits some tag sent as 0
        self.coll = -1  # first collided bit of the last answer, -1 if none
        self.delay_fc = 0  # frame delay of the last answer (carrier cycles)
        self.fault = 0
        self.fault_n = 0

    def add_tag(self, tag):
        if tag not in self.tags:
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
        # Deliver a frame to every tag in the field; superpose the answers bit by bit. A bit is a
        # collision where one tag sends 1 and another 0 (both Manchester halves modulated).
        # Returns the number of bits received (0: silence); the bits are in rx from bit `align`.
        rx = self.rx
        zeros = self.zeros
        for i in range(_RX_SIZE):
            rx[i] = 0
            zeros[i] = 0
        nrx = 0
        coll = -1
        delay = 0
        for t in self.tags:
            if not t.in_field:
                continue
            t.receive(tx, bits, self)
            nb = t.resp_bits - t.resp_start
            if nb <= 0:
                continue
            if t.delay_fc > delay:
                delay = t.delay_fc
            for i in range(nb):
                sb = t.resp_start + i
                db = align + i
                if t.resp[sb >> 3] >> (sb & 7) & 1:
                    rx[db >> 3] |= 1 << (db & 7)
                else:
                    zeros[db >> 3] |= 1 << (db & 7)
            if nb > nrx:
                nrx = nb
        for i in range(nrx):
            db = align + i
            if rx[db >> 3] & zeros[db >> 3] & (1 << (db & 7)):
                coll = i
                break
        self.delay_fc = delay
        f = self.fault
        if nrx and f and f < FAULT_REMOVE and self.take_fault(f):  # inject(kind, 0) clears it
            if f == FAULT_TIMEOUT:
                nrx = 0
            elif f == FAULT_COLLISION:
                coll = 64  # beyond what CollPos can show: CollPosNotValid
            elif f == FAULT_CRC:
                for lb in range(align + max(0, nrx - 2), align + nrx):  # two bits: parity still holds
                    rx[lb >> 3] ^= 1 << (lb & 7)
            elif f == FAULT_TRUNCATE:
                nrx = max(1, nrx // 2 if nrx < 16 else (nrx // 16) * 8)
        if 0 <= coll < nrx and not values_after_coll:
            for i in range(coll, nrx):  # ValuesAfterColl = 0: bits after a collision read 0
                db = align + i
                rx[db >> 3] &= ~(1 << (db & 7)) & 0xFF
        self.coll = coll
        return nrx


def make_tag(ident, model=213):
    """An NTAG holding `ident` as an NDEF text record; the UID is derived from the identity."""
    from maus import cards
    from maus.drivers import ndef

    b = ident.encode()
    c = crc_a(b, len(b), 0xFFFF)
    d = crc_a(b, len(b), 0x1234)
    uid = bytes((0x04, c & 0xFF, c >> 8, d & 0xFF, d >> 8, len(b) & 0xFF, 0x80))  # 0x04: NXP
    tag = NTAG(uid, model)
    text = cards.to_text(ident) if cards.normalise(ident) else ident
    data = ndef.tlv(ndef.text_record(text))
    tag.mem[16:16 + len(data)] = data
    return tag
