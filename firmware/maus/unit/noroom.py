# A game's start without the memory it needs (maus.unit.play start_game), loaded for that moment only (not with
# maus.unit.ends, which every game's end loads at its tightest moment).


def no_room(u, e):
    # The unit goes on (a crash would reset it): the players are told and join again; a log already opened says
    # the game never got going.
    print("START MemoryError:", e)
    u.game = None
    if u.log is not None:
        try:
            u.log.abort("no memory")
            u.log.close()
        except (MemoryError, OSError):
            pass  # (boot recovery ends a log left open)
        u.log = None
    u._say("start_nomem")
    u.fb.sound("error")
    if u.mode != "end":  # back to joining, with the players who joined (as a catalog that does not fit)
        u.switch("join", "join")
