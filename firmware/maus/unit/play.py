# The play phase: one game from its start to its end screen (P1 click: again, hold: the menu).
#
# Entering it loads the game and the log writer; the game's start (its catalog, the detector, the log's
# opening) is maus.unit.start's, its end maus.unit.ends', each loaded for that and let go again. Leaving the phase (maus.unit.core) lets the rest go,
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
    # The catalog first, before the game's own modules: its JSON is the start's largest transient. The
    # module with its loader stays (the game's Catalog is its class).
    g = GAMES[u.choice]
    __import__(g[7])
    ok, cat = call_unloaded("maus.unit.start", "game_catalog", u, g[7], g[8])
    if not ok:
        return
    mod, cls = load_game(u.choice)
    if g[6] and u.hw.adc is not None and u.detector is None:
        from maus import piezo  # noqa: F401 - stays loaded with the detector, until the phase goes
    players = call_unloaded("maus.unit.start", "start", u, cls)
    # made here, with maus.unit.start gone again: the game's first records are written as it starts
    u.game = cls(TableView(u), players, u.settings.values, cat, u.variant, u.seed)
    u.players = players
    u.mode = "play"
    u.pending_abort = False
    u.gest.reset()
    fb = u.fb
    fb.led(0, "off")
    for pl in players:
        fb.led(pl.id, pl.colour)
    fb.sound("start")
    u.game.start()


class TableView:
    # The Table a game sees: the unit's methods under the contract's names (maus.game.Table).
    def __init__(self, unit):
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
    # The log's last records are written first, with only their own code loaded (maus.logend): the
    # game's end is a moment of its own in RAM; then its screen (maus.unit.ends).
    s = u.game.summary()
    log = u.log
    if log is not None:
        log.end(s.get("scores", {}), s.get("winners", []), s.get("breakdown", {}), s.get("reason", ""))
        log.close()
        u.log = None
    call_unloaded("maus.unit.ends", "end", u, s)


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
