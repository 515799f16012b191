# Mausgeflippt: the game's end, loaded for that moment and let go again (maus.moment from
# maus.games.mausgeflippt.rules), so none of it stays in RAM while a game is played: the end, the winners, the
# summary for the log (from the table's state, maus.games.mausgeflippt.cards.TableState: `s`). The end is a
# game's tightest moment in RAM: the moments during play (the status screen, a late tie) are
# mausgeflippt.aside's.
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


def winners(s):
    # most points; a tie goes to fewest penalty points; still tied: a shared win
    best = None
    for p in s.ids:
        key = (s.score(p), -s.penalty_points(p))
        if best is None or key > best:
            best = key
    out = []
    for p in s.ids:  # (a loop: a comprehension would be a function of its own in RAM at the game's end)
        if (s.score(p), -s.penalty_points(p)) == best:
            out.append(p)
    return out


def summary(s, reason):
    scores = {}
    breakdown = {}
    for p in s.ids:
        scores[str(p)] = s.score(p)
        breakdown[str(p)] = {"mice": s.mice[p], "clothing_up": s.up[p], "clothing_down": s.down[p],
                             "cheeses": s.cheeses[p], "penalty_points": s.penalty_points(p),
                             "young": s.young[p]}
    return {"scores": scores, "winners": winners(s), "breakdown": breakdown, "reason": reason}
