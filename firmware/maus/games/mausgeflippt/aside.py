# Mausgeflippt: what the game does aside during play, loaded for that moment and let go again (maus.moment
# from maus.games.mausgeflippt.rules): the status screen of a long press (from the table's state,
# maus.games.mausgeflippt.cards.TableState: `s`), a late press that ties with the winner. Apart from the end's
# (mausgeflippt.moments): the end is a game's tightest moment in RAM, and loads none of this.


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
