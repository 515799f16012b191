# Mucks Mäuschen Still: what the game (maus.games.mms.rules.Mms) tells at moments only: the summary for the log,
# the status screen of a long press. Loaded for that moment and let go again (maus.moment from
# maus.games.mms.rules), so none of it stays in RAM while a game is played.


def summary(g):
    scores = {}
    breakdown = {}
    for p in g.ids:
        k = str(p)
        scores[k] = g.sticks[p]
        breakdown[k] = {"sticks": g.sticks[p], "placed": g.placed[p], "alarms": g.alarms[p],
                        "passes": g.passes[p]}
    return {"scores": scores, "winners": list(g.winners), "breakdown": breakdown, "reason": g.reason}


def status(g, t):
    """The status screen from the TEXT table t."""
    lines = [t["st_castle"].format(c=g.castle, o=g.out)]
    for p in g.ids:
        lines.append(t["st_player"].format(p=p, n=g.sticks[p]))
    return lines
