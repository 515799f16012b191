# Mausgeflippt: what the table's state (maus.games.mausgeflippt_state.TableState, here `s`) tells at
# moments only: the winners at the end, the summary for the log, the status screen of a long press. Loaded
# for that moment and let go again (maus.call_unloaded from maus.games.mausgeflippt), so none of it stays
# in RAM while a game is played.


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
