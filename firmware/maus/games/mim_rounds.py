# M is for Mouse: the variants' rounds, loaded for their moments and let go again (maus.call_unloaded), so
# none of it stays in RAM while a game is played: A's rounds (begun, its middle cards, a pass, won) and its
# verdict on two cards, B and C's presses during a claim, B's good claims, C's rounds (begun, ended). Each moment is an event (a card read, a timer, a gesture), never a
# main-loop pass. The game's end is mim_moments'.
from micropython import const

from maus.games.mim import LETTERS, ascii
from maus.ticks import ticks_diff

_A_LAY = const(0)  # A: phases (as mim_turns)
_A_TURN = const(1)
_A_CHOOSE = const(2)
_A_OVER = const(3)
_MIDDLE = const(3)  # A: middle cards (as mim_new)
_B_TABLE = const(3)  # B: cards face up (as mim_race)
_C_LAY = const(1)  # C: reading the round's cards (as mim_race)
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


def late_press(e, p, t_us):
    """B and C (maus.games.mim_race): p pressed while a claim is being checked: logged, and queued in
    press order unless p claims now, is locked out or waits already."""
    t = e.table
    off = ticks_diff(t_us, e.reveal_t)
    f = {"player": p, "offset_us": off, "false_start": False, "late": True}  # after the decision
    if e.laid < e.lock[p]:
        f["locked"] = True
    t.log("press", f)
    if p == e.claimer or e.laid < e.lock[p]:
        return
    q = e.queue
    for _o, x in q:
        if x == p:
            return
    i = len(q)
    while i > 0 and q[i - 1][0] > off:
        i -= 1
    q.insert(i, (off, p))
    t.log("claim", {"player": p, "offset_us": off, "queued": True})


def b_won(e, p, letter):
    """B: p's claim is good (letter: its pair's letter index): every face-up card but the newest."""
    t = e.table
    got = e.n - 1
    e.cards[p] += got
    t.log("score", {"player": p, "delta": got, "why": "cards"})
    e.say("b_ok", pair=ascii(e.pair_text(letter)), p=p, n=got)
    e.slots[0] = e.slots[e.n - 1]  # the newest card stays
    e.used[0] = 0
    e.n = 1
    e.drop_queue()
    e.arb.close()
    e.claimer = 0
    e.phase = _B_TABLE
    e._leds()
    if e.laid == e.total:
        e.last()
    else:
        t.timer("next", _SHOW_MS)


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
