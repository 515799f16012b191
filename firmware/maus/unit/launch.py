# A game's start, for maus.unit.play (entering it, and its end screen's click: same players again), loaded for it and
# let go again (not in a maus.moment: what the start loads, the catalog's module and the game's, stays with the
# phase): its code need not stay in RAM while the game plays.
import gc

from maus import moment, unload
from maus.unit.shared import GAMES


def start_game(u, TableView):
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
    try:
        import maus.unit.begin  # not `from maus.unit import begin`: that would ask maus.unit.__getattr__

        return getattr(maus.unit.begin, fn)(*args)
    finally:
        unload("maus.unit.begin")
