# The end of a game, loaded for its moment and let go again (maus.unit.play, maus.unit.core): the results
# shown (its log is closed by maus.unit.play first), or the game aborted; and the one warning of a log
# gone degraded. The start is maus.unit.start's.


def end(u, s):
    # s: the game's summary; its log is closed already (maus.unit.play.end_game)
    u.mode = "end"
    u.race = False
    u.window.close()
    u.gest.reset()  # the press that ended the game must not start the next one
    scores = s.get("scores", {})
    lines = []
    said = _scores_are(u)
    if said:
        lines.append(said)  # what the numbers count, where the game says (Mucks Mäuschen Still: sticks left)
    for pid in sorted(scores, key=lambda k: int(k)):
        mark = "*" if int(pid) in s.get("winners", []) else " "
        lines.append("%sP%s: %s" % (mark, pid, scores[pid]))
    u._say("end", scores="\n".join(lines))
    u.fb.led(0, "off")
    for w in s.get("winners", []):
        u.fb.led(w, "white", "blink")
    u.fb.sound("win")
    u.last_summary = s


def _scores_are(u):
    # the game's own `end_scores` text, in the unit's language (None: plain points)
    table = getattr(u.game, "TEXT", None)
    mine = table.get(u.lang) if table is not None else None
    return mine.get("end_scores") if mine is not None else None


def abort(u, reason):
    # The game stops (aborted by the players, Ctrl-C, the host): its log says why; maus.unit.core then
    # shows the menu.
    if u.log is not None:
        u.log.abort(reason)
        u.log.close()
        u.log = None
    u.race = False
    u.window.close()
    u.game = None
    u.timers = {}
    u._say("aborted")
    u.fb.sound("error")
    u.mode = "menu"


def degraded(u):
    # A full or failing flash never stops a game: say so once and keep refereeing.
    u.log.warned = True
    u._say("log_degraded")
    u.fb.sound("error")
    print("LOG degraded:", u.log.error)
