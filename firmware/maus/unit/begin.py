# A game's start, for maus.unit.play, in two calls with the log's opening (maus.log.start.unit_log) between
# them; this module is loaded for each and let go again (what they load stays with the game): prepare:
# the catalog, then the players (maus.unit.start); play: the game's modules, the piezo detector, the game
# made and started, with neither maus.unit.start nor the log's opening in RAM.
from maus import moment
from maus.unit.shared import GAMES


def load_game(key):
    """(module, Game class) of the game under a menu key (GAMES)."""
    from maus.games.base import Game

    mod = __import__(GAMES[key][1], None, None, ("x",))
    for name in dir(mod):
        obj = getattr(mod, name)
        if isinstance(obj, type) and obj is not Game and issubclass(obj, Game) and obj.GAME:
            return mod, obj
    raise ImportError("no Game class in " + mod.__name__)


def prepare(u):
    """-> (its catalog, the players in seat order), or None: a catalog that does not fit the game sent the
    players back to joining. The game's own modules are not loaded yet (unless its catalog's module is the
    game's): the log is opened next, with as little else in RAM as can be (maus.unit.play)."""
    # The catalog first: a .json of it is the start's largest transient (maus.unit.start.catalog). The
    # module with its loader stays (the game's Catalog is its class).
    g = GAMES[u.choice]
    __import__(g[7])
    # The game's base module before the moments below: the players they make (maus.unit.start) are of its Player
    # class, and from a copy the moment let go they would keep a second one in RAM beside the rules' own.
    __import__("maus.games.base")
    with moment():
        import maus.unit.start

        ok, cat = maus.unit.start.game_catalog(u, g[7], g[8])
    if not ok:
        return None
    with moment():
        import maus.unit.start

        return cat, maus.unit.start.start(u)


def play(u, TableView, cat, players):
    """The game's modules loaded, the piezo detector made (the games that need it), the game made and
    started; its log is open (u.log)."""
    cls = load_game(u.choice)[1]
    if GAMES[u.choice][6] and (u.hw.adc or u.hw.piezo_pin) is not None and u.detector is None:
        from maus.piezo import detect as piezo  # noqa: F401 - stays loaded with the detector, until the phase goes

        with moment():
            import maus.unit.start

            maus.unit.start.detector(u)
    log = u.log
    if log.short:  # said before the game's first prompt: the game goes on, its log may be cut
        u._say("log_short")
        u.fb.sound("error")
        print("LOG short: flash full, this game's log may be cut; pull the logs")
    u.timers = {}
    u.game = cls(TableView(u), players, u.settings.values, cat, u.variant, u.seed)
    u.mode = "play"
    u.pending_abort = False
    u.gest.reset()
    fb = u.fb
    fb.led(0, "off")
    for pl in players:
        fb.led(pl.id, pl.colour)
    fb.sound("start")
    u.game.start()
