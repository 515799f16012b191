# Mausgeflippt card data: the validator (format and rulebook counts) and the fields of the compact Catalog
# built from a good catalog. The game loads catalogs through mausgeflippt.cards.load, which runs this once,
# makes its Catalog of the fields and unloads this module again. It imports nothing of the game: the counts
# are its own consts (as mausgeflippt.cards's; a const costs no RAM).
#
# catalogs/mg.json (docs/games/mausgeflippt.md): colours, clothing types and cheese types by name; 32 mice
# {"id", "wears": ["red hat", ...], "cheese"}, 58 clothing cards {"id", "item"}, 9 cheese cards
# {"id", "cheese"}. Ids run 1..N, as on the cards' tags ("mg/mouse/07" is mouse id 7).
from micropython import const

MICE = const(32)  # rulebook component counts (as mausgeflippt.cards)
CLOTHING = const(58)
CHEESES = const(9)
MIN_WEARS = const(2)
MAX_WEARS = const(4)
_MAX_NAMES = const(16)  # an item code is type * 16 + colour: one byte
_MAX_ERRORS = const(20)


def item_code(s, colours, types):
    """ "red hat" -> type index * 16 + colour index, or None."""
    if not isinstance(s, str):
        return None
    parts = s.split(" ")
    if len(parts) != 2 or parts[0] not in colours or parts[1] not in types:
        return None
    return types.index(parts[1]) * 16 + colours.index(parts[0])


def _names(data, key, err):
    v = data.get(key)
    if not isinstance(v, list) or not v or len(v) > _MAX_NAMES:
        err("%s: a list of 1..%d names" % (key, _MAX_NAMES))
        return []
    for n in v:
        if not isinstance(n, str) or not n or " " in n:
            err("%s: %r is not a one-word name" % (key, n))
            return []
    if len(set(v)) != len(v):
        err("%s: names repeat" % key)
    return v


def _cards(data, key, count, err):
    # The list under key, as records sorted by id; ids must be exactly 1..count.
    v = data.get(key)
    if not isinstance(v, list):
        err("%s: missing or not a list" % key)
        return []
    if len(v) != count:
        err("%s: %d cards, the game has %d" % (key, len(v), count))
    byid = {}
    for i, c in enumerate(v):
        cid = c.get("id") if isinstance(c, dict) else None
        if not isinstance(cid, int) or isinstance(cid, bool) or not 1 <= cid <= count:
            err("%s[%d]: id must be 1..%d" % (key, i, count))
        elif cid in byid:
            err("%s: id %d twice" % (key, cid))
        else:
            byid[cid] = c
    return [byid[k] for k in sorted(byid)]


def validate_catalog(data):
    """Format and rulebook counts; returns a list of error strings (empty when the catalog is good)."""
    errors = []  # type: list[str]

    def err(msg):
        if len(errors) < _MAX_ERRORS:
            errors.append(msg)

    if not isinstance(data, dict):
        return ["catalog: not a JSON object"]
    if data.get("game") != "mg":
        err('game: must be "mg"')
    colours = _names(data, "colours", err)
    types = _names(data, "types", err)
    cheeses = _names(data, "cheeses", err)
    if errors:
        return errors
    cards = set()
    for c in _cards(data, "clothing", CLOTHING, err):
        code = item_code(c.get("item"), colours, types)
        if code is None:
            err("clothing %d: item %r is not '<colour> <type>' from the lists" % (c["id"], c.get("item")))
        else:
            cards.add(code)
    outfits = set()
    for m in _cards(data, "mice", MICE, err):
        mid = m["id"]
        wears = m.get("wears")
        if not isinstance(wears, list) or not MIN_WEARS <= len(wears) <= MAX_WEARS:
            err("mouse %d: wears must list %d..%d items" % (mid, MIN_WEARS, MAX_WEARS))
            continue
        codes = []
        for w in wears:
            code = item_code(w, colours, types)
            if code is None:
                err("mouse %d: item %r is not '<colour> <type>' from the lists" % (mid, w))
            elif code in codes:
                err("mouse %d: wears %s twice" % (mid, w))
            elif code not in cards:
                err("mouse %d: no clothing card shows %s" % (mid, w))
            if code is not None:
                codes.append(code)
        if m.get("cheese") not in cheeses:
            err("mouse %d: cheese %r is not in cheeses" % (mid, m.get("cheese")))
        key = tuple(sorted(codes))
        if key in outfits:
            err("mouse %d: the same outfit as another mouse" % mid)
        outfits.add(key)
    used = set()
    for c in _cards(data, "cheese_cards", CHEESES, err):
        if c.get("cheese") in cheeses:
            used.add(c["cheese"])
        else:
            err("cheese card %d: cheese %r is not in cheeses" % (c["id"], c.get("cheese")))
    for n in cheeses:
        if n not in used:
            err("cheeses: no cheese card shows %s (its mice could never be protected)" % n)
    return errors


def build(data):
    """A catalog dict -> the fields of its compact Catalog (mausgeflippt.cards.Catalog(*fields)), checked first.
    Raises ValueError naming the first problem."""
    errors = validate_catalog(data)
    if errors:
        raise ValueError("mg catalog: " + errors[0])
    colours = data["colours"]
    types = data["types"]
    cheeses = data["cheeses"]
    mice = sorted(data["mice"], key=lambda m: m["id"])
    wears = bytearray(MAX_WEARS * MICE)
    for m in mice:
        codes = [item_code(w, colours, types) for w in m["wears"]]
        for i in range(MAX_WEARS):  # a shorter outfit padded with its first item: worn() needs no lengths
            wears[MAX_WEARS * (m["id"] - 1) + i] = codes[i] if i < len(codes) else codes[0]
    mouse_cheese = bytes(cheeses.index(m["cheese"]) for m in mice)
    clothing = bytes(item_code(c["item"], colours, types) for c in sorted(data["clothing"], key=lambda c: c["id"]))
    cheese_cards = bytes(cheeses.index(c["cheese"]) for c in sorted(data["cheese_cards"], key=lambda c: c["id"]))
    return (" ".join(colours), " ".join(types), " ".join(cheeses), bytes(wears), mouse_cheese, clothing,
            cheese_cards)


def outfit(cat, mouse):
    """The item codes mouse (id) wears, as bytes (Catalog.wears pads a shorter outfit with its first item;
    an outfit never lists an item twice)."""
    w = cat.wears[MAX_WEARS * (mouse - 1): MAX_WEARS * mouse]
    n = 1
    while n < MAX_WEARS and w[n] != w[0]:
        n += 1
    return w[:n]


def default_path():
    """Where catalogs/mg.json sits in the package (flash: /maus/catalogs/mg.json)."""
    from maus import data_dir

    return data_dir() + "/catalogs/mg.json"


def read_file(path=None):
    """The catalog dict in path (default: catalogs/mg.json), for mausgeflippt.cards.load."""
    import json

    with open(path or default_path()) as f:
        return json.load(f)
