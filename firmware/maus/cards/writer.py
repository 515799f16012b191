# Writing identities to blank NTAG stickers (guided from the host CLI): capability container check,
# NDEF text record from page 4, read-back verify; a tag holding other data is left alone unless forced.
from maus.cards import ident as cards
from maus.cards.reader import uid_hex
from maus.drivers import mfrc522, ndef, ndef_write
from maus.drivers.ndef import read_area
from maus.drivers.tagwrite import write
from micropython import const

_AREA = const(60)
_TYPE2 = const(0x00)

W_OK = const(0)
W_SAME = const(1)
W_NO_CARD = const(2)
W_SEVERAL = const(3)
W_NOT_NTAG = const(4)
W_NOT_NDEF = const(5)
W_READ_ONLY = const(6)
W_TOO_BIG = const(7)
W_OTHER = const(8)
W_IO = const(9)
W_VERIFY = const(10)
W_BAD_ID = const(11)

WRITE_RESULTS = (
    "written",
    "already holds this identity",
    "no card on the pad",
    "more than one card on the pad",
    "not an NTAG (type 2) tag",
    "no NDEF capability container",
    "tag is read-only",
    "identity does not fit on the tag",
    "tag holds other data (use force to overwrite)",
    "reading or writing the tag failed",
    "read-back differs from what was written",
    "not a card identity",
)


class _Writer:
    def __init__(self, reader, data, ident, force):
        self.reader = reader
        self.data = data
        self.ident = ident
        self.force = force
        self.result = W_NO_CARD
        self.uid = None
        self.count = 0
        self.found = None  # what the tag held before
        self.buf = bytearray(_AREA)
        self.cc = bytearray(4)

    def count_card(self, uid, n, sak):
        self.count += 1
        self.uid = uid_hex(uid, n)

    def write_card(self, uid, n, sak):
        if uid_hex(uid, n) != self.uid:
            return  # another card than the one counted: leave W_NO_CARD
        self.result = self._write(sak)

    def _write(self, sak):
        r = self.reader
        if sak != _TYPE2:
            return W_NOT_NTAG
        n = read_area(r, self.buf, self.cc)
        if n < 0:
            return W_IO
        if n == 0:
            return W_NOT_NDEF
        if self.cc[3] & 0x0F:  # CC byte 3: read access (high nibble), write access (low nibble)
            return W_READ_ONLY
        loc = ndef.find_message(self.buf, n)
        blank = loc is None or loc[1] == 0
        if not blank:
            self.found = cards.from_text(ndef.read_text(self.buf, n))
            if self.found == self.ident:
                return W_SAME
            if not self.force:
                return W_OTHER
        data = self.data
        if len(data) > self.cc[2] * 8:
            return W_TOO_BIG
        # Static lock bits (page 2, bytes 2-3: bit p locks page p, 3..15). Checked first: a locked
        # page would stop the write half way, after page 4 was already cleared.
        if r.read(2) != mfrc522.OK:
            return W_IO
        lock = r.page[2] | r.page[3] << 8
        for p in range(4, min(16, 4 + len(data) // 4)):
            if lock >> p & 1:
                return W_READ_ONLY
        # Page 4 first holds an empty message, then the body is written, then the real header:
        # a tag pulled away halfway never holds half an identity.
        if write(r, 4, b"\x03\x00\xfe\x00") != mfrc522.OK:
            return W_IO
        for p in range(1, len(data) // 4):
            if write(r, 4 + p, data, p * 4) != mfrc522.OK:
                return W_IO
        if write(r, 4, data) != mfrc522.OK:
            return W_IO
        # Verify: read back every written page.
        for p in range(0, len(data) // 4, 4):
            if r.read(4 + p) != mfrc522.OK:
                return W_IO
            for k in range(min(16, len(data) - p * 4)):
                if r.page[k] != data[p * 4 + k]:
                    return W_VERIFY
        return W_OK


def write_identity(reader, ident, force=False):
    """Write an identity to the one NTAG on the pad and verify it.

    Refuses a tag holding other data (another identity or any NDEF message) unless force.
    Returns (W_* code, uid hex or None, identity found on the tag before or None).
    """
    c = cards.normalise(ident)
    if c is None:
        return (W_BAD_ID, None, None)
    data = ndef_write.tlv(ndef_write.text_record(cards.PREFIX + c))
    data += bytes((-len(data)) % 4)  # whole pages
    w = _Writer(reader, data, c, force)
    reader.scan(w.count_card)
    if w.count == 0:
        return (W_NO_CARD, None, None)
    if w.count > 1:
        return (W_SEVERAL, None, None)
    reader.scan(w.write_card)
    return (w.result, w.uid, w.found)


def read_cards(reader):
    """The cards on the pad now: [[uid hex, identity]], identity "" for a tag holding none, None when an
    NTAG could not be read, "" for a MIFARE Classic (enrol it by UID)."""
    from maus.cards.tagid import read_identity

    buf = bytearray(_AREA)
    cc = bytearray(4)
    got = []

    def cb(uid, n, sak):
        got.append([uid_hex(uid, n), read_identity(reader, buf, cc) if sak == _TYPE2 else ""])

    reader.scan(cb)
    return got
