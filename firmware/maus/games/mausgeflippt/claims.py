# Mausgeflippt: the rules of a claim with one clothing item, the part after a race is decided: worn or
# not, a protected mouse, a claim window that runs out with nothing played, a claim passed on.
# "Mausgeflippt!" with a whole collection is mausgeflippt.collection's. Each loaded for its moment (a card
# played, a claim's timer: maus.moment from maus.games.mausgeflippt.rules) and let go again, so none of
# it stays in RAM between claims. g is the game (mausgeflippt.Mausgeflippt: what a verdict does is its own).


def item(g, c):
    """The claimant plays clothing card c (not a penalty card): judged at once, then the next claim."""
    g.table.cancel("claim")
    p = g.claimant
    worn = g._worn(c)
    if g.protected:
        # a worn item on a protected mouse is discarded; a wrong one is a penalty too
        g._verdict(p, False, "protected_item_worn" if worn else "protected_item_not_worn")
        if not worn:
            g._penalise(p, c, False)
        g._cheese(p, 0 if worn else 1, worn)
    elif worn:
        g._verdict(p, True, "item_worn")
        g._catch(p)
    else:
        g._verdict(p, False, "item_not_worn")
        g._penalise(p, c, False)
        g._wrong(p, "wrong_item", 1)
    g._next_claim()


def no_claim(g):
    """The claim window ran out with nothing played (no card, or a collection without one): the press
    alone was the try."""
    p = g.claimant
    g.table.log("timeout", {"what": "claim", "player": p,
                            "outcome": "cheese" if g.protected else "no_claim"})
    if g.protected:
        g._verdict(p, False, "protected")
        g._cheese(p, 0, False)
    else:
        g._verdict(p, False, "timeout")
        g.table.led(p, None)
        g._say("too_slow", p=p)
        if g.qi >= len(g.queue):
            _pass_on(g)
    g._next_claim()


def _pass_on(g):
    # Decision 3: the mouse goes to the first player who PLACES a card (rulebook), so when the claimant
    # plays nothing the claim passes to the next player who pressed since the reveal, in press order.
    arb = g.arb
    for q in arb.order:
        if q not in g.queue:
            g.queue.append(q)
            g.table.log("claim", {"player": q, "offset_us": arb.offset(q), "passed": True})
            return
