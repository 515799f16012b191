# Mausgeflippt: "Mausgeflippt!", a claim with a whole collection: the call (a double press of the
# claimant), each card of the hand tapped, the collection judged. Loaded for its moment (maus.moment
# from maus.games.mausgeflippt.rules) and let go again. A collection's window that runs out with no card tapped is
# a claim with nothing played (mausgeflippt.claims.no_claim). g is the game (mausgeflippt.Mausgeflippt).
from micropython import const

_COLLECT = const(4)  # the game's phase while a collection is tapped (as mausgeflippt.py)
_HAND = const(7)
_YOUNG_HAND = const(4)
_MAX_DOWN = const(3)  # face-down penalties that block "Mausgeflippt!"


def call(g):
    """The claimant calls "Mausgeflippt!": refused with three face-down cards; the window stays open for
    a card."""
    p = g.claimant
    if g.s.down[p] >= _MAX_DOWN:
        g._verdict(p, False, "blocked_3_face_down")
        g._bad("blocked", p=p)
        return
    g.phase = _COLLECT
    g.ncoll = 0
    g.table.log("claim", {"player": p, "call": "mausgeflippt"})
    g._say("collect", p=p, n=_hand(g, p))
    g.table.timer("claim", g.claim_ms)


def card(g, c):
    """Clothing card c (not a penalty card) of the collection on the pad."""
    for i in range(g.ncoll):
        if g.coll[i] == c:
            return  # read again: counted once
    n = _hand(g, g.claimant)
    if g.ncoll >= n:
        g._bad("too_many", n=n)
        return
    g.coll[g.ncoll] = c
    g.ncoll += 1
    g.table.sound("tick")
    g.table.timer("claim", g.claim_ms)  # a fresh window for the next card


def end(g, timed_out):
    """The collection is complete: the claimant's press, or (timed_out) its window ran out with cards."""
    if g.ncoll == 0:
        g._bad("no_cards")  # a press before any card: the window stays open
        return
    g.table.cancel("claim")
    if timed_out:
        g.table.log("timeout", {"what": "claim", "player": g.claimant, "outcome": "collection_judged"})
    p = g.claimant
    n = 0
    for i in range(g.ncoll):
        c = g.coll[i]
        if g._worn(c):
            g._penalise(p, c, n == 0)  # one matching card face down, the rest face up
            n += 1
    if g.protected:
        g._verdict(p, False, "protected_collection")
        g._cheese(p, n, False)
    elif n == 0:
        g._verdict(p, True, "collection_clean")
        g._catch(p)
    else:
        g._verdict(p, False, "collection_matches")
        g._wrong(p, "wrong_coll", n)
    g._next_claim()


def _hand(g, p):
    return _YOUNG_HAND if g.s.young[p] else _HAND
