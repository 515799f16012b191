# Mausgeflippt: what the game does at moments only, loaded for that moment and let go again
# (maus.moment from maus.games.mausgeflippt.rules), so none of it stays in RAM while a game is played: the
# end, the winners, the summary for the log, the status screen of a long press (from the table's state,
# maus.games.mausgeflippt.cards.TableState: `s`), a late press that ties with the winner.
from micropython import const

_OVER = const(6)  # the game's phases (as mausgeflippt.py)


def finish(g, reason):
    """The game ends (reason: "last_mouse" or "last_cheese"): the winners' LEDs blink, the results follow."""
    g.phase = _OVER
    g.reason = reason
    for name in ("show", "prompt", "claim", "decide", "unclaimed"):
        g.table.cancel(name)
    g.done = True
    g._say("end_mouse" if reason == "last_mouse" else "end_cheese")
    g.table.sound("win")
    g.table.led(0, None)
    for p in winners(g.s):
        g.table.led(p, g.colour[p], "blink")
    g.table.finish()


def late_tie(g, p):
    """A press confirmed after the decision whose first edge ties with the winner (a long-bouncing
    contact): a tied claim, in press order among the claims still waiting."""
    arb = g.arb
    off = arb.offset(p)
    q = g.queue
    i = len(q)
    while i > g.qi and arb.offset(q[i - 1]) > off:
        i -= 1
    q.insert(i, p)
    g.table.log("claim", {"player": p, "offset_us": off, "tied": True})

def winners(s):
    # most points; a tie goes to fewest penalty points; still tied: a shared win
    best = None
    for p in s.ids:
        key = (s.score(p), -s.penalty_points(p))
        if best is None or key > best:
            best = key
    return [p for p in s.ids if (s.score(p), -s.penalty_points(p)) == best]


def summary(s, reason):
    scores = {}
    breakdown = {}
    for p in s.ids:
        scores[str(p)] = s.score(p)
        breakdown[str(p)] = {"mice": s.mice[p], "clothing_up": s.up[p], "clothing_down": s.down[p],
                             "cheeses": s.cheeses[p], "penalty_points": s.penalty_points(p),
                             "young": s.young[p]}
    return {"scores": scores, "winners": winners(s), "breakdown": breakdown, "reason": reason}


def status(s, t):
    """The between-rounds screen from the TEXT table t: counts nobody can see at a glance."""
    lines = [t["st_head"].format(m=s.mice_left, c=s.cheeses_left())]
    ids = s.ids
    if len(ids) <= 5:
        for p in ids:
            lines.append(t["st_player"].format(p=p, pts=s.score(p), d=s.down[p]))
    else:  # two players a line: 6 lines in all
        for i in range(0, len(ids), 2):
            lines.append(" ".join(t["st_pair"].format(p=p, pts=s.score(p), d=s.down[p])
                                  for p in ids[i:i + 2]))
    return lines
