# The start of a game, loaded for its moment and let go again (maus.unit.play): the game's catalog, the
# piezo detector's set-up and the game's log (the game itself is made by maus.unit.play after this module
# has gone; its end is maus.unit.ends'). Nothing made
# here may hold a function of this module (a lambda, a closure): it would keep the module in RAM after
# it was let go.
import json

import maus
from maus.unit import CALIB_FILE, GAMES


def game_catalog(u, modname, short):
    """-> (True, the game's catalog) or (False, None): a catalog that does not fit the game sends the
    players back to joining."""
    import sys

    try:
        return True, catalog(sys.modules[modname], short)
    except (ValueError, KeyError, TypeError) as e:  # a user's catalog that does not fit the game
        u._say("bad_catalog", why=str(e)[:60])
        u.fb.sound("error")
        print("CATALOG", short, e)
        if u.mode != "end":  # back to joining, with the players who joined (as before the double press)
            u.switch("join", "join")
        return False, None


def start(u, cls):
    """The start of a game of the chosen game (cls: maus.unit.begin.load_game) with the players who joined,
    up to its log's opening: -> the players in seat order. The game itself is made by maus.unit.play, once
    this module has gone (a game's first records are the start's largest moment)."""
    key = u.choice
    short = cls.GAME
    if GAMES[key][6] and u.hw.adc is not None and u.detector is None:
        detector(u)
    from maus.game import Player

    # Made again from the game's maus.game: the join phase's copy of that module went when it did, and
    # players of its Player class would keep a second copy in RAM for the whole game.
    u.joined = [Player(pl.id, pl.young) for pl in u.joined]
    players = sorted(u.joined, key=_pid)
    for pl in players:
        pl.young = pl.young and GAMES[key][5]
    u.seed += 1
    settings = u.settings.values  # the game's own: a change replaces the unit's dict, never alters this one
    mark = maus.loaded()
    u.log = open_log(u, short, players, settings)
    maus.unload_since(mark)  # the log's opening (maus.logstart, .logstore) goes before the game is made
    if u.log.dropped:
        u._say("log_room", n=len(u.log.dropped))
    if u.log.short:  # said before the game's first prompt: the game goes on, its log may be cut
        u._say("log_short")
        u.fb.sound("error")
        print("LOG short: the flash may not hold this game's whole log; pull the logs")
    u.timers = {}
    u._warned_full = False
    return players


def _pid(pl):
    return pl.id


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
    u._stop_watch = u.watch_stop  # bound once: watch() polls it often
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
