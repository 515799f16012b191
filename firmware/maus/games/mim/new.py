# M is for Mouse: the making of a game, loaded for that moment and let go again (maus.moment from
# maus.games.mim.rules.MIsForMouse): its catalog and its variant's engine, with the engine's state set up here
# rather than in __init__ methods that would stay in RAM for the whole game. Each class names the state
# made here (bare annotations: the compiler keeps nothing of them).
import gc

from maus import moment
from maus.capture.arbiter import Arbiter
from maus.games.mim.engine import Catalog, Pairs
from micropython import const

_LEADER = const(0)  # B and C: the first phase (mim.race)
_CHIPS = const(30)  # C: chips in the game (mim.chips)
_ROUND = const(8)  # C: cards a round (mim.chips)
_T_LAY = const(0)  # A: the first phase (mim.turns)
_MIDDLE = const(3)  # A: middle cards (mim.turns)
_HAND = const(3)  # A: cards in each hand at the start (mim.turns)


def engine(g):
    """The catalog (g.catalog: None = the default one, a dict is checked and compacted) and the engine of
    g.variant. Raises ValueError for a bad catalog or variant."""
    cat = g.catalog
    if cat is None:  # the default catalog
        from maus.games.mim.catalog import load_file

        g.catalog = cat = load_file()
    elif not isinstance(cat, Catalog):  # a dict: checked and compacted, as maus.games.mim.rules.load_catalog
        with moment():
            import maus.games.mim.catalog

            g.catalog = cat = maus.games.mim.catalog.build(cat)
    gc.collect()  # the catalog's JSON is garbage now: free it before the variant's code is loaded
    v = g.variant
    if v == "A":
        from maus.games.mim.turns import Turns

        a = Turns()
        _engine(a, g, 2)  # A checks two cards at a time
        _turns(a)
        return a
    if v == "B":
        from maus.games.mim.leader import Leader

        b = Leader()
        _engine(b, g, g.catalog.n)  # B: every card may lie face up
        _race(b)
        b.seen = bytearray(b.total)  # laid this game
        b.leader = 0
        b.cards = [0] * 7  # won
        return b
    if v == "C":
        from maus.games.mim.chips import Chips

        c = Chips()
        _engine(c, g, _ROUND)
        _race(c)
        c.chips = [0] * 7  # in hand
        c.placed = [0] * 7
        c.round = 0
        each = _CHIPS // len(c.ids)
        for p in c.ids:
            c.chips[p] = each
        c.box = _CHIPS - each * len(c.ids)
        return c
    raise ValueError("M is for Mouse has variants A, B and C, not %r" % (v,))


def _engine(e, g, slots):
    # what every variant has (maus.games.mim.rules.Engine)
    e.g = g
    e.table = g.table
    e.cat = g.catalog
    e.settings = g.settings
    e.lang = g.settings.get("lang", "de")
    e.ids = [p.id for p in g.players]
    e.colour = ["off"] * 7
    for p in g.players:
        e.colour[p.id] = p.colour
    e.finder = Pairs(e.cat.cards, slots)  # slots: the most cards it searches at once
    e.opts = bytearray(8)  # the pairs two tapped cards allow (4 at most), as Pairs.out
    e.opt_cards = bytearray(2)  # the two cards of those pairs (slot 0, slot 1)
    e.n_opts = 0
    e.opt_i = 0
    e.reason = ""


def _race(e):
    # B and C (maus.games.mim.race.Race)
    s = e.settings
    e.arb = Arbiter(s.get("tie_window_us", 2000), s.get("lockout", True), s.get("settle_ms", 3))
    e.claim_ms = s.get("claim_window_ms", 5000)
    e.hint_ms = s.get("hint_after_s", 20) * 1000 if s.get("hints", False) else 0
    total = e.cat.n
    e.total = total
    e.slots = bytearray(total)  # the face-up cards (card indexes), oldest first
    e.used = bytearray(total)  # chips on them (Pairs bits; C: letters only)
    e.n = 0
    e.laid = 0  # B: cards laid so far
    e.lock = bytearray(7)  # B: no claims while laid < lock[p]
    e.queue = []  # waiting claims [(offset_us, player)], earliest first
    e.claimer = 0
    e.tap1 = -1  # table slot of the claimer's first card
    e.cs = bytearray(2)  # table slots of the two cards on offer
    e.tap_t = 0
    e.deciding = False
    e.reveal_t = 0
    e.ok = [0] * 7
    e.wrong = [0] * 7
    e.phase = _LEADER


def _turns(e):
    # A (maus.games.mim.turns.Turns)
    e.mid = bytearray(_MIDDLE)  # card indexes
    e.used = bytearray(_MIDDLE)  # chips on them (Pairs bits)
    e.nmid = 0
    e.hand = [_HAND] * 7  # by player id
    e.out = bytearray(7)  # passed this round
    e.won = bytearray(7)
    e.pairs = [0] * 7
    e.passes = [0] * 7
    e.turn = e.ids[0]  # the oldest player sits at the lowest button (docs/games/mim.md)
    e.round = 0
    e.hcard = -1
    e.mslot = -1
    e.phase = _T_LAY
