# The type of a selected ISO 14443-A tag (NXP AN10833: SAK settles most; a SAK of 00 is the NFC Forum
# Type 2 family, where NTAG21x GET_VERSION tells an NTAG from a MIFARE Ultralight that does not know it),
# on an mfrc522.MFRC522 reader. Once per card arrival (maus.cards.reader.Presence loads it for that and lets it
# go again). Nothing here raises.
from micropython import const

_OK = const(0)  # mfrc522.OK, NAK, ERROR (consts here: no names to import while a card is read)
_ERROR = const(2)
_NAK = const(4)

# Tag types (identify).
T_UNKNOWN = const(0)
T_NTAG213 = const(1)
T_NTAG215 = const(2)
T_NTAG216 = const(3)
T_NTAG = const(4)  # another NTAG (GET_VERSION product type 04)
T_ULTRALIGHT_EV1 = const(5)  # product type 03
T_ULTRALIGHT = const(6)  # SAK 00 without GET_VERSION: MIFARE Ultralight / Ultralight C or a clone
T_CLASSIC_1K = const(7)
T_CLASSIC_4K = const(8)
T_CLASSIC_MINI = const(9)
T_ISO14443_4 = const(10)  # DESFire, smart cards, phones
# NFC Forum Type 2 (NDEF readable): types 1..6, as maus.cards.reader counts on.
TYPE2 = (T_NTAG213, T_NTAG215, T_NTAG216, T_NTAG, T_ULTRALIGHT_EV1, T_ULTRALIGHT)

_WUPA = const(0x52)
_GET_VERSION = const(0x60)


def get_version(r, info):
    """GET_VERSION (NTAG21x, MIFARE Ultralight EV1) to the tag r has selected: 8 bytes into info. OK,
    NO_TAG (a tag that does not know it says nothing and leaves the session), NAK or ERROR."""
    try:
        for _ in range(2):
            st = r._command2(_GET_VERSION, -1)
            if st != _OK:
                return st  # silence is an answer here, not a fault
            if r.rx_bits == 4:
                return _NAK
            if r._answer_crc_ok(8):
                for i in range(8):
                    info[i] = r.buf[i]
                return _OK
        return r._fail(_ERROR)
    except Exception:  # noqa: BLE001
        return r._fail(_ERROR)


def reselect(r):
    """Select the card on_card was called for once more (it left the session: a NAK, or a command it
    does not know). True if it is selected again."""
    try:
        return r._levels > 0 and r._request(_WUPA) == _OK and r._reselect_path(r._levels)
    except Exception:  # noqa: BLE001
        return False


def identify(r, sak):
    """The type (T_*) of the tag r has just selected. SAK settles most; for SAK 00 (the Type 2 family)
    GET_VERSION tells the NTAG21x models and Ultralight EV1; a tag that does not know it (MIFARE
    Ultralight, clones) is selected again, so the caller can READ it next."""
    if sak & 0x04:
        return T_UNKNOWN  # UID not complete: not a selected tag
    if sak & 0x20:
        return T_ISO14443_4
    if sak & 0x18 == 0x18:
        return T_CLASSIC_4K
    if sak & 0x18 == 0x08:
        return T_CLASSIC_MINI if sak & 0x01 else T_CLASSIC_1K
    if sak:
        return T_UNKNOWN
    v = bytearray(8)
    if get_version(r, v) == _OK:
        if v[1] == 0x04 and v[2] == 0x04:  # NXP, NTAG (NTAG21x datasheet 10.1)
            s = v[6]
            return T_NTAG213 if s == 0x0F else T_NTAG215 if s == 0x11 else T_NTAG216 if s == 0x13 else T_NTAG
        if v[1] == 0x04 and v[2] == 0x03:  # NXP, MIFARE Ultralight EV1
            return T_ULTRALIGHT_EV1
        return T_ULTRALIGHT
    return T_ULTRALIGHT if reselect(r) else T_UNKNOWN
