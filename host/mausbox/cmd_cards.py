"""`mausbox cards`: make a classroom card set: write identities to NTAG stickers, enrol UIDs, print, check.

Identities are `mausbox:<game>/<kind>/<id>` in the canonical form of `maus.cards`. The unit does the radio
work: this command runs the firmware's own routines over the raw REPL (the board's MFRC522 driver,
`maus.cardwriter.write_identity`, `maus.rfid_id.read_identity`, `maus.cards.Enrolment`), one card at a time,
and tells the user what to put on the pad.
"""

from __future__ import annotations

HELP = "write card identities to NTAG stickers, enrol UIDs, list enrolled cards, print a card sheet, check a catalog"

# Catalog list key -> card kind in identities ("mice" -> mg/mouse/07).
KINDS = {"mice": "mouse", "clothing": "clothing", "cheese_cards": "cheese", "cards": "card"}


def add_parser(p):
    sub = p.add_subparsers(dest="cards_cmd", metavar="ACTION", required=True)

    def unit(q):
        q.add_argument("--port", help="serial port or pty of the unit (default: the only one connected)")
        q.add_argument("--baud", type=int, default=115200)
        q.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for each card on the pad")

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
    q.add_argument("--port")
    q.add_argument("--baud", type=int, default=115200)
    q.add_argument("--json", action="store_true")

    q = sub.add_parser("print", help="a printable card sheet (SVG, A4) from a catalog")
    cards(q)
    q.add_argument("-o", "--output", default="cards.html",
                   help="where the sheet goes: FILE.html (every page, prints as A4; the default cards.html), "
                        "FILE.svg (one page only), or FOLDER/ (one SVG a page)")

    q = sub.add_parser("check", help="validate a catalog file with the game's own validator")
    q.add_argument("file")
    q.add_argument("--json", action="store_true")


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
    """game -> validate_catalog(data) from the firmware's game modules (maus.games.*)."""
    import importlib
    import pkgutil

    import maus.games

    found: dict[str, object] = {}
    for m in pkgutil.iter_modules(maus.games.__path__):
        try:
            mod = importlib.import_module("maus.games." + m.name)
        except Exception:  # a game module in progress must not break the others' checks
            continue
        fn = getattr(mod, "validate_catalog", None)
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
    from maus import cards

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
    from maus import cards

    from mausbox.cli import EXIT_USAGE, UserError

    c = cards.normalise(ident)
    if c is None:
        raise UserError("not a card identity: %r (want e.g. mg/mouse/07 or game/mausgeflippt)" % ident, EXIT_USAGE)
    return c


# --- the printable sheet -------------------------------------------------------------------------

def _catalog_items(data: dict) -> dict[str, dict]:
    """identity -> the catalog entry of that card."""
    from maus import cards

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
            shown = "%s (%d SVG pages)" % (out, len(pages))
        elif out.suffix.lower() == ".svg":
            if len(pages) > 1:
                raise UserError("%d cards make %d pages, one SVG holds one: give -o SHEET.html (all pages in one "
                                "file) or -o FOLDER/ (one SVG a page)" % (len(cards), len(pages)), EXIT_USAGE)
            out.write_text(pages[0], encoding="utf-8")
            shown = str(out)
        else:
            out.write_text(cardsheet.html(pages, title), encoding="utf-8")
            shown = "%s (%d A4 pages; open it in a browser and print)" % (out, len(pages))
    except OSError as e:
        raise UserError("cannot write %s: %s" % (out, e.strerror or e), EXIT_USAGE) from None
    print("wrote %d cards: %s" % (len(cards), shown))
    return 0


def _check(args) -> int:
    import json

    data = load_catalog(args.file)
    errs = check_catalog(data)
    if args.json:
        print(json.dumps({"file": args.file, "game": data.get("game"), "ok": not errs, "errors": errs,
                          "cards": len(card_list(data)) if not errs else None}, indent=1))
    elif errs:
        print("%s: %d problem(s):" % (args.file, len(errs)))
        for e in errs:
            print("  " + e)
    else:
        print("%s: a good %s catalog, %d cards" % (args.file, data["game"], len(card_list(data))))
    return 1 if errs else 0


# --- through the unit ----------------------------------------------------------------------------

# Run on the unit (raw REPL, the app stopped): the board's reader through the firmware's own driver.
_PAD = """\
import gc, json
gc.collect()
from maus import cards
from maus.ticks import ticks_diff
def _pad():
 from maus.hw import load_board, open_hardware
 from maus.drivers.mfrc522 import MFRC522
 hw = open_hardware(load_board())
 if hw.spi is None:
  raise OSError('this unit has no RFID reader')
 r = MFRC522(hw.spi, hw.rfid_cs, hw.rfid_rst)
 r.init()
 return hw, r
def _wait(hw, ms, fn):
 t0 = hw.ticks_ms()
 while True:
  v = fn()
  if v is not None or ticks_diff(hw.ticks_ms(), t0) > ms:
   return v
  hw.idle(50)
"""

_WRITE_CODE = _PAD + """\
def _go(ident, force, ms):
 from maus.cardwriter import write_identity, WRITE_RESULTS, W_NO_CARD
 hw, r = _pad()
 def once():
  x = write_identity(r, ident, force)
  return None if x[0] == W_NO_CARD else x
 x = _wait(hw, ms, once)
 return None if x is None else {'code': x[0], 'result': WRITE_RESULTS[x[0]], 'uid': x[1], 'found': x[2]}
print(json.dumps(_go(%r, %r, %d)))
del _go, _pad, _wait
gc.collect()
"""

