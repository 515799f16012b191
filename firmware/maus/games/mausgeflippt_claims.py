# Mausgeflippt: the rules of a claim, the part after a race is decided: a clothing item, "Mausgeflippt!"
# with a whole collection, protected mice, penalties, a claim passed on. Loaded for its moment (a card
# played, a claimant's press, a claim's timer: maus.call_unloaded from maus.games.mausgeflippt) and let go
# again, so none of it stays in RAM between claims. g is the game (mausgeflippt.Mausgeflippt), s its table.
from micropython import const

_CLAIM = const(3)  # phases, as in mausgeflippt.py
_COLLECT = const(4)
_HAND = const(7)
_YOUNG_HAND = const(4)
_MAX_DOWN = const(3)  # face-down penalties that block "Mausgeflippt!"


def call(g):
    """A double press of the claimant: "Mausgeflippt!". Refused with three face-down cards; the window
    stays open for a card."""
    p = g.claimant
    if g.s.down[p] >= _MAX_DOWN:
        _verdict(g, p, False, "blocked_3_face_down")
        g._bad("blocked", p=p)
        return
    g.phase = _COLLECT
    g.ncoll = 0
    g.table.log("claim", {"player": p, "call": "mausgeflippt"})
    g._say("collect", p=p, n=_hand(g, p))
    g.table.timer("claim", g.claim_ms)


def clothing(g, c):
    """A clothing card on the pad in a claim: judged at once, or one card of a collection."""
    if g.s.penalty[c]:
        g._bad("penalty_card")
        return
    if g.phase == _CLAIM:
        g.table.cancel("claim")
        _judge_item(g, c)
        g._next_claim()
        return
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


def timed_out(g):
    """The claim's window ran out: a collection is judged as it stands, a claim without a card fails."""
    if g.phase == _COLLECT:
        end_collection(g, True)
    else:
        _no_claim(g)


def end_collection(g, timed_out):
    """The collection is complete (the claimant's press, or its window ran out)."""
    if g.ncoll == 0:
        if timed_out:
            _no_claim(g)
        else:
            g._bad("no_cards")
        return
    g.table.cancel("claim")
    if timed_out:
        g.table.log("timeout", {"what": "claim", "player": g.claimant, "outcome": "collection_judged"})
    _judge_collection(g)
    g._next_claim()


def _hand(g, p):
    return _YOUNG_HAND if g.s.young[p] else _HAND


def _no_claim(g):
    # the claim window ran out with nothing played: the press alone was the try
    p = g.claimant
    g.table.log("timeout", {"what": "claim", "player": p,
                            "outcome": "cheese" if g.protected else "no_claim"})
    if g.protected:
        _verdict(g, p, False, "protected")
        _cheese(g, p, 0, False)
    else:
        _verdict(g, p, False, "timeout")
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


# --- the rules of a claim ------------------------------------------------------------------------
def _verdict(g, p, ok, reason):
    g.table.log("verdict", {"player": p, "ok": ok, "reason": reason})


def _worn(g, c):
    return g.cat.worn(g.mouse, g.cat.clothing[c - 1])  # item AND colour


def _judge_item(g, c):
    p = g.claimant
    worn = _worn(g, c)
    if g.protected:
        # a worn item on a protected mouse is discarded; a wrong one is a penalty too
        _verdict(g, p, False, "protected_item_worn" if worn else "protected_item_not_worn")
        if not worn:
            _penalise(g, p, c, False)
        _cheese(g, p, 0 if worn else 1, worn)
    elif worn:
        _verdict(g, p, True, "item_worn")
        _catch(g, p)
    else:
        _verdict(g, p, False, "item_not_worn")
        _penalise(g, p, c, False)
        _wrong(g, p, "wrong_item", 1)


def _judge_collection(g):
    p = g.claimant
    n = 0
    for i in range(g.ncoll):
        c = g.coll[i]
        if _worn(g, c):
            _penalise(g, p, c, n == 0)  # one matching card face down, the rest face up
            n += 1
    if g.protected:
        _verdict(g, p, False, "protected_collection")
        _cheese(g, p, n, False)
    elif n == 0:
        _verdict(g, p, True, "collection_clean")
        _catch(g, p)
    else:
        _verdict(g, p, False, "collection_matches")
        _wrong(g, p, "wrong_coll", n)


def _score(g, p, delta, why):
    g.table.log("score", {"player": p, "delta": delta, "why": why})


def _penalise(g, p, c, face_down):
    g.s.penalise(p, c, face_down)
    _score(g, p, -1, "clothing_down" if face_down else "clothing_up")


def _wrong(g, p, key, n):
    g.table.sound("wrong")
    g.table.led(p, "red")
    g._say(key, p=p, n=n, pts=g.s.score(p))


def _catch(g, p):
    # each valid claim catches a mouse: the open one first, then (ties) one from the stack
    g.valid += 1
    g.table.sound("ok")
    g.table.led(p, "green")
    if not g.s.catch(p, g.mouse if g.valid == 1 else 0):
        g._say("no_mouse", p=p)
        return
    _score(g, p, 1, "mouse")
    g._say("caught" if g.valid == 1 else "stack_mouse", p=p, pts=g.s.score(p))


def _cheese(g, p, cards, discard):
    # the open cheese for the first claimant; a tied one takes the next from the stack
    g.table.sound("cheese")
    g.table.led(p, "yellow", "blink")
    if not g.s.take_cheese(p, g.took_cheese > 0):
        return
    g.took_cheese += 1
    _score(g, p, -2, "cheese")
    t = g.TEXT[g.lang]
    more = t["cheese_more"].format(n=cards) if cards else ""
    g._say("cheese", p=p, more=more + (t["discard"] if discard else ""), pts=g.s.score(p))
