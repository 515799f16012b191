"""Compiled catalogs: a game's catalog JSON checked and compacted on the host, as the unit's start would do it.

A unit's game start that parses `maus/catalogs/mg.json` holds the whole parsed JSON for a moment (~19 KB of
a 112 KB heap for Mausgeflippt's, ~10 KB for M is for Mouse's), the start's largest moment. So the catalog
ships compiled too: `<short>.cat` beside the `.json`, two lines,

    mausbox-catalog-1 <sha256 of the .json> <sha256 of line 2>
    [["s", "red blue green yellow"], ["b", "0a1b..."], ...]

line 2 being the arguments of the game's `Catalog(...)` (the firmware's own compact class): "s" a string,
"b" bytes in hex, "i" an integer. The unit (maus.unit.start.compiled) uses the .cat only while the .json
beside it is the one it was compiled from; otherwise (a catalog edited on the unit) it reads and checks the
.json whole, as before. It is made by the firmware's own loader (run here under CPython), so a .cat holds
nothing the unit would not have built; a catalog that does not pass its game's checks gets no .cat.
Games whose compact catalog is not strings, bytes and integers (Mucks Mäuschen Still's, 0.5 KB of JSON) have
none. docs/catalogs.md."""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

HEADER = "mausbox-catalog-1"


def _module(short: str):
    import importlib

    from maus.unit.shared import GAMES

    for g in GAMES.values():
        if g[8] == short:
            return importlib.import_module(g[7])
    return None


def compile_text(src: Path) -> str | None:
    """The .cat text for catalog file `src` (named <short>.json), or None: its game has no compact
    Catalog of plain values. Raises ValueError naming the problem for a catalog that does not pass."""
    raw = src.read_bytes()
    mod = _module(src.stem)
    cls = getattr(mod, "Catalog", None)
    loader = getattr(mod, "load_catalog", None)
    if cls is None or loader is None:
        return None
    cat = loader(json.loads(raw.decode("utf-8")))
    args: list[list] = []
    values = []
    for name in list(inspect.signature(cls.__init__).parameters)[1:]:
        v = getattr(cat, name)
        if isinstance(v, bool) or not isinstance(v, (str, bytes, int)):
            return None
        args.append(["b", v.hex()] if isinstance(v, bytes) else ["i" if isinstance(v, int) else "s", v])
        values.append(v)
    body = json.dumps(args, separators=(",", ":"), ensure_ascii=True)
    if vars(cls(*values)) != vars(cat):
        return None  # the constructor does more than keep its arguments: not a plain-value catalog
    return "%s %s %s\n%s\n" % (HEADER, hashlib.sha256(raw).hexdigest(), hashlib.sha256(body.encode()).hexdigest(),
                               body)


def compile_file(src: Path, out: Path | None = None) -> Path | None:
    """Write `src`'s .cat (beside it unless `out`); None when its game has none."""
    text = compile_text(src)
    if text is None:
        return None
    out = out or src.with_suffix(".cat")
    out.write_text(text, encoding="ascii")
    return out


def main() -> int:
    """`python -m mausbox.catalogc`: the built-in catalogs' .cat files made again (make catalogs)."""
    from mausbox.paths import FIRMWARE_PKG

    for src in sorted((FIRMWARE_PKG / "catalogs").glob("*.json")):
        out = compile_file(src)
        print(f"{src.name}: {out.name if out else 'no compiled form (its catalog is not plain values)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
