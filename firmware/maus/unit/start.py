# The start of a game, loaded for its moments and let go again (maus.unit.begin): the game's catalog, the
# players, and (after the log's opening, maus.log.start.unit_log) the piezo detector's set-up; the game is
# made by maus.unit.begin after this module has gone; its end is maus.unit.ends'. Nothing made
# here may hold a function of this module (a lambda, a closure): it would keep the module in RAM after
# it was let go.
import json

from maus.unit.shared import CALIB_FILE, GAMES


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


def start(u):
    """The players who joined, for a game of the chosen game, up to its log's opening: -> the players in
    seat order. The log is opened, the game's modules loaded and the game made once this module has gone
    (maus.unit.play, maus.unit.begin.play)."""
    key = u.choice
    from maus.games.base import Player

    # Made again from the game's maus.games.base: the join phase's copy of that module went when it did, and
    # players of its Player class would keep a second copy in RAM for the whole game.
    u.joined = [Player(pl.id, pl.young) for pl in u.joined]
    players = sorted(u.joined, key=_pid)
    for pl in players:
        pl.young = pl.young and GAMES[key][5]
    u.seed += 1
    return players


def _pid(pl):
    return pl.id


def catalog(mod, short):
    """The game's catalog from maus/catalogs/<short>.json, compacted by the game module if it can; from
    <short>.cat, its compiled form, while that was compiled from this very .json (docs/catalogs.md)."""
    from maus import data_dir

    path = "%s/catalogs/%s.json" % (data_dir(), short)
    cat = compiled(mod, path)
    if cat is not None:
        return cat
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    loader = getattr(mod, "load_catalog", None)
    return loader(data) if loader else data


def detector(u):
    """The piezo detector (maus.piezo.detect, which stays loaded with it), calibrated from this session or
    calib.json."""
    from maus.piezo import detect as piezo

    if u.hw.adc is None:  # a comparator module (digital mode): its pin's level is the reading
        from maus.piezo.cal import DigitalDetector

        dd = DigitalDetector(sensitivity=u.settings.get("sensitivity"))
        dd.disarm()
        u._stop_watch = u.watch_stop
        u._piezo_read = u.hw.piezo_pin.value
        u.detector = dd
        return
    d = piezo.Detector(sensitivity=u.settings.get("sensitivity"))
    u._piezo_read = u.hw.adc.read_u16
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


def _sha(path):
    import binascii
    import hashlib

    h = hashlib.sha256()
    buf = bytearray(128)
    with open(path, "rb") as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(memoryview(buf)[:n])
    return binascii.hexlify(h.digest()).decode()


def compiled(mod, path):
    """The compact Catalog from the .cat beside the catalog file `path`, or None: no .cat, one compiled from
    another .json (edited since), or a damaged one; then the .json is read and checked whole. Parsing the
    .json of Mausgeflippt's catalog takes ~19 KB of heap for a moment, its .cat ~1 KB (docs/catalogs.md)."""
    cls = getattr(mod, "Catalog", None)
    if cls is None:
        return None
    try:
        with open(path[:-5] + ".cat") as f:
            head = f.readline().split()
            body = f.readline()
        if len(head) != 3 or head[0] != "mausbox-catalog-1" or head[1] != _sha(path):
            return None
        import binascii
        import hashlib

        if binascii.hexlify(hashlib.sha256(body.rstrip("\n").encode()).digest()).decode() != head[2]:
            return None  # the .cat itself is damaged
        args = [bytes.fromhex(v) if k == "b" else v for k, v in json.loads(body)]
        return cls(*args)
    except (OSError, ValueError, TypeError):
        return None
