# M is for Mouse card data: the validator (format and rulebook counts) and the builder of the compact
# Catalog. The game loads catalogs through mim.rules.load_catalog, which imports this module and unloads it.
#
# catalogs/mim.json (docs/games/mim.md): "objects" maps each of the 23 letters (A-Z without Q, X, Y) to
# [German name, English gloss], the German name starting with that letter; 23 "cards"
# {"id", "objects": [name, name], "letters": [L, L]}, ids 1..23 as on the tags ("mim/card/05").
from maus.games.mim.engine import CARDS, LETTERS, Catalog
from micropython import const

GAME = "mim"
_LETTERS = tuple(LETTERS)
_MAX_ERRORS = const(20)


def _fold(ch):
    # the German initial as a board letter: an umlaut is not one
    return ch.upper() if "a" <= ch.lower() <= "z" else ch


def _two(c, key, names, what, err):
    # c[key] as a list of two different known names; [] when it is not
    v = c.get(key)
    if not isinstance(v, list) or len(v) != 2:
        err("card %d: %s must list two %s" % (c["id"], key, what))
        return []
    for x in v:
        if not isinstance(x, str) or x not in names:
            err("card %d: %r is not one of the %s" % (c["id"], x, what))
            return []
    if v[0] == v[1]:
        err("card %d: the same %s twice" % (c["id"], what[:-1]))
        return []
    return v


def validate_catalog(data):
    """Format and rulebook rules; returns a list of error strings (empty when the catalog is good)."""
    errors = []  # type: list[str]

    def err(msg):
        if len(errors) < _MAX_ERRORS:
            errors.append(msg)

    if not isinstance(data, dict):
        return ["catalog: not a JSON object"]
    if data.get("game") != GAME:
        err('game: must be "mim"')
    objects = data.get("objects")
    if not isinstance(objects, dict):
        err("objects: missing or not an object (letter -> [German name, English gloss])")
        return errors
    names = {}  # German name -> letter
    for ch in LETTERS:
        if ch not in objects:
            err("objects: no object for the letter %s" % ch)
    for ch in objects:
        v = objects[ch]
        if ch not in LETTERS:
            err("objects: %r is not a game letter (A-Z without Q, X, Y)" % ch)
        elif not isinstance(v, list) or len(v) != 2 or not all(
                isinstance(s, str) and s.strip() and "\n" not in s for s in v):  # one line: Catalog.names
            err("objects: %s must be [German name, English gloss]" % ch)
        elif _fold(v[0][0]) != ch:
            err("objects: %s: %r does not start with %s" % (ch, v[0], ch))
        elif v[0] in names:
            err("objects: %r twice" % v[0])
        else:
            names[v[0]] = ch
    if errors:
        return errors
    cards = data.get("cards")
    if not isinstance(cards, list):
        return errors + ["cards: missing or not a list"]
    if len(cards) != CARDS:
        err("cards: %d cards, the game has %d" % (len(cards), CARDS))
    seen = set()
    n_obj = {}  # type: dict[str, int]
    n_let = {}  # type: dict[str, int]
    for i, c in enumerate(cards):
        cid = c.get("id") if isinstance(c, dict) else None
        if not isinstance(cid, int) or isinstance(cid, bool) or not 1 <= cid <= CARDS:
            err("cards[%d]: id must be 1..%d" % (i, CARDS))
            continue
        if cid in seen:
            err("cards: id %d twice" % cid)
            continue
        seen.add(cid)
        objs = _two(c, "objects", names, "objects", err)
        lets = _two(c, "letters", _LETTERS, "letters", err)
        for o in objs:
            n_obj[o] = n_obj.get(o, 0) + 1
            if names[o] in lets:
                err("card %d: %s and its own letter %s" % (cid, o, names[o]))
        for ch in lets:
            n_let[ch] = n_let.get(ch, 0) + 1
    if len(seen) == len(cards) == CARDS:
        for o in names:
            if n_obj.get(o, 0) != 2:
                err("%s is on %d cards, must be on 2" % (o, n_obj.get(o, 0)))
        for ch in LETTERS:
            if n_let.get(ch, 0) != 2:
                err("letter %s is on %d cards, must be on 2" % (ch, n_let.get(ch, 0)))
    return errors


def build(data):
    """A catalog dict (catalogs/mim.json) -> Catalog. Raises ValueError naming the first problem."""
    errors = validate_catalog(data)
    if errors:
        raise ValueError("mim catalog: " + errors[0])
    objects = data["objects"]
    de = [objects[ch][0] for ch in LETTERS]
    cards = bytearray(4 * CARDS)
    for c in data["cards"]:
        b = 4 * (c["id"] - 1)
        for e in range(2):
            cards[b + e] = de.index(c["objects"][e])
            cards[b + 2 + e] = LETTERS.index(c["letters"][e])
    # one string, not 46: the names are what the game holds longest
    return Catalog(bytes(cards), "".join("%s\n%s\n" % (objects[ch][0], objects[ch][1]) for ch in LETTERS))


def default_path():
    """Where catalogs/mim.json sits in the package (flash: /maus/catalogs/mim.json)."""
    from maus import data_dir

    return data_dir() + "/catalogs/mim.json"


def load_file(path=None):
    """The Catalog from path (default: catalogs/mim.json next to the games package)."""
    import json

    with open(path or default_path()) as f:
        return build(json.load(f))
