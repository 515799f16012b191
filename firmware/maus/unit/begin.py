# A game's start, for maus.unit.play (loaded for it and let go again; what it loads stays with the game):
# the catalog first, then the game's modules, the players (maus.unit.start), the game made and started.
from maus import call_unloaded
from maus.unit import GAMES


def load_game(key):
    """(module, Game class) of the game under a menu key (GAMES)."""
    from maus.game import Game

    mod = __import__(GAMES[key][1], None, None, ("x",))
    for name in dir(mod):
        obj = getattr(mod, name)
        if isinstance(obj, type) and obj is not Game and issubclass(obj, Game) and obj.GAME:
            return mod, obj
    raise ImportError("no Game class in " + mod.__name__)


def start_game(u, TableView):
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
