# M is for Mouse, variant A (maus.games.mim.turns): its rounds and verdicts, loaded for their moments and
# let go again (maus.moment), so none of it stays in RAM while a game is played: a round begun, its
# middle cards, a pass, a round won, the verdict on two cards. Each moment is an event (a card read, a
# gesture, a timer), never a main-loop pass. B and C's moments are mim.claims', the end's mim.moments'.
from maus.games.mim.engine import LETTERS, ascii
from micropython import const

_A_LAY = const(0)  # A: phases (as mim.turns)
_A_TURN = const(1)
_A_CHOOSE = const(2)
_A_OVER = const(3)
_MIDDLE = const(3)  # A: middle cards (as mim.new)
_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt


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


def a_lay(e, c):
    """A: card c was read while the round's middle cards are laid."""
    if e._slot(c) >= 0:
        e.bad("again")
        return
    e.mid[e.nmid] = c
    e.nmid += 1
    e.table.sound("ok")
    if e.nmid < _MIDDLE:
        e._prompt()
        return
    e.table.log("note", {"text": "middle cards", "round": e.round, "cards": [e.ident(x) for x in e.mid]})
    e.phase = _A_TURN
    e.hcard = e.mslot = -1
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


def round_won(e, w):
    """A (maus.games.mim.turns): w is the last player left in the round: a hand card goes aside."""
    e.hand[w] -= 1
    e.won[w] += 1
    e.table.log("score", {"player": w, "delta": 1, "why": "card aside"})
    if e.hand[w] == 0:
        e.phase = _A_OVER
        e.say("game_won", p=w)
        e.g.end("last card")
        return
    e.say("round_won", p=w)
    e.turn = w  # the round's winner begins the next
    new_round(e, True)


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
