"""`mausbox cards`: make a classroom card set: write identities to NTAG stickers, enrol UIDs, print, check.

Identities are `mausbox:<game>/<kind>/<id>` in the canonical form of `maus.cards.ident`. The unit does the radio
work with the firmware's own routines (`maus.cards.writer`, `maus.cards.enrol.Enrolment`), one step per request of the
host protocol (`card_write`, `card_read`, `enrol`, `enrolled`: docs/protocol.md), while its app keeps running
(not during a game); this command tells the user what to put on the pad.
"""

from __future__ import annotations

from mausbox.shown import plural

HELP = "write card identities to NTAG stickers, enrol UIDs, list enrolled cards, print a card sheet, check a catalog"
EXAMPLES = """\
mausbox cards print --catalog mg -o mg-cards.html   # a printable sheet of every Mausgeflippt card
mausbox cards check my-catalog.json
mausbox cards check mg.json --compile                # and write mg.cat, the form the unit loads fastest
mausbox cards write --catalog mg --port /dev/ttyUSB0
mausbox cards enrol mg/mouse/07 --port /dev/ttyUSB0
mausbox cards list --json
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each

# Catalog list key -> card kind in identities ("mice" -> mg/mouse/07).
KINDS = {"mice": "mouse", "clothing": "clothing", "cheese_cards": "cheese", "cards": "card"}


def add_parser(p):
    from mausbox.link.ports import BAUD_HELP, FAST_BAUD

    sub = p.add_subparsers(dest="cards_cmd", metavar="ACTION")

    def unit(q):
        q.add_argument("--port", help="serial port or pty of the unit (default: the only one connected)")
        q.add_argument("--baud", type=int, default=FAST_BAUD, help=BAUD_HELP)
        q.add_argument("--timeout", type=float, default=20.0,
                       help="seconds to wait for each card on the pad (and at most for each answer of the unit)")

    def cards(q):
        q.add_argument("cards", nargs="*", help="identities (mg/mouse/07 ...); default: every card of --catalog")
        q.add_argument("--catalog", help="catalog file, or a game (mg, mim, mms) for the built-in one")
        q.add_argument("--kind", help="only cards of this kind (mouse, clothing, cheese, card, game)")

    q = sub.add_parser("write", help="write identities to blank NTAG stickers, one by one, through the unit")
    unit(q)
    cards(q)
    q.add_argument("--force", action="store_true", help="overwrite a tag that holds another identity")
    q.add_argument("--yes", action="store_true", help="do not wait for Enter before each card")

    q = sub.add_parser("enrol", help="map the UIDs of cards that cannot be written (MIFARE Classic) to identities")
    unit(q)
    cards(q)
    q.add_argument("--yes", action="store_true", help="do not wait for Enter before each card")

    q = sub.add_parser("list", help="what the unit has enrolled")
    q.add_argument("--port", help="serial port or pty of the unit (default: the only one connected)")
    q.add_argument("--baud", type=int, default=FAST_BAUD, help=BAUD_HELP)
    q.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for each answer of the unit (default %(default)s)")
    q.add_argument("--json", action="store_true", help="print the enrolment as JSON")

    q = sub.add_parser("print", help="a printable card sheet (SVG, A4) from a catalog")
    cards(q)
    q.add_argument("-o", "--output", default="cards.html",
                   help="where the sheet goes: FILE.html (every page, prints as A4; the default cards.html), "
                        "FILE.svg (one page only), or FOLDER/ (one SVG a page)")

    q = sub.add_parser("check", help="validate a catalog file with the game's own validator")
    q.add_argument("file")
    q.add_argument("--json", action="store_true", help="print the result as JSON")
    q.add_argument("--compile", action="store_true",
                   help="also write its compiled form (FILE.cat beside it) for the unit (docs/build.md section 7)")


def run(args) -> int:
    return {"write": _write, "enrol": _enrol, "list": _list, "print": _print, "check": _check}[args.cards_cmd](args)


# --- catalogs ------------------------------------------------------------------------------------

def _builtin(game: str):
    from mausbox.paths import FIRMWARE_PKG

    return FIRMWARE_PKG / "catalogs" / ("%s.json" % game)


def load_catalog(ref: str) -> dict:
    import json
    from pathlib import Path

    from mausbox.cli import EXIT_USAGE, UserError

    path = Path(ref)
    if not path.exists() and "/" not in ref and not ref.endswith(".json"):
        path = _builtin(ref)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError("cannot read catalog %s: %s" % (ref, e.strerror or e), EXIT_USAGE) from None
    except ValueError as e:
        raise UserError("catalog %s is not JSON: %s" % (ref, e), EXIT_USAGE) from None
    if not isinstance(data, dict) or not isinstance(data.get("game"), str):
        raise UserError('catalog %s: not a catalog (no "game")' % ref, EXIT_USAGE)
    return data


def validators() -> dict[str, object]:
    """game -> validate_catalog(data) from the firmware's games (maus.games.<game>.catalog or .rules)."""
    import importlib
    from pathlib import Path

    import maus.games

    found: dict[str, object] = {}
    # each game is a folder maus/games/<game>/ (a namespace package: pkgutil does not list those)
    names = sorted({p.name for d in maus.games.__path__ for p in Path(d).iterdir()
                    if p.is_dir() and p.name.isidentifier() and not p.name.startswith("_")})
    for name in names:
        fn = mod = None
        for part in ("catalog", "rules"):  # the checker where the game keeps it apart, else its rules
            try:
                mod = importlib.import_module("maus.games.%s.%s" % (name, part))
            except Exception:  # a game module in progress must not break the others' checks
                continue
            fn = getattr(mod, "validate_catalog", None)
            if callable(fn):
                break
        if not callable(fn):
            continue
        game = getattr(mod, "GAME", None)
        if not isinstance(game, str):
            errs = fn({})  # the validator names the game it wants: 'game: must be "mg"'
            for e in errs if isinstance(errs, list) else []:
                if isinstance(e, str) and e.startswith("game:") and '"' in e:
                    game = e.split('"')[1]
        if isinstance(game, str):
            found[game] = fn
    return found


