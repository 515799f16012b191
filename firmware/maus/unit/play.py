# The play phase: one game from its start to its end screen (P1 click: again, hold: the menu).
#
# Entering it loads the game, its catalog and the log writer; leaving it (maus.unit.core) lets them
# all go, so only the game being played is in RAM. The piezo detector is made here for the games
# that need it (GAMES: mms) and dropped with the game.
import json

import maus
from maus import gamelog
from maus.unit import CALIB_FILE, GAMES, load_catalog, load_game
from maus.unit.core import TableView


def enter(u, arg=None):
    start_game(u)


def start_game(u):
    key = u.choice
    mod, cls = load_game(key)
    short = cls.GAME
    try:
        catalog = load_catalog(mod, short)
    except (ValueError, KeyError, TypeError) as e:  # a user's catalog that does not fit the game
        u._say("bad_catalog", why=str(e)[:60])
        u.fb.sound("error")
        print("CATALOG", short, e)
        if u.mode != "end":  # back to joining, with the players who joined (as before the double press)
            u.switch("menu", "join")
        return
    if GAMES[key][6] and u.hw.adc is not None and u.detector is None:
        _start_detector(u)
    players = sorted(u.joined, key=lambda pl: pl.id)
    for pl in players:
        pl.young = pl.young and GAMES[key][5]
    u.seed += 1
    settings = dict(u.settings.values)
    hw = u.hw
    wall = hw.wall_clock()
    u.log = gamelog.start_game(
        u.store, hw.ticks_ms, short, u.variant, [pl.as_log() for pl in players],
        hw.board.get("name"), _hex(hw.unique_id()), maus.VERSION, settings,
        wall=gamelog.wall_iso(wall) if wall else None, ticks=hw.ticks_ms(), listener=u._event_line,
        wrap=getattr(hw, "flash_file", None))
    if u.log.dropped:
        u._say("log_room", n=len(u.log.dropped))
    u.timers = {}
    u._warned_full = False
    u.game = cls(TableView(u), players, settings, catalog, u.variant, u.seed)
    u.players = players
    u.mode = "play"
    u.pending_abort = False
    u.gest.reset()
    u.fb.led(0, "off")
    for pl in players:
        u.fb.led(pl.id, pl.colour)
    u.fb.sound("start")
    u.game.start()


def _start_detector(u):
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


def end_game(u):
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


def gesture(u, p, kind):
    # the end screen (during play the core hands gestures to the game)
    if u.mode != "end" or p != 1:
        return
    if kind == "click":
        u.game = None  # the last game's state goes before the next one is made
        start_game(u)  # same players again
    elif kind == "long":
        u.game = None
        u.switch("menu")


def game_card(u, key):
    if u.mode == "play":
        if u.pending_abort:
            u.abort("aborted by players")
        else:
            u.pending_abort = True
            u.timer("abort", 5000)
            u._say("abort_confirm")
            u.fb.sound("prompt")
        return
    u.switch("menu", key)


def _hex(b):
    return "".join("%02x" % x for x in b)
