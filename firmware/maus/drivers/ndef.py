# NDEF on NFC Forum Type 2 tags: the TLV container and the Text record (RTD-Text 1.0), read from a
# selected tag (read_area, tag_text). Loaded when a card arrives (maus.cards.reader.Presence) or the card writer
# reads one, and let go again.
#
# Parsing never raises and never reads past the bytes it was given: every length is checked
# against the end of the buffer; malformed input yields None.
from micropython import const

_TLV_NULL = const(0x00)  # lock/memory control (01, 02), proprietary (FD) and unknown TLVs are skipped
TLV_NDEF = const(0x03)
TLV_TERMINATOR = const(0xFE)

_MB = const(0x80)  # message begin
_ME = const(0x40)  # message end
_CF = const(0x20)  # chunk flag
_SR = const(0x10)  # short record: 1-byte payload length
_IL = const(0x08)  # ID length present
_TNF_WELL_KNOWN = const(0x01)
_UTF16 = const(0x80)  # text status byte: UTF-16 encoding
_MAX_RECORDS = const(16)
MAX_MESSAGE = const(0xFFFE)  # largest length a 3-byte TLV length may state
_OK = const(0)  # mfrc522.OK and NAK: READ's answers
_NAK = const(4)
_CC_MAGIC = const(0xE1)  # capability container: NDEF present


def find_message(buf, n=-1, start=0):
    """Locate the first NDEF message TLV in buf[start:n].

    Returns (offset, length) of the message value, or None if there is none (terminator, end of
    data, or malformed TLVs). offset + length may exceed n: the caller has not read enough yet.
    """
    if n < 0 or n > len(buf):
        n = len(buf)
    i = start
    while i < n:
        t = buf[i]
        i += 1
        if t == _TLV_NULL:
            continue
        if t == TLV_TERMINATOR:
            return None
        if i >= n:
            return None
        ln = buf[i]
        i += 1
        if ln == 0xFF:  # 3-byte length form
            if i + 2 > n:
                return None
            ln = buf[i] << 8 | buf[i + 1]
            i += 2
            if ln > MAX_MESSAGE:  # short lengths in this form are tolerated (some writers use it)
                return None
        if t == TLV_NDEF:
            return (i, ln)
        i += ln
    return None


def parse_text(buf, off, length):
    """The first Text record of the NDEF message at buf[off:off+length]: (lang, text) or None."""
    end = off + length
    if off < 0 or length <= 0 or end > len(buf):
        return None
    i = off
    for _ in range(_MAX_RECORDS):
        if i + 3 > end:
            return None
        h = buf[i]
        tl = buf[i + 1]
        i += 2
        if h & _SR:
            pl = buf[i]
            i += 1
        else:
            if i + 4 > end:
                return None
            pl = buf[i] << 24 | buf[i + 1] << 16 | buf[i + 2] << 8 | buf[i + 3]
            i += 4
        il = 0
        if h & _IL:
            if i >= end:
                return None
            il = buf[i]
            i += 1
        if pl > end or i + tl + il + pl > end:
            return None
        t0 = i
        p0 = i + tl + il
        i = p0 + pl
        if h & _CF:
            return None  # chunked records are not used for identities
        if h & 0x07 == _TNF_WELL_KNOWN and tl == 1 and buf[t0] == 0x54 and pl >= 1:  # "T"
            st = buf[p0]
            ll = st & 0x3F
            if st & _UTF16 or 1 + ll > pl:
                return None
            try:
                lang = bytes(buf[p0 + 1:p0 + 1 + ll]).decode()
                text = bytes(buf[p0 + 1 + ll:i]).decode()
            except Exception:  # noqa: BLE001 - invalid UTF-8 is garbage, not an error
                return None
            return (lang, text)
        if h & _ME:
            return None
    return None


def read_text(buf, n=-1):
    """The text of the first Text record in the first NDEF TLV of buf[:n], or None."""
    loc = find_message(buf, n)
    if loc is None:
        return None
    if n < 0 or n > len(buf):
        n = len(buf)
    if loc[0] + loc[1] > n:
        return None
    r = parse_text(buf, loc[0], loc[1])
    return None if r is None else r[1]


def read_area(reader, buf, cc=None):
    """Read the TLV area from page 4 into buf, as many pages as the first NDEF message needs.

    With cc (4 bytes) the capability container is read too (page 3 first: CC + 12 bytes), as the
    card writer needs it; identification skips it, the TLV parse rejects what is not NDEF.
    Returns the number of bytes in buf, 0 if the tag has no NDEF container, -1 if a READ failed.
    """
    st = reader.read(3 if cc is not None else 4)
    if st == _NAK:
        # No NDEF container for the card writer. To an identification a NAK is a failed read: a tag
        # leaving in the middle of its answer can leave just 4 bits, and they look like a NAK.
        return 0 if cc is not None else -1
    if st != _OK:
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
        loc = find_message(buf, n)
        if loc is None or loc[0] + loc[1] <= n or n + 16 > cap:
            return n
        st = reader.read(4 + n // 4)
        if st != _OK:
            return -1
        for i in range(16):
            buf[n + i] = pg[i]
        n += 16


def tag_text(reader, buf, cc=None):
    """The selected tag's NDEF text, "" if it holds none, None if reading failed."""
    n = read_area(reader, buf, cc)
    if n < 0:
        return None
    return (read_text(buf, n) if n else None) or ""
