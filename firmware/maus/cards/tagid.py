# Reading a card's identity: the NDEF text on an NTAG (NFC Forum Type 2, maus.drivers.ndef) as maus.cards.ident
# reads it, for the card writer (loaded when it reads a card, and let go again). maus.cards.reader.Presence does the
# same in two steps (ndef.tag_text, then cards.from_text), so the two are never in RAM together at a card
# read, the game's heap peak.
from maus.drivers.ndef import read_area, tag_text  # noqa: F401 - read_area: reachable here too


def read_identity(reader, buf, cc=None):
    """The selected tag's identity (canonical), "" if it holds none, None if reading failed."""
    from maus.cards import ident as cards

    t = tag_text(reader, buf, cc)
    return t if t is None else cards.from_text(t) or ""
