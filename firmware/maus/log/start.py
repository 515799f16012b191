# Opening a game's log, done once a game and let go again, so it does not stay in RAM while the game is
# played (maus.log.writer is the writer that stays): start_game makes room, opens logs/<NNNNN>-<game>.jsonl and
# writes game_start. The boot's repair of logs cut short is maus.log.repair: a game's start need not
# carry it (docs/build.md section 7).
import os

from maus.log.store import EXT
from maus.log.writer import RESERVE, VERSION, GameLog
from micropython import const

# The most a game's log may take (bytes): about three times the longest log of the game's scenarios
# (tests/scenarios; a 6-player Mausgeflippt game of ~400 records is ~45 KB). Checked before the game starts.
WORST = {"mg": 131072, "mim": 65536, "mms": 49152}
END_BLOCKS = const(2)  # filesystem blocks kept in logs/reserve for a game's last records: the copy-on-write
# of the log's last block and one more (littlefs appends into a fresh block; the directory commit fits its pair)


def start_game(store, clock, game, variant, players, board, unit, fw, settings, wall=None, ticks=0,
               reserve=None, listener=None, wrap=None, extra=None, feed=None):
    # Make room, open logs/<NNNNN>-<game>.jsonl and write game_start. Never raises OSError:
    # on a full or broken flash the returned log is degraded and the game goes on.
    # reserve: the bytes this game's log may take (default WORST[game]); log.short says the flash has less.
    # logs/reserve keeps room for the end records whatever fills the flash meanwhile (maus.log.end._reopen).
    # players: [(id, colour, young)] or [{"id":..,"colour":..,"young":..}]
    # wrap(f): the simulator's flash layer around the file (maus.sim.hw flash_file), None on a board.
    # extra: further game_start fields (maus.settings.classroom start_fields: the unit's name, its seats).
    # feed(): the watchdog's (make_room may look through thousands of logs). Only pulled logs go to make room:
    # when that is not enough, log.short, and the unit says "flash full: pull the logs" before the game.
    f = None
    err = None  # type: Exception | None
    name = None
    short = False
    if reserve is None:
        reserve = WORST.get(game, RESERVE)
    try:
        end = end_room(store, END_BLOCKS)  # bytes logs/reserve still has to take (0: it is there)
        store.make_room(reserve + end, (), feed)
        short = store.free() < reserve + end
        keep_room(store, END_BLOCKS)
    except OSError as e:
        err = e
        short = True
    except MemoryError:  # the start's crowded heap: the game goes on, its log may be cut
        short = True
    if store.unrecovered:
        from maus import moment

        with moment():
            import maus.log.repair

            maus.log.repair.recover(store)  # there may be room now
    try:
        name = "%05d-%s%s" % (store.next_number(), _slug(game), EXT)
        f = store.create(name)
        if wrap is not None:
            f = wrap(f)
    except OSError as e:
        err = e
    except MemoryError as e:
        err = e  # no log: the game goes on degraded
    log = GameLog(name, clock, f, listener)
    if short:
        log.short = True
    if f is not None:
        log.end_at = (store.path(name), store.reserve_path(), wrap)
    pl = []
    for p in players:
        if isinstance(p, dict):
            pl.append({"id": p["id"], "colour": p["colour"], "young": bool(p.get("young", False))})
        else:
            pl.append({"id": p[0], "colour": p[1], "young": bool(p[2])})
    fields = {"v": VERSION, "game": game, "variant": variant, "players": pl,
              "board": board, "unit": unit, "fw": fw, "settings": settings,
              "wall": wall, "ticks": ticks}
    if extra:
        fields.update(extra)
    log.record("game_start", fields)
    if f is None:
        log.degraded = True
        log.error = err
    return log


def unit_log(u, game, players):
    """The unit's (maus.unit.play) game log: made room for, opened, game_start written with the unit's
    settings (start_game) -> u.log. Its own step of a game's start: neither the start's code nor the game
    is being made while this module and maus.log.store are in RAM."""
    import maus
    from maus.log.store import LogStore

    hw = u.hw
    with maus.moment():
        import maus.settings.classroom

        extra = maus.settings.classroom.start_fields(u.root)
    store = LogStore(u.root)
    store.unrecovered = u.unrecovered
    wall = hw.wall_clock()
    u.log = start_game(
        store, hw.ticks_ms, game, u.variant, [pl.as_log() for pl in players],
        hw.board.get("name"), "".join("%02x" % x for x in hw.unique_id()), maus.VERSION, u.settings.values,
        wall=wall_iso(wall) if wall else None, ticks=hw.ticks_ms(), listener=u._event_line,
        wrap=getattr(hw, "flash_file", None), extra=extra,
        feed=getattr(hw, "wdt_feed", None))
    u.unrecovered = store.unrecovered


def _reserve_bytes(store, blocks):
    try:
        bs = os.statvfs(store.dir)[0]
    except OSError:
        bs = 4096
    return blocks * max(bs, 512)


def end_room(store, blocks):
    # Bytes logs/reserve still has to take to hold `blocks` filesystem blocks (0 when it does).
    want = _reserve_bytes(store, blocks)
    try:
        return max(0, want - os.stat(store.reserve_path())[6])
    except OSError:
        return want


def keep_room(store, blocks):
    # logs/reserve: `blocks` filesystem blocks held for a running game's last records, so they land whatever
    # fills the flash meanwhile (maus.log.end._reopen frees them). Made once, kept.
    n = _reserve_bytes(store, blocks)
    p = store.reserve_path()
    try:
        if os.stat(p)[6] >= n:
            return True
    except OSError:
        pass
    buf = bytearray(64)  # zeros; small: a game's start is the heap's most crowded moment
    try:
        with open(p, "wb") as f:
            while n > 0:
                k = min(n, 64)
                f.write(memoryview(buf)[:k])
                n -= k
        return True
    except OSError:
        try:
            os.remove(p)  # a part of it would only take room
        except OSError:
            pass
        return False


def _slug(game):
    s = "".join(c if ("a" <= c <= "z" or "0" <= c <= "9" or c == "_") else "_" for c in str(game).lower())
    return s[:24] or "game"


def wall_iso(tm):
    # time.localtime() tuple -> "YYYY-MM-DDTHH:MM:SS"
    return "%04d-%02d-%02dT%02d:%02d:%02d" % tuple(tm[:6])
