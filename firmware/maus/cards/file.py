# Card identities, the cold part: what the unit needs only to write cards, to enrol tags and to change the
# enrolment file (maus.cards.enrol.Enrolment loads and saves through here), and classify() for the tools and the
# tests. Loaded for that and let go again (docs/build.md section 7); maus.cards.ident reaches it all.
import json
import os

from maus.cards.ident import PREFIX, normalise, parse
from micropython import const

# classify() results.
KNOWN = const(0)  # a card of the current game
UNKNOWN = const(1)  # no identity, or not a valid one
WRONG_GAME = const(2)  # a valid card of another game
GAME_CARD = const(3)  # a game card (starts a game)


def to_text(ident):
    """The text record content for an identity: the prefix and the canonical form."""
    c = normalise(ident)
    if c is None:
        raise ValueError("not a card identity: %r" % (ident,))
    return PREFIX + c


def classify(ident, game):
    """KNOWN, UNKNOWN, WRONG_GAME or GAME_CARD for an identity (or None) read while `game` runs."""
    p = parse(ident) if ident else None
    if p is None:
        return UNKNOWN
    if p[0] == "game":
        return GAME_CARD
    return KNOWN if p[0] == game else WRONG_GAME


def norm_uid(s):
    """Enrolment key from user input ("04:a1:b2 ..."), or None if it is not a 4/7/10-byte UID."""
    if not isinstance(s, str):
        return None
    h = s.replace(":", "").replace(" ", "").replace("-", "").upper()
    if len(h) not in (8, 14, 20):
        return None
    for ch in h:
        if ch not in "0123456789ABCDEF":
            return None
    return h


# maus.cards.enrol.Enrolment's file: en is the Enrolment (path, map, error, skipped).
def load(en):
    en.map = {}
    en.error = None
    en.skipped = 0
    try:
        f = open(en.path)
    except OSError:
        return  # no enrolments yet
    try:
        with f:
            data = json.load(f)
    except Exception as x:  # noqa: BLE001 - ValueError on CPython, ValueError/OSError on MicroPython
        en.error = "%s: corrupt, ignored (%s)" % (en.path, x)
        return
    cards = data.get("cards") if isinstance(data, dict) else None
    if not isinstance(cards, dict):
        en.error = "%s: no \"cards\" object, ignored" % en.path
        return
    for k, v in cards.items():
        u = norm_uid(k)
        c = normalise(v) if isinstance(v, str) else None
        if u is None or c is None:
            en.skipped += 1
        else:
            en.map[u] = c


def add(en, uid, ident):
    """Enrol a UID (hex string); returns the canonical identity. ValueError on bad input."""
    u = norm_uid(uid)
    c = normalise(ident)
    if u is None:
        raise ValueError("not a 4-, 7- or 10-byte UID: %r" % (uid,))
    if c is None:
        raise ValueError("not a card identity: %r" % (ident,))
    en.map[u] = c
    save(en)
    return c


def remove(en, uid):
    u = norm_uid(uid)
    if u is not None and en.map.pop(u, None) is not None:
        save(en)
        return True
    return False


def save(en):
    # Atomic: write a temporary file, then rename it over the old one.
    d = en.path.rpartition("/")[0]
    if d:
        _makedirs(d)
    tmp = en.path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"version": 1, "cards": en.map}, f)
    try:
        os.rename(tmp, en.path)
    except OSError:  # FAT cannot rename over an existing file
        os.remove(en.path)
        os.rename(tmp, en.path)
    en.error = None


def _makedirs(d):
    p = "/" if d.startswith("/") else ""
    for part in d.split("/"):
        if not part:
            continue
        p += part
        try:
            os.mkdir(p)
        except OSError:
            pass  # exists
        p += "/"
