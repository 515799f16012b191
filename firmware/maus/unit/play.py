# The play phase: one game from its start to its end screen (P1 click: again, hold: the menu).
#
# Entering it loads the game and the log writer; the catalog and the log's opening are done by
# maus.unit.ends, loaded for that and let go again. Leaving the phase (maus.unit.core) lets the rest go,
# so only the game being played is in RAM. The piezo detector is made here for the games that need it
# (GAMES: mms) and dropped with the game.
from maus import call_unloaded, gamelog  # noqa: F401 - the writer of the game's log stays while it plays
from maus.unit import GAMES


def enter(u, arg=None):
    start_game(u)


def load_game(key):
    """(module, Game class) of the game under a menu key (GAMES)."""
    from maus.game import Game

    mod = __import__(GAMES[key][1], None, None, ("x",))
    for name in dir(mod):
        obj = getattr(mod, name)
        if isinstance(obj, type) and obj is not Game and issubclass(obj, Game) and obj.GAME:
            return mod, obj
    raise ImportError("no Game class in " + mod.__name__)


def start_game(u):
    key = u.choice
    mod, cls = load_game(key)
    short = cls.GAME
    try:
        catalog = call_unloaded("maus.unit.ends", "catalog", mod, short)
    except (ValueError, KeyError, TypeError) as e:  # a user's catalog that does not fit the game
        u._say("bad_catalog", why=str(e)[:60])
        u.fb.sound("error")
        print("CATALOG", short, e)
        if u.mode != "end":  # back to joining, with the players who joined (as before the double press)
            u.switch("menu", "join")
        return
    if GAMES[key][6] and u.hw.adc is not None and u.detector is None:
        from maus import piezo  # noqa: F401 - stays loaded with the detector, until the phase goes

        call_unloaded("maus.unit.ends", "detector", u)
    players = sorted(u.joined, key=lambda pl: pl.id)
    for pl in players:
        pl.young = pl.young and GAMES[key][5]
    u.seed += 1
    settings = u.settings.values  # the game's own: a change replaces the unit's dict, never alters this one
    u.log = call_unloaded("maus.unit.ends", "open_log", u, short, players, settings)
    if u.log.dropped:
        u._say("log_room", n=len(u.log.dropped))
    if u.log.short:  # said before the game's first prompt: the game goes on, its log may be cut
        u._say("log_short")
        u.fb.sound("error")
        print("LOG short: the flash may not hold this game's whole log; pull the logs")
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


class TableView:
    # The Table a game sees: the unit's methods under the contract's names (maus.game.Table).
    def __init__(self, unit):
        self.u = unit
        self.now_ms = unit.hw.ticks_ms
        self.log = unit.log_record
        self.say = unit.say
        self.led = unit.fb.led
        self.sound = unit.fb.sound
        self.timer = unit.timer
        self.cancel = unit.cancel
        self.race_open = unit.race_open
        self.race_close = unit.race_close
        self.detector = unit.detector_arm
        self.finish = unit.finish


def end_game(u):
    call_unloaded("maus.unit.ends", "end", u)


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
