# The two ends of a game, each loaded for its moment and let go again (maus.unit.play): at the start the
# game's catalog, the piezo detector's set-up and the game's log; at the end its log closed and the
# results shown.
import json

import maus
from maus.unit import CALIB_FILE


def catalog(mod, short):
    """The game's catalog from maus/catalogs/<short>.json, compacted by the game module if it can."""
    here = __file__.rsplit("/", 2)[0] if __file__.count("/") > 1 else "maus"
    path = "%s/catalogs/%s.json" % (here, short)
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    loader = getattr(mod, "load_catalog", None)
    return loader(data) if loader else data


def detector(u):
    """The piezo detector (maus.piezo, which stays loaded with it), calibrated from this session or
    calib.json."""
    from maus import piezo

    d = piezo.Detector(sensitivity=u.settings.get("sensitivity"))
    c = u.calib
    if c is None:
        try:
            with open(CALIB_FILE) as f:
                c = json.load(f)
            c = (int(c["base"]), int(c["floor"]))
        except (OSError, ValueError, KeyError, TypeError):
            c = None  # not calibrated yet: the detector's defaults
    if c is not None:
        d.calibrated(c[0], c[1])
    d.disarm()
    cap = u.capture
    u._stop_watch = lambda: cap.pending or cap.busy()  # made once: watch() polls it often
    u.detector = d


def open_log(u, short, players, settings):
    """Make room, open the game's log and write game_start (maus.logstart.start_game): -> the GameLog."""
    from maus.logstart import start_game, wall_iso
    from maus.logstore import LogStore

    hw = u.hw
    store = LogStore(u.root)
    store.unrecovered = u.unrecovered
    wall = hw.wall_clock()
    log = start_game(
        store, hw.ticks_ms, short, u.variant, [pl.as_log() for pl in players],
        hw.board.get("name"), "".join("%02x" % x for x in hw.unique_id()), maus.VERSION, settings,
        wall=wall_iso(wall) if wall else None, ticks=hw.ticks_ms(), listener=u._event_line,
        wrap=getattr(hw, "flash_file", None))
    u.unrecovered = store.unrecovered
    return log


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
