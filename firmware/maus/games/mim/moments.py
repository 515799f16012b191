# M is for Mouse: what the variants do at moments only, loaded for that moment and let go again
# (maus.moment), so none of it stays in RAM while a game is played: the game's end and winners, the
# summary for the log, the status screen of a long press, B and C's hints (A's rounds:
# mim.rounds, B and C's claims: mim.claims).
from maus.games.mim.engine import LETTERS
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
    v = e.g.variant
    if v == "A":
        return [p for p in e.ids if e.hand[p] == 0]
    if v == "B":
        best = max(e.cards[p] for p in e.ids)
        return [p for p in e.ids if e.cards[p] == best]
    return [p for p in e.ids if e.chips[p] == 0]


def status(e):
    v = e.g.variant
    de = e.lang == "de"
    if v == "A":
        out = []
        for p in e.ids:
            s = ("S%d: %d Karten" if de else "P%d: %d cards") % (p, e.hand[p])
            if e.out[p]:
                s += " -"
            out.append(s)
        return out[:6]
    if v == "B":
        f = "S%d: %d Karten" if de else "P%d: %d cards"
        return [f % (p, e.cards[p]) for p in e.ids][:6]
    f = "S%d: %d Chips" if de else "P%d: %d chips"
    return [f % (p, e.chips[p]) for p in e.ids][:6]


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


def hint(e):
    """B and C (maus.games.mim.race): the hint timer ran out with a pair on the table: its letter."""
    if e.pairs_left() == 0:
        return
    pos = e.finder.out[0]  # the object of the first pair found (Pairs.out)
    letter = e.cat.cards[4 * e.slots[pos >> 2] + (pos & 3)]
    t = e.table
    t.log("prompt", {"what": "hint", "letter": LETTERS[letter]})
    t.led(0, "white", "blink")
    t.sound("prompt")
    e.say("hint", l=LETTERS[letter])
