# Mausbox firmware: the unit's MicroPython application.
# Pure modules (rules, scoring, logs, catalogs) never import `machine`; hardware lives in maus.hw.
#
# Deployed as .mpy files on the board's filesystem, every loaded module's bytecode lives in the GC heap
# (docs/build.md): the unit loads what a phase needs and lets it go after (unload_since, moment).
import json
import sys

VERSION = "0.1.0"
# Modules never let go once loaded: they hold native code, which the ESP32 commits to IRAM and frees only
# at a soft reset (ports/esp32/main.c esp_native_code_commit), so each new load would take that IRAM again.
KEEP = ("maus.piezo.fast",)


# Where the data files (texts/, catalogs/) are when the code is frozen into the image (`make image`): a frozen
# package has no folder, and a folder named maus on the filesystem would hide it (sys.path has "" before
# ".frozen"), so a deploy onto such a unit writes them here (docs/build.md section 7).
FROZEN_DATA = "maus-data"


def data_dir():
    """The folder of the app's data files: the package's own (a deploy's /maus, ROMFS's /rom/maus, the virtual
    unit's), else FROZEN_DATA (the package is frozen: its __file__ names no file)."""
    import os

    here = __file__.replace("\\", "/")
    try:
        os.stat(here)
    except OSError:
        return FROZEN_DATA
    return here.rsplit("/", 1)[0] if "/" in here else "."


def loaded():
    """The names of the modules loaded now: a mark for unload_since()."""
    return tuple(sys.modules)


def unload_since(mark):
    """Unload every firmware module imported after `mark` (from loaded()), so its RAM comes back once
    nothing else holds it. Objects made from such a module keep working; a later import loads it afresh.
    Only maus.* goes: the interpreter's own and the host's modules stay (the host runs this code too).
    One at a time, looked for afresh each time, not from a copy of sys.modules: a copy is a block of ~250 bytes,
    which a long-lived unit at a game's crowded moment may not have in one piece (bench/bench_season.py)."""
    while True:
        for name in sys.modules:
            # the cheap test first: on CPython, running the tests, the mark holds a thousand or more names
            if name.startswith("maus.") and name not in mark and name not in KEEP:
                break
        else:
            return
        unload(name)


def unload(name):
    """Forget the module `name` (sys.modules and its package's attribute) if it is loaded (not one of KEEP)."""
    if name not in KEEP and sys.modules.pop(name, None) is not None:
        pkg, _, short = name.rpartition(".")
        parent = sys.modules.get(pkg)
        if parent is not None and short in parent.__dict__:
            delattr(parent, short)


def write_atomic(path, data):
    # temp file + rename: after a power cut the file is either old or new, never torn.
    import os

    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def json_pieces(out, pre, v, depth):
    # `pre` then v's compact JSON, as json.dumps writes it, appended to out as bytes pieces: a dict (str keys)
    # or list goes item by item `depth` levels down, in the order json.dumps takes, so no piece holds all of
    # it. A log line (maus.log.writer) and the host link's answers (maus.host.frame.Tx.reply) are written so: a
    # long-lived unit's fragmented heap may not have one block the size of the whole.
    if depth and v and (isinstance(v, list) or isinstance(v, dict) and all(isinstance(k, str) for k in v)):
        d = isinstance(v, dict)
        pre += "{" if d else "["
        for x in v:
            if d:
                json_pieces(out, pre + json.dumps(x) + ":", v[x], depth - 1)
            else:
                json_pieces(out, pre, x, depth - 1)
            pre = ","
        out.append(b"}" if d else b"]")
    else:
        out.append((pre + json.dumps(v, separators=(",", ":"))).encode())


LOG_DIR = "logs"  # the unit's logs on its flash (maus.log.store)


def free_bytes(path):
    """Free bytes on the filesystem holding `path`: the room the logs still have (LogStore.free, a status, the
    boot self-test, which need not load maus.log.store for it)."""
    import os

    st = os.statvfs(path)
    if st[4] > st[2]:
        return 0  # littlefs when full: blocks in use exceed the total and f_bavail wraps
    return st[0] * st[4]


def unit_name(root=""):
    """The unit's name (`mausbox name set`, maus.settings.classroom: name.txt), or None; read where it is shown (the idle
    menu, hello) without loading maus.settings.classroom."""
    try:
        with open(root + "name.txt", "rb") as f:
            return f.read(65).decode() or None
    except (OSError, UnicodeError):
        return None


class moment:
    """Code needed for a moment only (a game's start, its end, a rare host request, a validator):

        with moment():
            import maus.log.end

            maus.log.end.end(log, ...)

    Every firmware module imported inside the block is unloaded again when it ends, so its RAM comes back
    (unload_since). The imports are plain import statements, which a reader, the type checker and the
    import check (make check) follow. Objects made inside the block keep working after it. Import the
    module, not a name from it (`from maus.log.end import end`): a local name for its function would hold
    the module's code in RAM until the calling function returns."""

    def __enter__(self):
        self.mark = loaded()

    def __exit__(self, *exc):
        unload_since(self.mark)