def check_catalog(data: dict) -> list[str]:
    v = validators().get(data.get("game"))  # type: ignore[arg-type]
    if v is None:
        return ["no validator for game %r in this firmware (known: %s)" % (
            data.get("game"), ", ".join(sorted(validators())) or "none")]
    try:
        errs = v(data)  # type: ignore[operator]
    except Exception as e:  # a validator crash on odd input is reported as a finding, not a traceback
        return ["the validator failed on this file: %r" % e]
    return [str(e) for e in errs]


def card_list(data: dict) -> list[tuple[str, str]]:
    """(identity, description) for every card of a catalog, the game card first."""
    from maus.cards import ident as cards

    game = data["game"]
    out = [(cards.game_card(game) or "game/%s" % game, "game card")]
    for key, items in data.items():
        if not isinstance(items, list) or not items or not all(isinstance(i, dict) and "id" in i for i in items):
            continue
        kind = KINDS.get(key, key.rstrip("s"))
        for it in sorted(items, key=lambda i: i["id"] if isinstance(i["id"], int) else 0):
            if not isinstance(it["id"], int):
                continue
            desc = "; ".join("%s: %s" % (k, ", ".join(map(str, v)) if isinstance(v, list) else v)
                             for k, v in it.items() if k != "id")
            out.append((cards.format_id(game, kind, it["id"]) or "%s/%s/%d" % (game, kind, it["id"]), desc))
    return out


