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
