# A game's names (qstrs) interned in one run when it is first chosen after a boot, while the heap is at its
# emptiest for a game (maus.unit.core Unit._switch, before its join phase loads), loaded for it and let go again.
#
# A name is never freed once interned (docs/build.md section 7), and MicroPython puts names into chunks of 128
# bytes wherever the heap has room when it first sees them: a module's names when it first loads. Left to that,
# the names of a game's modules, its rare moments, the log's opening and end and the host service came at
# crowded moments of the unit's first games (a rare moment's module loads at a game's peak), into the free space
# at the top of the heap, and stayed there for good: after a season of every game a unit at a game's join had
# 38 KB free in pieces of 2 KB at most (a fresh one: 47 KB, 4.7 KB), and game starts ran out of memory for a
# 256-byte block (bench/bench_season.py). Interned here they sit together in the heap's lowest free space, and
# they are the names the game and a host's pulls would intern anyway.
#
# The names are read from the .mpy files' qstr tables (mpy version 6: a vuint count, then each qstr as a vuint of
# its length << 1, odd for a name the interpreter already has, then its bytes and a NUL).
import gc
import os
import sys

# What every game loads besides its own modules (maus/games/<its game>/): its start and end, the log's opening,
# writer, end and index, the desk, and a host's pull (maus.host.service, maus.settings.classroom for `copied`); a card's
# arrival (tag type, NDEF text, the identity parser). And for a game that needs it, the piezo detector.
COMMON = ("unit/begin", "unit/start", "unit/ends", "unit/desk", "log/start", "log/end", "log/store", "log/index",
          "log/writer", "games/base", "host/frame", "settings/classroom", "host/service", "cards/ident",
          "drivers/tagtype", "drivers/ndef")
_DIR = 0x4000


def chosen(u, key):
    """The game under `key` (maus.unit.shared.GAMES; "join": the one chosen before) is chosen: its names interned now,
    where the heap is at its emptiest for it (maus.unit.core Unit._switch, before the join phase loads)."""
    from maus.unit.shared import GAMES

    if key not in GAMES:
        key = u.choice
    if key in GAMES and key not in u.named:
        g = GAMES[key]
        intern(g[1], g[6], getattr(u.hw, "wdt_feed", None))
        u.named += (key,)


def intern(module, piezo=False, feed=None):
    """Intern the names of the game whose module is `module` ("maus.games.mim.rules": every .mpy in maus/games/mim/), of COMMON
    and with `piezo` of maus.piezo.detect (MicroPython, from .mpy files only); -> how many names were read."""
    import maus

    here = getattr(maus, "__file__", "") or ""
    if sys.implementation.name != "micropython" or not here.endswith(".mpy"):
        return 0  # CPython, or a firmware from .py files or frozen into the image: nothing to do here
    base = here.rsplit("/", 1)[0] if "/" in here else "."
    game = module.replace(".", "/")[5:].rsplit("/", 1)[0]  # "maus.games.mim.rules": every file in games/mim
    det = "piezo/detect" if piezo else None
    dirs = [game]
    for s in COMMON + (det,) if det else COMMON:
        d = s.rsplit("/", 1)[0] if "/" in s else ""
        if d not in dirs:
            dirs.append(d)
    r = _Reader()
    n = 0
    for d in dirs:
        rel = d + "/" if d else ""
        for e in os.ilistdir(base + "/" + d if d else base):
            name = e[0]
            if e[1] == _DIR or not name.endswith(".mpy"):
                continue
            stem = rel + name[:-4]
            if d == game or stem in COMMON or stem == det:
                try:
                    n += r.names(base + "/" + rel + name)
                except (OSError, ValueError, IndexError):
                    pass  # a file that is not what it should be: its names come when it loads, as before
                gc.collect()  # each name's string is garbage once interned: the next file's names fill its holes
                if feed is not None:
                    feed()
    return n


class _Reader:
    def __init__(self):
        self.buf = bytearray(256)
        self.mv = memoryview(self.buf)
        self.f = None
        self.i = self.n = 0

    def _fill(self, want):
        # at least `want` bytes from self.i on in the buffer (a name is at most 255 bytes and its NUL)
        if self.n - self.i >= want:
            return
        left = self.n - self.i
        self.buf[:left] = self.mv[self.i:self.n]
        self.i = 0
        self.n = left
        while self.n < want:
            k = self.f.readinto(self.mv[self.n:])
            if not k:
                raise ValueError
            self.n += k

    def _uint(self):
        v = 0
        while True:
            self._fill(1)
            c = self.buf[self.i]
            self.i += 1
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                return v

    def names(self, path):
        with open(path, "rb") as f:
            self.f = f
            self.i = self.n = 0
            self._fill(4)
            b = self.buf
            if b[0] != 0x4D or b[1] != 6 or b[2] >> 2:
                return 0  # not bytecode of mpy version 6 (native code: its module is loaded once, at its time)
            self.i = 4
            count = self._uint()
            self._uint()  # the constant objects, after the names
            n = 0
            for _ in range(count):
                v = self._uint()
                if v & 1:
                    continue  # the interpreter's own name
                v >>= 1
                self._fill(v + 1)
                hasattr(_Reader, str(self.mv[self.i:self.i + v], "utf-8"))  # interns it
                self.i += v + 1
                n += 1
            self.f = None
            return n