def _selected(args) -> list[tuple[str, str]]:
    from mausbox.cli import EXIT_USAGE, UserError

    if args.cards:
        args.cards = [_check_ident(c) for c in args.cards]
        if not args.catalog:
            return [(c, "") for c in args.cards]
    if not args.catalog:
        raise UserError("name the cards or give --catalog (a file or mg, mim, mms)", EXIT_USAGE)
    cards = card_list(load_catalog(args.catalog))
    if args.kind:
        cards = [c for c in cards if ("game" if c[0].startswith("game/") else c[0].split("/")[1]) == args.kind]
    if args.cards:
        want = set(args.cards)
        cards = [c for c in cards if c[0] in want] + [(c, "") for c in args.cards if c not in {x[0] for x in cards}]
    if not cards:
        raise UserError("no cards selected", EXIT_USAGE)
    return cards


def _check_ident(ident: str) -> str:
    from maus.cards import ident as cards

    from mausbox.cli import EXIT_USAGE, UserError

    c = cards.normalise(ident)
    if c is None:
        raise UserError(_no_card(ident), EXIT_USAGE)
    return c


def _no_card(ident: str) -> str:
    """Why an identity names no card: a number past its kind's last card, a kind its game does not have, or
    not an identity at all."""
    from maus.cards import ident as cards

    parts = ident.strip().lower().removeprefix(cards.PREFIX).split("/")
    kinds = {(g, k): (first, last) for g, k, first, last in cards.KINDS}
    if len(parts) == 3 and (parts[0], parts[1]) in kinds and parts[2].isdigit():
        first, last = kinds[parts[0], parts[1]]
        return (f"no card {ident} in the {parts[0]} catalog (it has {cards.format_id(parts[0], parts[1], first)} "
                f"to {cards.format_id(parts[0], parts[1], last)})")
    games = {g for g, _ in kinds}
    if len(parts) == 3 and parts[0] in games:
        have = ", ".join(k for g, k in kinds if g == parts[0])
        return f"no card {ident}: the {parts[0]} catalog has no kind {parts[1]!r} (its kinds: {have})"
    if len(parts) == 2 and parts[0] == "game":
        return f"no game card {ident}: the game cards are " + ", ".join("game/" + n for n in cards.GAME_CARDS)
    return "not a card identity: %r (want e.g. mg/mouse/07 or game/mausgeflippt)" % ident


# --- the printable sheet -------------------------------------------------------------------------

def _catalog_items(data: dict) -> dict[str, dict]:
    """identity -> the catalog entry of that card."""
    from maus.cards import ident as cards

    game = data["game"]
    out = {}
    for key, items in data.items():
        if not isinstance(items, list) or not all(isinstance(i, dict) and "id" in i for i in items):
            continue
        kind = KINDS.get(key, key.rstrip("s"))
        for it in items:
            if isinstance(it["id"], int):
                out[cards.format_id(game, kind, it["id"]) or "%s/%s/%d" % (game, kind, it["id"])] = it
    return out


def sheet_cards(idents: list[str], catalog: dict | None) -> list:
    """Cards for the sheet with every field filled in: from `catalog`, else from each card's game's built-in
    catalog (so `cards print mg/clothing/16` shows "item: red bow" without --catalog)."""
    from mausbox import cardsheet

    cats: dict[str, tuple[dict, dict]] = {}
    if catalog is not None:
        cats[catalog["game"]] = (catalog, _catalog_items(catalog))
    out = []
    for ident in idents:
        card = cardsheet.Card(ident, [])
        if card.game not in cats and _builtin(card.game).is_file():
            builtin = load_catalog(card.game)
            cats[card.game] = (builtin, _catalog_items(builtin))
        if card.game in cats:
            data, items = cats[card.game]
            card.fields = cardsheet.card_fields(card.game, card.kind, items.get(ident), data)
        out.append(card)
    return out


