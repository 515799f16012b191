"""`mausbox boards`: list the board definitions, check one against its chip's pin rules, draw its schematics."""

from __future__ import annotations

from mausbox.shown import plural

HELP = "list board definitions, check one against the pin rules, generate its wiring diagram, BOM and power budget"
EXAMPLES = """\
mausbox boards list
mausbox boards check esp32-devkitc-6p    # exit 1 when the board breaks a rule
mausbox boards diagram --all             # regenerate schematics/<board>/
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    ls = sub.add_parser("list", help="every board in boards/ with its parts and whether it validates")
    ls.add_argument("--json", action="store_true", help="print the list as JSON")
    ck = sub.add_parser("check", help="validate a board by name or file; exit 1 when it breaks a rule")
    ck.add_argument("board", metavar="NAME|FILE")
    ck.add_argument("--json", action="store_true", help="print the result as JSON")
    dg = sub.add_parser("diagram", help="write wiring.svg, pins.md, bom.md and power.md for a board")
    dg.add_argument("board", metavar="NAME|FILE", nargs="?")
    dg.add_argument("--all", action="store_true", help="every board in boards/")
    dg.add_argument("--out", metavar="DIR", help="output folder (default: schematics/ in the checkout)")
    dg.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if the files in the output folder are out of date")


def _resolve(spec: str):
    """(path, board dict) for a board name in boards/ or a path to a board file."""
    from pathlib import Path

    from maus.hw import board as boardmod

    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.paths import BOARDS_DIR

    path = Path(spec)
    if not (spec.endswith(".json") or "/" in spec or path.is_file()):
        path = BOARDS_DIR / f"{spec}.json"
        if not path.is_file():
            known = ", ".join(_names()) or "(none)"
            raise UserError(f"no board named {spec!r}; known boards: {known}", EXIT_USAGE)
    try:
        return path, boardmod.load(str(path))
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}", EXIT_USAGE) from None
    except ValueError as e:
        raise UserError(str(e), EXIT_USAGE) from None


def _names() -> list[str]:
    from mausbox.paths import BOARDS_DIR

    return sorted(p.stem for p in BOARDS_DIR.glob("*.json"))


def errors(path, board) -> list[str]:
    """The validator's errors plus the file-level rule: the name is the file name."""
    from maus.hw import board as boardmod

    errs = boardmod.validate(board)
    if isinstance(board, dict) and isinstance(board.get("name"), str) and board["name"] != path.stem:
        errs.append(f"name: {board['name']!r} differs from the file name {path.name!r}")
    return errs


def _list(args) -> int:
    import json

    from maus.hw import board as boardmod

    from mausbox.paths import BOARDS_DIR

    rows = []
    for name in _names():
        path, b = _resolve(str(BOARDS_DIR / f"{name}.json"))
        errs = errors(path, b)
        if not isinstance(b, dict):
            b = {}
        parts = sorted(b.get("parts", {})) if isinstance(b, dict) and isinstance(b.get("parts"), dict) else []
        rows.append({"name": name, "title": b.get("title", ""), "family": b.get("family", ""),
                     "players": b.get("players"), "capture": b.get("capture"), "pull": b.get("pull"),
                     "parts": parts, "piezo": boardmod.piezo_mode(b), "valid": not errs, "errors": errs,
                     "file": str(path)})
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no board files in {BOARDS_DIR}")
        return 0
    w = max(len(r["name"]) for r in rows)
    print(f"{'NAME':<{w}}  FAMILY   PLAYERS  STATUS    PARTS")
    for r in rows:
        status = "ok" if r["valid"] else plural(len(r["errors"]), "error")
        print(f"{r['name']:<{w}}  {r['family']:<8} {r['players']!s:<8} {status:<9} {' '.join(r['parts'])}")
    return 0


def _check(args) -> int:
    import json

    from mausbox.cli import EXIT_OK, EXIT_PROBLEM

    path, b = _resolve(args.board)
    errs = errors(path, b)
    if args.json:
        print(json.dumps({"file": str(path), "name": b.get("name") if isinstance(b, dict) else None,
                          "valid": not errs, "errors": errs}, indent=2, ensure_ascii=False))
        return EXIT_PROBLEM if errs else EXIT_OK
    if errs:
        print(f"{path}: {len(errs)} problem{'s' if len(errs) > 1 else ''}")
        for e in errs:
            print(f"  {e}")
        return EXIT_PROBLEM
    print(f"{path}: ok")
    print("  the unit's boot screen shows:")
    for line, said in explain(b):
        print(f"  {line:<16}  {said}")
    return EXIT_OK


WORDS = {"led": "LEDs", "bz": "buzzer", "oled": "OLED display", "rfid": "RFID reader",
         "jmp": "latency-test jumper", "piezo-a": "piezo on an analog (ADC) pin",
         "piezo-d": "piezo through a comparator (digital pin)"}
CAPTURE = {"poll": "presses read by a polling loop", "irq": "presses read by pin interrupts"}


def explain(board: dict) -> list[tuple[str, str]]:
    """Each line of the boot screen's summary (maus.hw.board.summary) with what it says in plain words."""
    from maus.hw import board as boardmod

    lines = boardmod.summary(board).split("\n")
    out = [(lines[0], "the board file's name")]
    psram = boardmod.psram(board)
    if board.get("module"):
        out[0] = (lines[0], f"{board['module']}, " + ("no PSRAM" if psram == "none" else f"{psram} PSRAM"))
    for line in lines[1:]:
        words = line.split()
        if len(words) == 3 and words[1] == "players":
            said = f"{words[0]} player buttons, {CAPTURE.get(words[2], words[2])}"
        elif words[:1] == ["pull"]:
            said = {"internal": "the chip's own pull-up resistors on the buttons",
                    "external": "10 kΩ pull-up resistors on the buttons"}.get(words[-1], line)
        else:
            said = ", ".join(WORDS.get(w, w) for w in words)
        out.append((line, said))
    return out


def _diagram(args) -> int:
    from pathlib import Path

    from mausbox import schematic
    from mausbox.cli import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, UserError
    from mausbox.paths import BOARDS_DIR, REPO_ROOT

    if args.all == bool(args.board):
        raise UserError("give one board NAME|FILE or --all", EXIT_USAGE)
    specs = [str(BOARDS_DIR / f"{n}.json") for n in _names()] if args.all else [args.board]
    out = Path(args.out) if args.out else REPO_ROOT / "schematics"
    rc = EXIT_OK
    for spec in specs:
        path, b = _resolve(spec)
        errs = errors(path, b)
        if errs:
            print(f"{path}: not drawn, {len(errs)} problem{'s' if len(errs) > 1 else ''}:")
            for e in errs:
                print(f"  {e}")
            rc = EXIT_PROBLEM
            continue
        if args.check:
            stale = schematic.stale(b, out)
            for name in stale:
                print(f"out of date: {name}")
            if stale:
                rc = EXIT_PROBLEM
            else:
                print(f"{b['name']}: up to date")
            continue
        for f in schematic.write(b, out):
            print(f"wrote {f}")
    if rc and args.check:
        print("regenerate with: mausbox boards diagram --all")
    return rc


def run(args) -> int:
    return {"list": _list, "check": _check, "diagram": _diagram}[args.action](args)
