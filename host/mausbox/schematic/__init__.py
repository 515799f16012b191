"""Wiring diagram, pin table, bill of materials and power budget, generated from a board definition.

`render(board)` returns every file of `schematics/<board>/` as text; nothing here reads the clock or the
environment, so the same board always gives the same bytes and a test can compare them with the committed
files. The board must be valid (`maus.hw.board.validate`): the drawing trusts its pins.

The package: parts.py (the board's wires and currents), svg.py (the diagram), tables.py (the pin table, the bill of
materials, the power budget).
"""

from __future__ import annotations

import json
from pathlib import Path

from maus.hw import board as boardmod

from mausbox.schematic.svg import svg
from mausbox.schematic.tables import bom_md, pins_md, power_md

FILES = ("wiring.svg", "pins.md", "bom.md", "power.md")


def render(board: dict) -> dict[str, str]:
    """Every generated file of one board, by file name."""
    errs = boardmod.validate(board)
    if errs:
        raise ValueError(f"board {board.get('name', '?')} is not valid: " + "; ".join(errs))
    return {"wiring.svg": svg(board), "pins.md": pins_md(board), "bom.md": bom_md(board),
            "power.md": power_md(board)}


def write(board: dict, out_dir: Path) -> list[Path]:
    """Write the board's files into out_dir/<name>/ (each through a temp file and rename)."""
    files = render(board)
    d = Path(out_dir) / board["name"]
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = d / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


def stale(board: dict, out_dir: Path) -> list[str]:
    """Files in out_dir/<name>/ that differ from what the board generates now."""
    d = Path(out_dir) / board["name"]
    out = []
    for name, text in render(board).items():
        path = d / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out.append(str(path))
    return out


def load_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