def _print(args) -> int:
    from pathlib import Path

    from mausbox import cardsheet
    from mausbox.cli import EXIT_USAGE, UserError

    chosen = _selected(args)
    catalog = load_catalog(args.catalog) if args.catalog else None
    cards = sheet_cards([c[0] for c in chosen], catalog)
    title = "Mausbox cards: %s" % (cardsheet.GAME_NAMES.get(catalog["game"], catalog["game"]) if catalog
                                   else "selection")
    pages = cardsheet.pages(cards, title)
    out = Path(args.output)
    try:
        if args.output.endswith(("/", "\\")) or out.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            names = [out / ("page-%02d.svg" % (i + 1)) for i in range(len(pages))]
            for n, page in zip(names, pages):
                n.write_text(page, encoding="utf-8")
            wrote = "%s (%d SVG pages)" % (out, len(pages))
        elif out.suffix.lower() == ".svg":
            if len(pages) > 1:
                raise UserError("%s make %d pages, one SVG holds one: give -o SHEET.html (all pages in one "
                                "file) or -o FOLDER/ (one SVG a page)" % (plural(len(cards), "card"), len(pages)), EXIT_USAGE)
            out.write_text(pages[0], encoding="utf-8")
            wrote = str(out)
        else:
            out.write_text(cardsheet.html(pages, title), encoding="utf-8")
            wrote = "%s (%d A4 pages; open it in a browser and print)" % (out, len(pages))
    except OSError as e:
        raise UserError("cannot write %s: %s" % (out, e.strerror or e), EXIT_USAGE) from None
    print("wrote %s: %s" % (plural(len(cards), "card"), wrote))
    return 0


def _check(args) -> int:
    import json

    data = load_catalog(args.file)
    errs = check_catalog(data)
    cat = None
    if args.compile and not errs:
        from pathlib import Path

        from mausbox import catalogc

        cat = catalogc.compile_file(Path(args.file))
    if args.json:
        print(json.dumps({"file": args.file, "game": data.get("game"), "ok": not errs, "errors": errs,
                          "cards": len(card_list(data)) if not errs else None,
                          **({"compiled": str(cat) if cat else None} if args.compile else {})}, indent=1))
    elif errs:
        print("%s: %d problem(s):" % (args.file, len(errs)))
        from mausbox.shown import shown

        for e in errs:
            print("  " + shown(e))
    else:
        print("%s: a good %s catalog, %s" % (args.file, data["game"], plural(len(card_list(data)), "card")))
        if args.compile:
            print("  compiled: %s (copy it to the unit beside the .json)" % cat if cat else
                  "  no compiled form for this game: the unit reads the .json")
    return 1 if errs else 0


# --- through the unit ----------------------------------------------------------------------------

def _open(args):
    from mausbox.link import UnitLink

    link = UnitLink(args.port, timeout=min(args.timeout, 10.0), fast=args.baud)
    link.hello()
    return link


def _ask(link, op: str, **kw) -> dict:
    from mausbox.cli import EXIT_PROBLEM, UserError
    from mausbox.link import UnitError

    try:
        return link.request(op, **kw)
    except UnitError as e:
        if e.error == "op":
            raise UserError("the unit's firmware has no card routines (%s): run mausbox deploy" % e.msg,
                            EXIT_PROBLEM) from None
        raise UserError("the unit refused: %s" % e.msg, EXIT_PROBLEM) from None


def _until_card(link, args, op: str, **kw):
    """Repeat one card step until a card is on the pad (the unit answers at once either way)."""
    import time

    end = time.monotonic() + args.timeout
    while True:
        r = _ask(link, op, **kw)
        if (r.get("code") != 2 if op == "card_write" else bool(r.get("cards"))):  # 2: W_NO_CARD
            return r
        if time.monotonic() >= end:
            return None
        time.sleep(0.2)


def read_enrolment(link) -> dict:
    """{"cards": {UID: identity}, "error": str or None, "skipped": n} as the unit's Enrolment holds it."""
    cards: dict[str, str] = {}

    def part(f) -> None:
        for line in f.payload.decode("utf-8", "replace").splitlines():
            uid, _, ident = line.partition(" ")
            if uid and ident:
                cards[uid] = ident

    done = link.request("enrolled", on_frame=part)
    return {"cards": cards, "error": done.get("error"), "skipped": done.get("skipped", 0)}


def _uid_ok(uid) -> bool:
    import re

    return isinstance(uid, str) and re.fullmatch(r"[0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20}", uid) is not None


