# Mausgeflippt: the game's state made at its start, loaded for that and let go again
# (maus.moment from mausgeflippt.Mausgeflippt.__init__): the settings it plays with, the arbiter,
# the table (maus.games.mausgeflippt.cards.TableState) and what a reveal and a claim keep.
from maus.capture.arbiter import Arbiter
from maus.games.mausgeflippt.cards import TableState, load
from micropython import const

_SETUP = const(0)  # the game's first phase (as mausgeflippt.py)
_HAND = const(7)  # clothing cards in a hand
_P = const(7)  # per-player lists are indexed by player id 1..6


def setup(g, players, settings):
    g.cat = load(g.catalog)  # ValueError naming the problem for a bad catalog
    s = settings.get
    g.lang = s("lang", "en") if s("lang", "en") in g.TEXT else "en"
    g.claim_ms = s("claim_window_ms", 5000)
    g.protect_ms = s("protection_timeout_ms", 3000)
    g.nudge_ms = s("prompt_timeout_s", 60) * 1000
    g.arb = Arbiter(s("tie_window_us", 2000), s("lockout", True))
    g.colour = ["white"] * _P
    for pl in players:
        g.colour[pl.id] = pl.colour
    g.s = TableState(players)
    g.phase = _SETUP
    g.reason = ""
    g.mouse = 0  # the open mouse
    g.under = 0  # the mouse that went under the stack last
    g.protected = False
    g.revealer = 0  # who reveals next (0: anyone)
    g.early_t = [None] * _P  # time of a press while waiting for the mouse
    g.queue = []  # this reveal's claims, in press order
    g.qi = 0
    g.claimant = 0
    g.valid = 0  # valid claims this reveal
    g.took_cheese = 0  # cheeses taken this reveal
    g.deciding = False  # the race's decide timer runs
    g.coll = bytearray(_HAND)  # the collection being tapped (clothing ids)
    g.ncoll = 0
