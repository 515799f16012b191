# Building NDEF for NFC Forum Type 2 tags (the card writer's, and the simulator's tags): the TLV container
# and the Text record (RTD-Text 1.0). Reading them is maus.drivers.ndef's, which reaches these too; kept
# apart so reading a card during a game does not hold them.
from maus.drivers.ndef import MAX_MESSAGE, TLV_NDEF, TLV_TERMINATOR
from micropython import const

_MB = const(0x80)  # message begin
_ME = const(0x40)  # message end
_SR = const(0x10)  # short record: 1-byte payload length
_TNF_WELL_KNOWN = const(0x01)


def tlv(message):
    """An NDEF message TLV followed by the terminator TLV."""
    n = len(message)
    if n > MAX_MESSAGE:
        raise ValueError("NDEF message too long")
    if n < 0xFF:
        head = bytes((TLV_NDEF, n))
    else:
        head = bytes((TLV_NDEF, 0xFF, n >> 8, n & 0xFF))
    return head + bytes(message) + bytes((TLV_TERMINATOR,))


def text_record(text, lang="en"):
    """One NDEF record (MB and ME set): well-known type "T", UTF-8 text with an IANA language code."""
    lb = lang.encode()
    tb = text.encode()
    if not 0 < len(lb) < 64:
        raise ValueError("language code must have 1..63 bytes")
    payload = bytes((len(lb),)) + lb + tb
    pl = len(payload)
    if pl < 256:
        head = bytes((_MB | _ME | _SR | _TNF_WELL_KNOWN, 1, pl))
    else:
        head = bytes((_MB | _ME | _TNF_WELL_KNOWN, 1, pl >> 24, pl >> 16 & 0xFF, pl >> 8 & 0xFF, pl & 0xFF))
    return head + b"T" + payload
