# M is for Mouse, variants B and C (maus.games.mim.race): what they do at moments only, loaded for that
# moment and let go again (maus.moment), so none of it stays in RAM while a game is played: a press
# while a claim is checked, B's cards (the leader's reveals) and good claims, C's round's end (a round
# begins in mim.chips: at the game's start, its tightest moment in RAM, this is not loaded).
# Each moment is an event (a card read, a press, a timer), never a main-loop pass. A's moments are
# mim.rounds', the end's mim.moments'.
from maus.games.mim.engine import ascii
from maus.ticks import ticks_diff
from micropython import const

_B_LEADER = const(0)  # B: phases (as mim.race)
_B_TABLE = const(3)
_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt


def late_press(e, p, t_us):
    """B and C (maus.games.mim.race): p pressed while a claim is being checked: logged, and queued in
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


def b_card(e, c, t_us):
    """B: card c was read outside a claim: the leader reveals it, or it is refused."""
    if e.phase == _B_LEADER:
        e.bad("leader")
    elif e.phase != _B_TABLE or e.deciding:
        pass  # a race is being decided: a stray read is only logged
    elif e.seen[c]:
        e.bad("played")
    else:
        t = e.table
        for name in ("hint", "last", "quiet", "next"):
            t.cancel(name)
        e.seen[c] = 1
        e.slots[e.n] = c
        e.used[e.n] = 0
        e.n += 1
        e.laid += 1
        t.log("reveal", {"card": e.ident(c), "by": e.leader, "n": e.laid})
        if e.laid == e.total and e.pairs_left() == 0:
            e.last()
            return
        e.open(t_us)


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
    e.new_round(True)  # (maus.games.mim.chips.Chips)
