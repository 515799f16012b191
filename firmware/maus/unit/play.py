# The play phase: one game from its start to its end screen (P1 click: again, hold: the menu).
#
# Entering it loads the game and the log writer; the game's start (its catalog, the detector, the log's
# opening) is maus.unit.begin's, .start's and maus.log.start's, its end maus.unit.ends', each loaded for
# that and let go again. Leaving the phase (maus.unit.core) lets the rest go,
# so only the game being played is in RAM. The piezo detector is made here for the games that need it
# (GAMES: mms) and dropped with the game.
import gc

from maus import moment  # noqa: F401 - the writer of the game's log stays while it plays
from maus.unit.shared import GAMES


def enter(u, arg=None):
    if arg is not None:  # the end screen, entered again once the game has gone (end_game); arg: its log
        if arg != "end":
            arg.ended()  # logs/index says the log is finished: written now that the game's code has gone
        return
    start_game(u)


def start_game(u):
    # A game's start in three steps, each with only its own code in RAM (maus.unit.begin, loaded for each
    # of its two and let go again; what they load, the catalog's module and the game's, stays with it):
    # the catalog and the players; the log's opening (before the game's own modules are loaded: with
    # maus.log.start and maus.log.store it is the start's most crowded moment); the game's modules loaded,
    # the detector made, the game made and started.
    # Each step's garbage is collected before the next step allocates: left to the allocator, what a step keeps
    # (the catalog, the log, the game) goes above the garbage of the steps before, high in the heap, and cuts up
    # the free space that a long-lived unit (bench/bench_season.py) has least of.
    host = u.host
    if host is not None:
        host.lull()  # the host service's memory is the game's from here (HostWake's desk answers in a game)
    collect = getattr(u.hw, "collect", gc.collect)  # (the simulator charges the board's pause for it)
    collect()
    seed = u.seed
    try:
        try:
            r = _begin("prepare", u)
        except MemoryError:
            # Nothing is written yet (a long-lived unit's fragmented heap: bench/bench_season.py lost a start to it
            # once in 300 games): what the step made is garbage now, so once more after a collect.
            u.seed = seed
            collect()
            r = _begin("prepare", u)
        if r is not None:
            collect()
            with moment():
                import maus.log.start

                maus.log.start.unit_log(u, GAMES[u.choice][8], r[1])
            collect()
            _begin("play", u, TableView, *r)
    except MemoryError as e:
        with moment():
            import maus.unit.noroom

            maus.unit.noroom.no_room(u, e)


def _begin(fn, *args):
    import maus

    try:
        import maus.unit.begin  # not `from maus.unit import begin`: that would ask maus.unit.__getattr__

        return getattr(maus.unit.begin, fn)(*args)
    finally:
        maus.unload("maus.unit.begin")


class TableView:
    # The Table a game sees: the unit's methods under the contract's names (maus.games.base.Table).
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
    # The log's last records are written first, with only their own code loaded (maus.log.end): the
    # game's end is a moment of its own in RAM; then its screen (maus.unit.ends).
    s = u.game.summary()
    log = u.log
    getattr(u.hw, "collect", gc.collect)()  # the game's last garbage, before the log's end loads its code
    if log is not None:
        log.end(s.get("scores", {}), s.get("winners", []), s.get("breakdown", {}), s.get("reason", ""), False)
        log.close()
        u.log = None
    with moment():
        import maus.unit.ends

        maus.unit.ends.end(u, s)
    # The game, its modules and the detector go once the running handler returns (the phase entered again for its
    # end screen, which then has logs/index say the log is finished): the next game's card, a host's pull and the next
    # start then meet a heap without them.
    u.switch("play", log or "end")


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
