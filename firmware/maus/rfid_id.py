# Reading a card's identity: the NDEF text on an NTAG (NFC Forum Type 2) as maus.cards reads it. Loaded
# when a card arrives (maus.rfid.Presence) or the card writer reads one, and let go again. Presence reads
# the text here and has maus.cards parse it after this module has gone (tag_text): the two are never in
# RAM together at a card read, the game's heap peak.
from micropython import const

from maus.drivers import ndef
from maus.drivers.iso14443a import NAK, OK

_CC_MAGIC = const(0xE1)  # capability container: NDEF present


def read_area(reader, buf, cc=None):
    """Read the TLV area from page 4 into buf, as many pages as the first NDEF message needs.

    With cc (4 bytes) the capability container is read too (page 3 first: CC + 12 bytes), as the
    card writer needs it; identification skips it, the TLV parse rejects what is not NDEF.
    Returns the number of bytes in buf, 0 if the tag has no NDEF container, -1 if a READ failed.
    """
    st = reader.read(3 if cc is not None else 4)
    if st == NAK:
        # No NDEF container for the card writer. To an identification a NAK is a failed read: a tag
        # leaving in the middle of its answer can leave just 4 bits, and they look like a NAK.
        return 0 if cc is not None else -1
    if st != OK:
        return -1
    pg = reader.page
    n = 16
    if cc is not None:
        for i in range(4):
            cc[i] = pg[i]
        if cc[0] != _CC_MAGIC:
            return 0
        n = 12
    for i in range(n):
        buf[i] = pg[16 - n + i]
    cap = len(buf)
    while True:
        loc = ndef.find_message(buf, n)
        if loc is None or loc[0] + loc[1] <= n or n + 16 > cap:
            return n
        st = reader.read(4 + n // 4)
        if st != OK:
            return -1
        for i in range(16):
            buf[n + i] = pg[i]
        n += 16


def tag_text(reader, buf, cc=None):
    """The selected tag's NDEF text, "" if it holds none, None if reading failed."""
    n = read_area(reader, buf, cc)
    if n < 0:
        return None
    return (ndef.read_text(buf, n) if n else None) or ""


def read_identity(reader, buf, cc=None):
    """The selected tag's identity (canonical), "" if it holds none, None if reading failed."""
    from maus import cards

    t = tag_text(reader, buf, cc)
    return t if t is None else cards.from_text(t) or ""
