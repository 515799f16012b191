# Mausgeflippt card data in the compact form the unit plays with: an item is one byte, an outfit bytes.
from micropython import const

from maus import call_unloaded

MICE = const(32)  # rulebook component counts
CLOTHING = const(58)
CHEESES = const(9)
MIN_WEARS = const(2)
MAX_WEARS = const(4)

_CHECK = "maus.games.mausgeflippt_catalog"


class Catalog:
    """Compact card data: an item is one byte (type * 16 + colour), a mouse's outfit is bytes."""

    __slots__ = ("colours", "types", "cheese_types", "wears", "mouse_cheese", "clothing", "cheese_cards")

    def __init__(self, colours, types, cheese_types, wears, mouse_cheese, clothing, cheese_cards):
        self.colours = colours  # tuple of names
        self.types = types  # tuple of names
        self.cheese_types = cheese_types  # tuple of names
        self.wears = wears  # tuple (by mouse id - 1) of bytes of item codes
        self.mouse_cheese = mouse_cheese  # bytes: cheese type index by mouse id - 1
        self.clothing = clothing  # bytes: item code by clothing id - 1
        self.cheese_cards = cheese_cards  # bytes: cheese type index by cheese id - 1

    def item_name(self, code):
        return self.colours[code & 15] + " " + self.types[code >> 4]

    def worn(self, mouse, code):
        """Does mouse (id) wear item `code` (type AND colour)?"""
        return code in self.wears[mouse - 1]


def item_code(s, colours, types):
    """ "red hat" -> type index * 16 + colour index, or None."""
    if not isinstance(s, str):
        return None
    parts = s.split(" ")
    if len(parts) != 2 or parts[0] not in colours or parts[1] not in types:
        return None
    return types.index(parts[1]) * 16 + colours.index(parts[0])


def validate(data):
    """The validator's errors; its module is unloaded again unless someone else holds it (saves ~6 KB)."""
    return call_unloaded(_CHECK, "validate_catalog", data)


def load(data):
    """A validated catalog dict -> Catalog. Raises ValueError naming the first problem."""
    if isinstance(data, Catalog):
        return data
    errors = validate(data)
    if errors:
        raise ValueError("mg catalog: " + errors[0])
    colours = data["colours"]
    types = data["types"]
    cheeses = data["cheeses"]
    mice = sorted(data["mice"], key=lambda m: m["id"])
    wears = tuple(bytes(item_code(w, colours, types) for w in m["wears"]) for m in mice)
    mouse_cheese = bytes(cheeses.index(m["cheese"]) for m in mice)
    clothing = bytes(item_code(c["item"], colours, types) for c in sorted(data["clothing"], key=lambda c: c["id"]))
    cheese_cards = bytes(cheeses.index(c["cheese"]) for c in sorted(data["cheese_cards"], key=lambda c: c["id"]))
    return Catalog(tuple(colours), tuple(types), tuple(cheeses), wears, mouse_cheese, clothing, cheese_cards)


def default_path():
    """Where catalogs/mg.json sits in the package (flash: /maus/catalogs/mg.json)."""
    here = __file__.replace("\\", "/")
    return here[: here.rfind("/games/")] + "/catalogs/mg.json"


def load_file(path=None):
    import json

    with open(path or default_path()) as f:
        return load(json.load(f))