def _prompt(args, text: str) -> str:
    """Ask before each card: "go", "skip" or "quit" (q, or the end of input)."""
    if args.yes:
        print(text)
        return "go"
    try:
        ans = input(text + "  [Enter = go, s = skip, q = quit] ").strip().lower()
    except EOFError:
        return "quit"
    return "quit" if ans.startswith("q") else "skip" if ans.startswith("s") else "go"


def _each_card(args, verb: str, fn) -> int:
    cards = _selected(args)
    link = _open(args)
    done = failed = 0
    try:
        for i, (ident, desc) in enumerate(cards):
            go = _prompt(args, "[%d/%d] put a card for %s (%s) on the pad to %s it" % (
                i + 1, len(cards), ident, desc or ident, verb))
            if go == "quit":
                break
            if go == "skip":
                continue
            from mausbox.shown import one_line

            ok, msg = fn(link, _check_ident(ident))
            print("  %s %s" % ("ok:" if ok else "FAILED:", one_line(msg)))  # may quote the unit
            done += ok
            failed += not ok
    finally:
        try:
            link.request("card_done")  # the pad is the unit's again
        except Exception:  # noqa: BLE001 - the lease ends by itself on the unit
            pass
        link.close()
    print("%d card(s) %s, %d failed" % (done, "written" if verb == "write" else "enrolled", failed))
    return 1 if failed else 0


def _write(args) -> int:
    def one(link, ident):
        r = _until_card(link, args, "card_write", id=ident, force=bool(args.force))
        if r is None:
            return False, "no card on the pad within %.0f s" % args.timeout
        if not isinstance(r.get("code"), int):
            return False, "unexpected answer %r" % (r,)
        if r["code"] in (0, 1):  # W_OK, W_SAME
            return True, "%s: mausbox:%s on tag %s" % (r.get("result"), ident, r.get("uid"))
        found = " (it says %s)" % r["found"] if r.get("found") else ""
        return False, "%s%s" % (r.get("result"), found)

    return _each_card(args, "write", one)


def _enrol(args) -> int:
    def one(link, ident):
        got = _until_card(link, args, "card_read")
        if not got:
            return False, "no card on the pad within %.0f s" % args.timeout
        r = got.get("cards")
        if not isinstance(r, list) or not all(isinstance(x, list) and len(x) == 2 for x in r):
            return False, "unexpected answer %r" % (r,)
        if len(r) > 1:
            return False, "more than one card on the pad"
        uid, held = r[0]
        if not _uid_ok(uid):
            return False, "the unit reported an odd UID %r" % (uid,)
        if held is None:
            return False, "could not read the tag: try again"
        if held and held != ident:
            return False, "this tag already says %s: not enrolled" % held
        old = read_enrolment(link)["cards"].get(uid)
        put = _ask(link, "enrol", uid=uid, id=ident)
        if put.get("id") != ident or read_enrolment(link)["cards"].get(uid) != ident:
            return False, "the enrolment did not stick on the unit"
        return True, "UID %s -> %s%s" % (uid, ident, " (was %s)" % old if old and old != ident else "")

    return _each_card(args, "enrol", one)


def _list(args) -> int:
    import json

    link = _open(args)
    try:
        doc = read_enrolment(link)
    finally:
        link.close()
    mapping = doc["cards"]
    if args.json:
        print(json.dumps(doc, indent=1, sort_keys=True))
    elif not mapping:
        print("no cards enrolled on this unit")
    else:
        from mausbox.shown import shown

        for uid, ident in sorted(mapping.items(), key=lambda kv: str(kv[1])):
            print("%-22s %s" % (shown(uid), shown(ident)))
    if doc.get("error"):
        from mausbox.shown import shown

        print("warning: %s" % shown(doc["error"]))
    if doc.get("skipped"):
        print("warning: %d invalid entries skipped" % doc["skipped"])
    return 1 if doc.get("error") else 0
