# Mausgeflippt card data in the compact form the unit plays with: an item is one byte, the outfits one bytes,
# the names one string a kind (a few objects, not a hundred: the catalog stays in RAM while a game is played).
# Building it from catalogs/mg.json (checked first) is maus.games.mausgeflippt.catalog's, loaded for that
# and let go again (it gives the fields; this module makes the Catalog). And the table as the unit
# can know it (TableState: what was tapped, never a hand) and the scores: both stay with the game, so one
# module (each costs its fixed few hundred bytes); the winners, the summary and the status screen are
# maus.games.mausgeflippt.moments's, loaded for their moment.
from maus import moment
from micropython import const

MICE = const(32)  # rulebook component counts
CLOTHING = const(58)
CHEESES = const(9)
MIN_WEARS = const(2)
MAX_WEARS = const(4)
_P = const(7)  # per-player lists are indexed by player id 1..6


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
    with moment():
        import maus.games.mausgeflippt.catalog

        return Catalog(*maus.games.mausgeflippt.catalog.build(data))


load_catalog = load  # the unit's start compacts the JSON catalog with this (maus.unit.shared.GAMES)


class TableState:
    def __init__(self, players):
        self.ids = []  # seating order
        self.young = [False] * _P
        for pl in players:  # (one loop: a comprehension would be a function of its own in RAM)
            self.ids.append(pl.id)
            self.young[pl.id] = pl.young
        # counts by player id, each below 256 (32 mice, 58 clothing cards, 9 cheeses)
        self.mice = bytearray(_P)  # caught mice
        self.up = bytearray(_P)  # face-up clothing penalties
        self.down = bytearray(_P)  # face-down clothing penalties
        self.cheeses = bytearray(_P)  # cheeses taken
        self.mice_left = MICE  # the stack, the open mouse included
        self.caught = bytearray(MICE + 1)  # by mouse id: 1 = caught from the pad (stack mice stay anonymous)
        self.penalty = bytearray(CLOTHING + 1)  # by clothing id: the player it lies in front of, 0 = none
        self.cheese_used = bytearray(CHEESES + 1)  # by cheese id: 1 = shown (and maybe taken)
        self.cheese_stack = CHEESES  # face down
        self.open_cheese = 0  # cheese id, 0 = none open

    def score(self, p):
        return self.mice[p] - self.up[p] - self.down[p] - 2 * self.cheeses[p]

    def penalty_points(self, p):
        return self.up[p] + self.down[p] + 2 * self.cheeses[p]

    def cheeses_left(self):
        return self.cheese_stack + (1 if self.open_cheese else 0)

    def show_cheese(self, n):
        self.cheese_used[n] = 1
        self.cheese_stack -= 1
        self.open_cheese = n

    def penalise(self, p, card, face_down):
        self.penalty[card] = p
        if face_down:
            self.down[p] += 1
        else:
            self.up[p] += 1

    def catch(self, p, mouse):
        """p catches `mouse` from the pad, or (mouse 0) one from the stack. False when none is left."""
        if self.mice_left == 0:
            return False
        if mouse:
            self.caught[mouse] = 1
        self.mice_left -= 1
        self.mice[p] += 1
        return True

    def take_cheese(self, p, from_stack):
        """p takes the open cheese, or (from_stack) the top face-down one. False when none is left."""
        if from_stack:
            if self.cheese_stack == 0:
                return False
            self.cheese_stack -= 1
        self.cheeses[p] += 1
        return True
