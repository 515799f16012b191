# M is for Mouse: what the variants do aside during play, loaded for that moment and let go again
# (maus.moment): the status screen of a long press, B and C's hints. Apart from the end's (mim.moments): the
# end is a game's tightest moment in RAM, and loads none of this.
from maus.games.mim.engine import LETTERS


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
