# M is for Mouse: the game's end, loaded for that moment and let go again (maus.moment), so none of it stays
# in RAM while a game is played: the end and winners, the summary for the log. The end is a game's tightest
# moment in RAM: the moments during play are apart (the status screen and B and C's hints: mim.aside, A's
# rounds: mim.rounds, B and C's claims: mim.claims).
from micropython import const

_HAND = const(3)  # A: cards in each hand at the start (as mim.new)


def end(e, reason):
    """The game is over (any variant): the winners' LEDs blink, the unit shows the results."""
    e.reason = reason
    e.g.done = True
    t = e.table
    for name in ("claim", "decide", "quiet", "hint", "last", "next"):
        t.cancel(name)
    t.sound("win")
    t.led(0, None)
    for p in winners(e):
        t.led(p, e.colour[p], "blink")
    t.finish()


def winners(e):
    # (loops, not comprehensions: each would be a function of its own in RAM at the game's end, its peak)
    v = e.g.variant
    if v == "A":
        got, best = e.hand, 0  # no cards left
    elif v == "B":
        got, best = e.cards, -1  # the most cards won
        for p in e.ids:
            if best < 0 or got[p] > best:
                best = got[p]
    else:
        got, best = e.chips, 0  # no chips left
    out = []
    for p in e.ids:
        if got[p] == best:
            out.append(p)
    return out


def summary(e):
    v = e.g.variant
    scores = {}
    br = {}
    for p in e.ids:
        k = str(p)
        if v == "A":
            scores[k] = _HAND - e.hand[p]
            br[k] = {"cards_left": e.hand[p], "rounds_won": e.won[p], "pairs": e.pairs[p],
                     "passes": e.passes[p]}
        elif v == "B":
            scores[k] = e.cards[p]
            br[k] = {"cards": e.cards[p], "claims_ok": e.ok[p], "claims_wrong": e.wrong[p],
                     "leader": p == e.leader}
        else:
            scores[k] = e.placed[p]
            br[k] = {"chips_left": e.chips[p], "chips_placed": e.placed[p], "claims_ok": e.ok[p],
                     "claims_wrong": e.wrong[p]}
    return {"scores": scores, "winners": winners(e), "breakdown": br, "reason": e.reason}
