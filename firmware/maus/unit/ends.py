# The end of a game, loaded for its moment and let go again (maus.unit.play): its log closed and the
# results shown. The start is maus.unit.start's.


def end(u):
    g = u.game
    s = g.summary()
    if u.log is not None:
        u.log.end(s.get("scores", {}), s.get("winners", []), s.get("breakdown", {}), s.get("reason", ""))
        u.log.close()
        u.log = None
    u.mode = "end"
    u.race = False
    u.window.close()
    u.gest.reset()  # the press that ended the game must not start the next one
    scores = s.get("scores", {})
    lines = []
    for pid in sorted(scores, key=lambda k: int(k)):
        mark = "*" if int(pid) in s.get("winners", []) else " "
        lines.append("%sP%s: %s" % (mark, pid, scores[pid]))
    u._say("end", scores="\n".join(lines))
    u.fb.led(0, "off")
    for w in s.get("winners", []):
        u.fb.led(w, "white", "blink")
    u.fb.sound("win")
    u.last_summary = s
