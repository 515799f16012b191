# Checks a Mucks Mäuschen Still catalog (catalogs/mms.json or a user's own castle and dice) and builds the
# compact one. Loaded only for that, then unloaded (maus.games.mms.castle validate_catalog, load_catalog).
from micropython import const

STICKS = const(16)  # rulebook: 16 wooden sticks
CASTLE_END = const(12)  # the 12th stick in the castle ends the game
_MAX_FACES = const(12)


def validate_catalog(data):
    """Errors in a catalog dict (empty when it is good): format and the rulebook's counts."""
    errs = []
    if not isinstance(data, dict):
        return ["catalog: not a JSON object"]
    if data.get("game") != "mms":
        errs.append("game: must be \"mms\"")
    if data.get("sticks") != STICKS:
        errs.append("sticks: the game has %d sticks" % STICKS)
    if data.get("castle_end") != CASTLE_END:
        errs.append("castle_end: the game ends with the %dth stick in the castle" % CASTLE_END)
    holes = data.get("holes")
    ids = []
    if not isinstance(holes, list) or not holes:
        errs.append("holes: a list of hole colours")
        holes = []
    for i, h in enumerate(holes):
        where = "holes[%d]" % i
        if not isinstance(h, dict):
            errs.append(where + ": an object {id, en, de}")
            continue
        hid = h.get("id")
        if not isinstance(hid, str) or not hid:
            errs.append(where + ".id: a name")
            continue
        if hid in ids:
            errs.append(where + ".id: %s twice" % hid)
        ids.append(hid)
        for lang in ("en", "de"):
            n = h.get(lang)
            if not isinstance(n, str) or not 0 < len(n) <= 6 or not _ascii(n):
                errs.append(where + ".%s: 1-6 ASCII characters (the display's font)" % lang)
    dice = data.get("dice")
    if not isinstance(dice, list) or len(dice) != 2:
        errs.append("dice: a list of the 2 dice")
        dice = []
    for i, die in enumerate(dice):
        where = "dice[%d]" % i
        if not isinstance(die, list) or not 2 <= len(die) <= _MAX_FACES:
            errs.append(where + ": a list of 2-%d faces" % _MAX_FACES)
            continue
        for j, face in enumerate(die):
            if face not in ids:
                errs.append(where + "[%d]: %r is not a hole colour" % (j, face))
    return errs


def _ascii(s):
    for c in s:
        if not " " <= c <= "~":
            return False
    return True


def build(data):
    """The compact catalog's fields (holes, names, dice, sticks, castle_end) for maus.games.mms.castle.Catalog,
    or None when the data is not a valid catalog."""
    if validate_catalog(data):
        return None
    ids = tuple(h["id"] for h in data["holes"])
    names = {lang: tuple(h[lang] for h in data["holes"]) for lang in ("en", "de")}
    dice = tuple(bytes(ids.index(f) for f in die) for die in data["dice"])
    return ids, names, dice, data["sticks"], data["castle_end"]


def default():
    """The castle's holes and the two dice when no catalog is loaded (same as catalogs/mms.json): the fields
    (holes, names, dice) of maus.games.mms.castle.Catalog."""
    holes = ("red", "yellow", "green", "blue", "orange", "purple")
    return holes, {"en": holes, "de": ("rot", "gelb", "gruen", "blau", "orange", "lila")}, (bytes(range(6)), bytes(range(6)))