_READ_CODE = _PAD + """\
def _go(ms):
 from maus.rfid_id import read_identity
 hw, r = _pad()
 b = bytearray(60)
 cc = bytearray(4)
 got = []
 def cb(uid, n, sak):
  got.append([cards.uid_hex(uid, n), read_identity(r, b, cc) if sak == 0 else ''])
 def once():
  del got[:]
  r.scan(cb)
  return list(got) if got else None
 return _wait(hw, ms, once)
print(json.dumps(_go(%d)))
del _go, _pad, _wait
gc.collect()
"""

_ENROL_GET = """\
import json
from maus.cards import Enrolment
_e = Enrolment()
print(json.dumps({'cards': _e.map, 'error': _e.error, 'skipped': _e.skipped}))
"""

_ENROL_ADD = """\
import json
from maus.cards import Enrolment
print(json.dumps(Enrolment().add(%r, %r)))
"""


def _open(args):
    from mausbox.cli import EXIT_NO_UNIT, UserError
    from mausbox.cmd_logs import _ports
    from mausbox.logpull import LinkLost, ReplLink

    args.all = False
    if args.port:
        args.port = [args.port] if isinstance(args.port, str) else args.port
    try:
        return ReplLink(_ports(args)[0], baudrate=args.baud, timeout=2.0)
    except LinkLost as e:
        raise UserError(str(e), EXIT_NO_UNIT) from None


def _exec_json(link, code: str, timeout: float):
    import json

    from mausbox.cli import EXIT_LINK, UserError
    from mausbox.logpull import DeviceError, FrameError, LinkLost, _last_line

    try:
        out = link.exec(code, timeout=timeout)
    except DeviceError as e:
        msg = _last_line(str(e))
        if "ImportError" in msg or "no module named" in msg.lower():
            raise UserError("the unit's firmware has no card routines (%s): run mausbox deploy" % msg,
                            EXIT_LINK) from None
        raise UserError("the unit failed: %s" % msg, EXIT_LINK) from None
    except (LinkLost, FrameError) as e:
        raise UserError("link to the unit failed: %s" % e, EXIT_LINK) from None
    try:
        return json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UserError("the unit answered oddly: %r" % out[:120], EXIT_LINK) from None


def read_enrolment(link) -> dict:
    """{"cards": {UID: identity}, "error": str or None, "skipped": n} as the unit's Enrolment loads it."""
    doc = _exec_json(link, _ENROL_GET, 10)
    if not isinstance(doc, dict) or not isinstance(doc.get("cards"), dict):
        return {"cards": {}, "error": "the unit answered oddly", "skipped": 0}
    return doc


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
            ok, msg = fn(link, _check_ident(ident))
            print("  %s %s" % ("ok:" if ok else "FAILED:", msg))
            done += ok
            failed += not ok
    finally:
        link.close(restart=True)
    print("%d card(s) %s, %d failed" % (done, "written" if verb == "write" else "enrolled", failed))
    return 1 if failed else 0


def _write(args) -> int:
    ms = int(args.timeout * 1000)

    def one(link, ident):
        r = _exec_json(link, _WRITE_CODE % (ident, bool(args.force), ms), args.timeout + 15)
        if r is None:
            return False, "no card on the pad within %.0f s" % args.timeout
        if not isinstance(r, dict) or not isinstance(r.get("code"), int):
            return False, "unexpected answer %r" % (r,)
        if r["code"] in (0, 1):  # W_OK, W_SAME
            return True, "%s: mausbox:%s on tag %s" % (r.get("result"), ident, r.get("uid"))
        found = " (it says %s)" % r["found"] if r.get("found") else ""
        return False, "%s%s" % (r.get("result"), found)

    return _each_card(args, "write", one)


def _enrol(args) -> int:
    ms = int(args.timeout * 1000)

    def one(link, ident):
        r = _exec_json(link, _READ_CODE % ms, args.timeout + 15)
        if not r:
            return False, "no card on the pad within %.0f s" % args.timeout
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
        got = _exec_json(link, _ENROL_ADD % (uid, ident), 10)
        if got != ident or read_enrolment(link)["cards"].get(uid) != ident:
            return False, "the enrolment did not stick on the unit"
        return True, "UID %s -> %s%s" % (uid, ident, " (was %s)" % old if old and old != ident else "")

    return _each_card(args, "enrol", one)


def _list(args) -> int:
    import json

    link = _open(args)
    try:
        doc = read_enrolment(link)
    finally:
        link.close(restart=True)
    mapping = doc["cards"]
    if args.json:
        print(json.dumps(doc, indent=1, sort_keys=True))
    elif not mapping:
        print("no cards enrolled on this unit")
    else:
        for uid, ident in sorted(mapping.items(), key=lambda kv: kv[1]):
            print("%-22s %s" % (uid, ident))
    if doc.get("error"):
        print("warning: %s" % doc["error"])
    if doc.get("skipped"):
        print("warning: %d invalid entries skipped" % doc["skipped"])
    return 1 if doc.get("error") else 0
