# M is for Mouse: what the variants do at moments only, loaded for that moment and let go again
# (maus.call_unloaded), so none of it stays in RAM while a game is played: the game's end and winners, the
# summary for the log, the status screen of a long press; A's rounds and its verdict on two cards; B and
# C's hints; C's rounds. Each moment is an event (a card read, a timer, a gesture), never a loop pass.
from micropython import const

from maus.games.mim import LETTERS, ascii

_HAND = const(3)  # A: cards in each hand at the start (as mim_new)
_A_LAY = const(0)  # A: reading the middle cards (as mim_turns)
_A_TURN = const(1)  # A: the player on turn taps a hand card and a middle card
_A_CHOOSE = const(2)  # A: the two cards allow several pairs: the player picks one
_C_LAY = const(1)  # C: reading the round's cards (as mim_race)
_A_OVER = const(3)  # A: the game is over (as mim_turns)
_MIDDLE = const(3)  # A: middle cards (as mim_new)
_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt


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
            br[k] = {"cards_left": e.hand[p], "rounds_won": e.won[p], "pairs": e.pairs[p], "passes": e.passes[p]}
        elif v == "B":
            scores[k] = e.cards[p]
            br[k] = {"cards": e.cards[p], "claims_ok": e.ok[p], "claims_wrong": e.wrong[p], "leader": p == e.leader}
        else:
            scores[k] = e.placed[p]
            br[k] = {"chips_left": e.chips[p], "chips_placed": e.placed[p], "claims_ok": e.ok[p],
                     "claims_wrong": e.wrong[p]}
    return {"scores": scores, "winners": winners(e), "breakdown": br, "reason": e.reason}


def hint(e):
    """B and C (maus.games.mim_race): the hint timer ran out with a pair on the table: its letter."""
    if e.pairs_left() == 0:
        return
    pos = e.finder.out[0]  # the object of the first pair found (Pairs.out)
    letter = e.cat.cards[4 * e.slots[pos >> 2] + (pos & 3)]
    t = e.table
    t.log("prompt", {"what": "hint", "letter": LETTERS[letter]})
    t.led(0, "white", "blink")
    t.sound("prompt")
    e.say("hint", l=LETTERS[letter])


def round_won(e, w):
    """A (maus.games.mim_turns): w is the last player left in the round: a hand card goes aside."""
    e.hand[w] -= 1
    e.won[w] += 1
    e.table.log("score", {"player": w, "delta": 1, "why": "card aside"})
    if e.hand[w] == 0:
        e.phase = _A_OVER
        e.say("game_won", p=w)
        e.end("last card")
        return
    e.say("round_won", p=w)
    e.turn = w  # the round's winner begins the next
    new_round(e, True)


def new_round(e, wait=False):
    """A: the next round (wait: the last round's verdict stays on the display a moment first)."""
    e.phase = _A_LAY
    e.round += 1
    e.nmid = 0
    for i in range(_MIDDLE):
        e.used[i] = 0
    for p in e.ids:
        e.out[p] = 0
    e.table.log("prompt", {"what": "middle cards", "round": e.round})
    if wait:
        e.table.timer("next", _SHOW_MS)
    else:
        e._prompt()


def passes(e):
    """A: the player on turn passes (a long press): out of the round; the last one left wins it."""
    p = e.turn
    e.out[p] = 1
    e.passes[p] += 1
    e.hcard = e.mslot = -1
    e.table.log("claim", {"player": p, "pass": True})
    e.table.sound("tick")
    if sum(1 for q in e.ids if not e.out[q]) == 1:
        round_won(e, e._next(p))
        return
    e.say("passed", p=p)
    e.turn = e._next(p)
    e.table.timer("next", _SHOW_MS)


def a_try(e):
    """A: the player on turn tapped a hand card and a middle card: no pair, one, or a choice."""
    p = e.turn
    ms = e.mslot
    n = e.offer(e.hcard, 0, e.mid[ms], e.used[ms])
    if n == 0:
        e.verdict(p, False, "no free pair")
        e.table.log("note", {"text": "cards", "hand": e.ident(e.hcard), "middle": e.ident(e.mid[ms])})
        e.hcard = e.mslot = -1
        e.table.sound("wrong")
        e.say("no_pair", p=p)
    elif n == 1:
        a_take(e, 0)
    else:
        e.phase = _A_CHOOSE
        e.table.sound("prompt")
        e.show_choice()


def a_take(e, k):
    """A: pair k of the offer is played: a chip on the element it used on the middle card."""
    p = e.turn
    ms = e.mslot
    pos = e.opts[2 * k]
    if pos >> 2 != 1:  # the object is on the hand card: the chip goes on the middle card's letter
        pos = e.opts[2 * k + 1]
    el = pos & 3
    e.used[ms] |= 1 << el
    letter = e.opt_letter(k)
    m = e.mid[ms]
    on = e.cat.element(m, el)
    on = e.cat.name(on) if el < 2 else LETTERS[on]
    e.verdict(p, True, "pair", letter)
    e.table.log("chip", {"player": p, "card": e.ident(m), "on": on, "hand": e.ident(e.hcard)})
    e.pairs[p] += 1
    e.table.sound("ok")
    e.say("chip_on", pair=ascii(e.pair_text(letter)), on=ascii(on))
    e.phase = _A_TURN
    e.hcard = e.mslot = -1
    e.turn = e._next(p)
    e.table.timer("next", _SHOW_MS)


def c_new_round(e, wait):
    """C: the next round's cards are read (wait: the last verdict stays on the display a moment)."""
    e.round += 1
    e.n = 0
    e.phase = _C_LAY
    e.table.log("prompt", {"what": "round cards", "round": e.round})
    if wait:
        e.table.timer("next", _SHOW_MS)
    else:
        e.prompt()


def c_round_end(e):
    """C: no pair is left on the table: the round ends."""
    t = e.table
    t.log("note", {"text": "no pair left", "round": e.round})
    e.drop_queue()
    e.arb.close()
    t.race_close()
    for name in ("quiet", "hint", "claim", "decide"):
        t.cancel(name)
    e.say("c_round")
    c_new_round(e, True)
