# Mucks Mäuschen Still's catalog as the game plays it (its castle's holes and its two dice): what the start loads
# before the log opens (maus.unit.shared GAMES), without the game's rules (maus.games.mms.rules), which load after.
from maus import moment
from micropython import const

STICKS = const(16)  # rulebook component counts (mms.catalog checks them)
CASTLE_END = const(12)


class Catalog:
    """The compact catalog: hole colours (ids and names per language), two dice as bytes of hole indices."""

    def __init__(self, holes, names, dice, sticks=STICKS, castle_end=CASTLE_END):
        self.holes = holes
        self.names = names
        self.dice = dice
        self.sticks = sticks
        self.castle_end = castle_end


def validate_catalog(data):
    """Errors in a catalog dict (empty when it is good). The checker module is unloaded again after use."""
    with moment():
        import maus.games.mms.catalog

        return maus.games.mms.catalog.validate_catalog(data)


def load_catalog(data):
    """The compact Catalog, or None when the data is not a valid catalog (the game then uses
    maus.games.mms.catalog.default()). The checker and builder module is unloaded again after use."""
    with moment():
        import maus.games.mms.catalog

        f = maus.games.mms.catalog.build(data)
    return None if f is None else Catalog(*f)
