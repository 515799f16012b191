# Mausgeflippt card data in the compact form the unit plays with: an item is one byte, the outfits one bytes,
# the names one string a kind (a few objects, not a hundred: the catalog stays in RAM while a game is played).
# Building it from catalogs/mg.json (checked first) is maus.games.mausgeflippt_catalog's, loaded for that
# and let go again; item_code, default_path and load_file are reachable here too.
from micropython import const

from maus import call_unloaded

MICE = const(32)  # rulebook component counts
CLOTHING = const(58)
CHEESES = const(9)
MIN_WEARS = const(2)
MAX_WEARS = const(4)

_CHECK = "maus.games.mausgeflippt_catalog"


def __getattr__(name):  # item_code, default_path, load_file
    import maus.games.mausgeflippt_catalog

    return getattr(maus.games.mausgeflippt_catalog, name)


class Catalog:
    """Compact card data: an item is one byte (type * 16 + colour), the outfits one bytes."""

    def __init__(self, colours, types, cheese_types, wears, mouse_cheese, clothing, cheese_cards):
        self.colours = colours  # str: the colour names, one word each, " " between
        self.types = types  # str: the clothing type names, as colours
        self.cheese_types = cheese_types  # str: the cheese names, as colours
        self.wears = wears  # bytes: MAX_WEARS item codes by mouse id - 1 (a short outfit repeats its first)
        self.mouse_cheese = mouse_cheese  # bytes: cheese type index by mouse id - 1
        self.clothing = clothing  # bytes: item code by clothing id - 1
        self.cheese_cards = cheese_cards  # bytes: cheese type index by cheese id - 1

    def item_name(self, code):
        return self.colours.split(" ")[code & 15] + " " + self.types.split(" ")[code >> 4]

    def cheese_name(self, k):
        return self.cheese_types.split(" ")[k]

    def worn(self, mouse, code):
        """Does mouse (id) wear item `code` (type AND colour)?"""
        w = self.wears
        for i in range(MAX_WEARS * (mouse - 1), MAX_WEARS * mouse):
            if w[i] == code:
                return True
        return False


def load(data):
    """A catalog dict (catalogs/mg.json) -> Catalog, checked first. Raises ValueError naming the first problem."""
    if isinstance(data, Catalog):
        return data
    return call_unloaded(_CHECK, "load", data)


load_catalog = load  # the unit's start compacts the JSON catalog with this (maus.unit.GAMES)
