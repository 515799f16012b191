# M is for Mouse (rulebook: shared/rules/m-is-for-mouse.txt), variants A, B and C.
#
# The Game the shell runs is MIsForMouse; it hands every event to the engine of its variant:
# mim.turns (A: turns round the table), mim.leader (B: a game leader reveals) and mim.chips (C: all at
# once), the last two built on the claims of mim.race. Cards, the pair finder and the engines' base are in
# mim.engine (a leaf: the parts loaded for their moments import it, never this module), the validator in
# mim.catalog, the end, winners and summary in mim.moments, the status screen and hints in mim.aside
# (loaded for their moments).
# Decisions where the rulebook is silent: docs/games/mim.md.
from maus import moment
from maus.games.base import Game
from maus.games.mim.engine import Catalog
from maus.text import Texts
from micropython import const

_TYPES = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if _TYPES:
    from maus.games.mim.engine import Engine


def load_catalog(data):
    """A catalog dict -> the compact Catalog (the shell calls this). Raises ValueError if it is bad."""
    if isinstance(data, Catalog):
        return data
    # the builder is needed once per game: free its ~5 KB again unless someone else holds it
    with moment():
        import maus.games.mim.catalog

        return maus.games.mim.catalog.build(data)


# The prompts: 16 characters x 6 lines, ASCII only (the OLED font has no umlauts; pair names are folded by
# ascii() before they are shown), in maus/texts/mim.<lang>.json, read from flash when shown (maus.text).
TEXT = Texts("mim")


class MIsForMouse(Game):
    GAME = "mim"
    TITLE = "M is for Mouse"
    VARIANTS = ("A", "B", "C")  # type: ignore[assignment]  # Game's default (None,) fixes its type
    TEXT = TEXT  # type: ignore[assignment]  # a maus.text.Texts: read from flash when asked
    e: "Engine"  # the variant's (maus.games.mim.new; a bare annotation: the compiler keeps nothing of it)

    def __init__(self, table, players, settings, catalog, variant=None, seed=0):
        super().__init__(table, players, settings, catalog, variant, seed)
        # the catalog and the variant's engine, by code loaded for this moment (ValueError: a bad one)
        with moment():
            import maus.games.mim.new

            self.e = maus.games.mim.new.engine(self)

    def start(self):
        self.e.start()

    def summary(self):
        with moment():
            import maus.games.mim.moments

            return maus.games.mim.moments.summary(self.e)

    def status(self):
        with moment():
            import maus.games.mim.aside

            return maus.games.mim.aside.status(self.e)

    def end(self, reason):
        """A variant's engine says the game is over, and why."""
        with moment():
            import maus.games.mim.moments

            maus.games.mim.moments.end(self.e, reason)

    def on_tap(self, ident, uid, t_us):
        self.table.log("tap", {"identity": ident, "uid": _uid(uid)})
        if not self.done:
            self.e.on_tap(ident, t_us)

    def on_press(self, player, t_us):
        if not self.done and player in self.e.ids:
            self.e.on_press(player, t_us)

    def on_gesture(self, player, kind):
        if not self.done and player in self.e.ids:
            self.e.on_gesture(player, kind)

    def on_timer(self, name):
        if not self.done:
            self.e.on_timer(name)


def _uid(uid):
    # the tag UID for the log: lowercase hex
    if uid is None:
        return ""
    if isinstance(uid, (bytes, bytearray)):
        return uid.hex()
    return str(uid).lower()
