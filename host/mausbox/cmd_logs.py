"""`mausbox logs`: pull game logs from units into the local store, and read them back."""

from __future__ import annotations

from mausbox.shown import plural

HELP = "pull game logs from units (verified, resumable) and list, show, analyse or export them"
EXAMPLES = """\
mausbox logs pull                      # the one connected unit (a virtual unit counts)
mausbox logs pull --port /dev/ttyUSB0 -v
mausbox logs list --game mim
mausbox logs show 00003
mausbox logs stats --json
mausbox logs export --format csv --what reactions -o reactions.csv
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    from mausbox.link.ports import BAUD_HELP, FAST_BAUD

    sub = p.add_subparsers(dest="logs_cmd", metavar="ACTION")

    def common(q, names=True):
        q.add_argument("--store", help="the SQLite store (default: ~/.local/share/mausbox/logs.sqlite)")
        if names:
            q.add_argument("--names", help='JSON file of player names: {"<unit>/<player>": "Anna", "<player>": ...}')

    q = sub.add_parser("pull", help="copy new logs from a unit (or every connected unit) into the store")
    common(q, names=False)
    g = q.add_mutually_exclusive_group()
    g.add_argument("--port", action="append", help="serial port or pty of the unit (repeat for several)")
    g.add_argument("--all", action="store_true", help="every connected unit, in parallel")
    g.add_argument("--watch", action="store_true", help="pull each unit the moment it is plugged in (the unit "
                   "shows \"logs copied\" and beeps), a running table; Ctrl-C ends with a summary")
    q.add_argument("--dest", help="folder for the raw logs (default: the store's raw/ folder); one folder per unit")
    q.add_argument("--baud", type=int, default=FAST_BAUD, help=BAUD_HELP)
    q.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for each answer of the unit (default %(default)s)")
    q.add_argument("--no-mark", action="store_true", help="do not mark logs pulled on the unit")
    q.add_argument("--json", action="store_true", help="print what each unit gave as JSON")
    q.add_argument("-v", "--verbose", action="store_true", help="report retries and resumes")

    q = sub.add_parser("import", help="take downloaded logs (the web page's .tar, or .jsonl files) into the store, "
                                      "checked as a pull checks them")
    common(q, names=False)
    q.add_argument("files", nargs="+", metavar="FILE", help="a .tar of logs (the page's download) or a .jsonl log")
    q.add_argument("--json", action="store_true", help="print what each file gave as JSON")

    q = sub.add_parser("rebuild", help="rebuild the store from the folders of pulled logs (it is a cache of them)")
    common(q, names=False)
    q.add_argument("--dest", action="append", help="a folder of pulled logs to include (as given to pull --dest)")

    q = sub.add_parser("list", help="games in the store")
    common(q, names=False)
    q.add_argument("--unit")
    q.add_argument("--game", help="mg, mim or mms")
    q.add_argument("--json", action="store_true", help="print the games as JSON")

    q = sub.add_parser("show", help="one game as a readable timeline")
    common(q)
    q.add_argument("game", help="game id, log name (00003-mg.jsonl or 00003) or unit/name")
    q.add_argument("--json", action="store_true", help="print the records as JSON")

    q = sub.add_parser("stats", help="per-player statistics: reaction times (median, p10, p90), false starts, wins")
    common(q)
    q.add_argument("--unit")
    q.add_argument("--game", help="mg, mim or mms")
    q.add_argument("--json", action="store_true", help="print the statistics as JSON")

    q = sub.add_parser("export", help="CSV or JSON export")
    common(q)
    q.add_argument("--format", choices=("csv", "json"), default="csv")
    q.add_argument("--what", choices=("games", "players", "events", "reactions"), default="games",
                   help="CSV table (JSON always has everything)")
    q.add_argument("--unit")
    q.add_argument("--game")
    q.add_argument("-o", "--output", help="file (default: standard output)")


def _store(args, folders=None):
    """The store, checked (rebuilt from the folders if missing or damaged); what that did goes to stderr."""
    from pathlib import Path

    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.store import Store, StoreUnusable

    try:
        st = Store.open(args.store, folders=[Path(f) for f in folders or []])
    except StoreUnusable as e:  # a folder, unreadable, read-only: one line, nothing touched
        raise UserError(str(e), EXIT_USAGE) from None
    except Exception as e:  # sqlite3.DatabaseError, OSError: a friendly line, no traceback
        raise UserError("cannot open the store %s: %s" % (args.store or "(default)", e), EXIT_USAGE) from None
    _notes(st)
    return st


def _notes(st) -> None:
    import sys

    from mausbox.shown import shown

    for n in st.notes:
        print(shown(n), file=sys.stderr)
    st.notes.clear()


def _names(args):
    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.report import load_names

    try:
        return load_names(getattr(args, "names", None))
    except ValueError as e:
        raise UserError(str(e), EXIT_USAGE) from None


def run(args) -> int:
    return {"pull": _pull, "list": _list, "show": _show, "stats": _stats, "export": _export,
            "rebuild": _rebuild, "import": _import}[args.logs_cmd](args)


def _import(args) -> int:
    """`logs import FILE...` (mausbox.logimport): exit 0 every log taken in, 1 any refused or damaged."""
    import json
    from pathlib import Path

    from mausbox.cli import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, UserError
    from mausbox.logimport import ImportError_, import_log, read_sources
    from mausbox.shown import shown

    try:
        logs = [src for f in args.files for src in read_sources(Path(f))]
    except ImportError_ as e:
        raise UserError(str(e), EXIT_USAGE) from None
    store = _store(args)
    results = [import_log(store, *src) for src in logs]
    if args.json:
        print(json.dumps([{"source": r.source, "unit": r.unit or None, "error": r.error or None, "new": r.new,
                           "path": str(r.outcome.path) if r.outcome and r.outcome.path else None,
                           "damage": r.damage, "detail": (r.outcome.detail if r.outcome else "") or None}
                          for r in results], indent=1))
    else:
        for r in results:
            if r.error:
                print("%s: REFUSED: %s" % (shown(r.source), shown(r.error)))
                continue
            assert r.outcome is not None
            print("%s: unit %s, %s%s" % (shown(r.source), shown(r.unit), "imported" if r.new else "already here",
                                         "  " + shown(r.outcome.detail) if r.outcome.detail else ""))
            for d in r.damage:
                print("    damaged: %s" % shown(d))
        print("store %s: %d of %d logs in" % (store.path, sum(not r.error for r in results), len(results)))
    return EXIT_OK if all(not r.error and not r.damage for r in results) else EXIT_PROBLEM


def _rebuild(args) -> int:
    store = _store(args, args.dest)
    n = store.rebuild()
    print("store %s: rebuilt from %s: %s" % (store.path, ", ".join(str(f) for f in store.folders()),
                                            plural(n, "game")))
    return 0


def _ports(args) -> list[str]:
    from mausbox.cli import EXIT_NO_UNIT, EXIT_USAGE, UserError
    from mausbox.link import unit_ports

    if args.port:
        return list(dict.fromkeys(args.port))
    found = unit_ports()
    if not found:
        raise UserError("no unit connected (plug it in, or give --port)", EXIT_NO_UNIT)
    if len(found) > 1 and not args.all:
        raise UserError("several boards connected (%s): give --port or --all" % ", ".join(found), EXIT_USAGE)
    return found


def _pull(args) -> int:
    import json
    import sys
    import threading
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    from mausbox import progress
    from mausbox.cli import EXIT_LINK, EXIT_NO_UNIT, EXIT_OK, EXIT_PROBLEM, UserError
    from mausbox.link import UnitLink
    from mausbox.logpull import UnitResult, pull_unit
    from mausbox.shown import json_safe, one_line, shown

    store = _store(args, [args.dest] if args.dest else None)
    ports = [] if args.watch else _ports(args)
    out_lock = threading.Lock()
    show = progress.wanted(args.json) and len(ports) == 1

    def say(port, msg):
        if args.verbose:
            with out_lock:
                print("%s: %s" % (port, one_line(msg)), file=sys.stderr)

    def tell(port, msg):
        with out_lock:
            print("%s: %s" % (port, one_line(msg)), file=sys.stderr)

    def connect(port: str) -> UnitLink:
        return UnitLink(port, timeout=args.timeout, fast=args.baud)

    def one(port: str, copied: bool = False) -> UnitResult:
        try:
            link = connect(port)
        except UserError as e:
            return UnitResult(port, error=str(e), unreachable=True)
        # the label names the file being pulled; the counter is every log's bytes so far, and says so
        bar = progress.Bar(port, 0, enabled=show, scope="in all")
        cur = {"name": None, "base": 0}

        def moved(name, done, size):
            if cur["name"] != name:
                cur["name"] = name
                cur["base"] = bar.done
                bar.label = name
            bar.set(cur["base"] + done, max(bar.total, cur["base"] + size))

        links = [link]

        def reconnect():
            links[0].close()
            links[0] = connect(port)
            return links[0]

        try:
            res = pull_unit(link, store, Path(args.dest) if args.dest else None, mark=not args.no_mark,
                            log=lambda m: say(port, m), port=port, reconnect=reconnect, notice=lambda m: tell(port, m),
                            progress=moved if show else None)
            lk = links[0]
            say(port, "the line ran at %d baud%s" % (lk.rate, " (%s)" % lk.rate_note if lk.rate_note else ""))
            if copied and res.ok:
                try:  # the unit says so and beeps: the teacher unplugs it
                    links[0].request("copied", n=sum(o.status == "pulled" for o in res.outcomes))
                except UserError as e:
                    say(port, "could not tell the unit: %s" % e)
            return res
        finally:
            bar.close()
            links[0].close()

    if args.watch:
        return _watch(args, store, one)
    if len(ports) == 1:
        results = [one(ports[0])]
    else:
        with ThreadPoolExecutor(max_workers=min(32, len(ports))) as ex:  # a thread waits on its port: 30 units, 30 threads
            results = list(ex.map(one, ports))
    def counts(r) -> dict:
        return {"pulled": sum(o.status == "pulled" for o in r.outcomes),
                "already_here": sum(o.status == "skipped" for o in r.outcomes),
                "not_fetched": sum(o.status in ("failed", "refused") for o in r.outcomes),
                "not_marked": sum(o.status == "pulled" and not o.marked for o in r.outcomes),
                "damaged": sum(bool(o.damage) for o in r.outcomes)}

    if args.json:
        print(json_safe(json.dumps([{"port": r.port, "unit": r.unit, "error": r.error or None, "counts": counts(r),
                                     "logs": [
            {"name": o.name, "status": o.status, "path": str(o.path) if o.path else None, "bytes": o.nbytes,
             "retries": o.retries, "damage": o.damage, "finished": o.finished, "marked": o.marked,
             "detail": o.detail or None}
            for o in r.outcomes], "bringup": None if r.bringup is None else {
                "status": r.bringup.status, "path": str(r.bringup.path) if r.bringup.path else None,
                "detail": r.bringup.detail or None}} for r in results], indent=1)))
    else:
        for r in results:
            if r.error:
                print("%s: FAILED: %s" % (r.port, one_line(r.error)))
                continue
            c = counts(r)
            bad = ", ".join("%d %s" % (c[k], w) for k, w in (("not_fetched", "not fetched"), ("not_marked",
                            "not marked pulled on the unit"), ("damaged", "damaged")) if c[k])
            print("%s (unit %s): %d pulled, %d already here%s" % (
                r.port, shown(r.unit), c["pulled"], c["already_here"], "; " + bad if bad else ""))
            for o in r.outcomes:
                if o.status == "pulled":
                    print("  %-22s %7d bytes%s%s" % (shown(o.name), o.nbytes, "  (%d retries)" % o.retries
                                                   if o.retries else "", "  " + one_line(o.detail) if o.detail else ""))
                    for d in o.damage:
                        print("    damaged on the unit: %s" % shown(d))
                elif o.status != "skipped":
                    print("  %s: %s" % (o.status.upper(), one_line(o.detail)))
            if r.bringup is not None:
                b = r.bringup
                print("  bring-up summary: %s" % ("%s, saved as %s" % (one_line(b.detail), shown(str(b.path)))
                                                  if b.status == "pulled" else "FAILED: " + one_line(b.detail)))
    _notes(store)
    if all(r.unreachable for r in results):
        return EXIT_NO_UNIT
    if all(r.error for r in results):
        return EXIT_LINK
    return EXIT_OK if all(r.ok for r in results) else EXIT_PROBLEM


def _watch(args, store, one, poll_s: float = 0.5) -> int:
    """`logs pull --watch`: every unit that appears is pulled at once, in a thread of its own; a line of the
    running table as each finishes; Ctrl-C prints the summary. A unit unplugged and plugged in again is pulled
    again (it may have played since)."""
    import sys
    import threading
    import time

    from mausbox.cli import EXIT_OK, EXIT_PROBLEM
    from mausbox.fleet import label
    from mausbox.link import unit_ports
    from mausbox.shown import one_line, shown

    lock = threading.Lock()
    busy: set[str] = set()
    seen: set[str] = set()  # ports pulled and still plugged in
    done: list = []
    t0 = time.monotonic()

    def run(port: str) -> None:
        t = time.monotonic()
        r = one(port, copied=True)
        with lock:
            busy.discard(port)
            done.append(r)
            pulled = sum(o.status == "pulled" for o in r.outcomes)
            who = label(r.unit, getattr(r, "name", None)) if r.unit else "-"
            res = ("FAILED: " + one_line(r.error)) if r.error else "%d pulled, %d already here%s" % (
                pulled, sum(o.status == "skipped" for o in r.outcomes), "" if r.ok else ", with problems")
            print(shown("%3d  %-28s %-14s %5.1fs  %s" % (len(done), who, port, time.monotonic() - t, res)), flush=True)

    print("watching for units: plug them in one after another (Ctrl-C ends)", flush=True)
    print("%3s  %-28s %-14s %6s  %s" % ("#", "unit", "port", "time", "result"), flush=True)
    try:
        while True:
            now = set(unit_ports())
            with lock:
                seen &= now  # unplugged: pulled again when it comes back
                new = sorted(now - seen - busy)
                busy.update(new)
                seen.update(new)
            for port in new:
                threading.Thread(target=run, args=(port,), daemon=True).start()
            time.sleep(poll_s)
    except KeyboardInterrupt:
        pass
    with lock:
        results = list(done)
        left = sorted(busy)
    units = {r.unit for r in results if r.unit}
    pulled = sum(o.status == "pulled" for r in results for o in r.outcomes)
    failed = [r for r in results if not r.ok]
    print(shown("summary: %d units, %d logs pulled in %.0f s; %s%s" % (
        len(units), pulled, time.monotonic() - t0, "%d with problems (%s)" % (len(failed), ", ".join(
            r.port for r in failed)) if failed else "no problems",
        "; still pulling when stopped: %s" % ", ".join(left) if left else "")), flush=True)
    _notes(store)
    sys.stdout.flush()
    return EXIT_OK if not failed and not left else EXIT_PROBLEM


def _list(args) -> int:
    import json

    from mausbox.shown import shown

    store = _store(args)
    games = store.games(unit=args.unit, game=args.game)
    if args.json:
        print(json.dumps([dict(id=g.id, unit=g.unit, unit_name=store.unit_name(g.id), name=g.name, game=g.game, variant=g.variant, wall=g.wall,
                               records=g.records, status=g.status, reason=g.reason, damaged=bool(g.damage),
                               winners=[p["player"] for p in store.players(g.id) if p["winner"]])
                          for g in games], indent=1))
        return 0
    if not games:
        print("no games in the store yet: mausbox logs pull")
        return 0
    # columns as wide as their widest entry, the time to the minute: a line fits 80 columns (a unit's
    # name, `mausbox name set`, stands before its id, which is cut first)
    from mausbox.fleet import label

    units = {g.id: label(g.unit[:8], store.unit_name(g.id)) for g in games}
    uw = max(4, min(28, max(len(u) for u in units.values())))
    lw = max(3, max(len(g.name) for g in games))
    gw = max(4, max(len(g.game or "?") for g in games))
    fmt = "%4s  %-*s %-*s %-*s %-16s %-9s %s"
    print(fmt % ("id", uw, "unit", lw, "log", gw, "game", "when", "status", "winners"))
    for g in games:
        winners = ",".join("P%d" % p["player"] for p in store.players(g.id) if p["winner"])
        when = (g.wall or "-")[:16].replace("T", " ")
        print(fmt % (g.id, uw, shown(units[g.id][:uw]), lw, shown(g.name), gw, shown(g.game or "?"), shown(when),
                     g.status + ("!" if g.damage else ""), winners or "-"))
    return 0


def _show(args) -> int:
    import json

    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.report import timeline

    store = _store(args)
    try:
        g = store.find(args.game)
    except KeyError as e:
        raise UserError(e.args[0], EXIT_USAGE) from None
    if args.json:
        print(json.dumps(store.events(g.id), indent=1))
    else:
        import re

        from mausbox.shown import shown, wrapped

        # lines that do not fit the terminal wrap under their detail column (--json is never wrapped)
        col = re.compile(r"\s*\S+\s+#\d+\s+\S+\s+")
        for line in timeline(store, g, _names(args)):
            m = col.match(line)
            print("\n".join(wrapped(shown(line), m.end() if m else 2)))
    _notes(store)
    return 1 if g.damage else 0


def _stats(args) -> int:
    import json

    from mausbox.report import collect
    from mausbox.shown import shown

    store = _store(args)
    games, stats = collect(store, _names(args), args.unit, args.game)
    rows = [s.summary() for s in stats]
    if args.json:
        from mausbox.shown import json_safe

        print(json_safe(json.dumps({"games": len(games), "players": rows}, indent=1, ensure_ascii=False)))
        return 0
    from mausbox.shown import width

    print(plural(len(games), "game"))
    # presses: every press of every reveal (late: after the race was decided; locked: ignored by it);
    # times: each player's first press after a reveal, in ms. The numbers take 62 columns, the name the rest
    # of the terminal's width (a long one is cut).
    w = max(6, min(max((len(d["name"]) for d in rows), default=6), width() - 63))
    fmt = "%-*s %5s %4s %5s %7s %4s %6s %5s %6s %5s %5s"
    print(fmt % (w, "player", "games", "wins", "false", "presses", "late", "locked", "timed", "median", "p10",
                 "p90"))

    def f(v):
        return ("-" if v is None else "%.0f" % v)
    for d in rows:
        name = shown(d["name"] if len(d["name"]) <= w else d["name"][:w - 1] + "…")
        print(fmt % (w, name, d["games"], d["wins"], d["false_starts"], d["presses"], d["late"], d["locked"],
                     d["reactions"], f(d["median_ms"]), f(d["p10_ms"]), f(d["p90_ms"])))
    from mausbox.report import reaction_kind

    timed = {gid for s in stats for gid in s.per_game_ms}
    if len({reaction_kind(g.game, g.variant) for g in games if g.id in timed}) > 1:
        # a race and a claim in one median: say where they are apart
        print("note: these times mix kinds of game; `mausbox report` shows each apart")
    return 0


def _export(args) -> int:
    import sys

    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.report import export_csv, export_json

    store = _store(args)
    names = _names(args)
    text = (export_json(store, names, args.unit, args.game) if args.format == "json"
            else export_csv(store, args.what, names, args.unit, args.game))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        except OSError as e:
            raise UserError("cannot write %s: %s" % (args.output, e), EXIT_USAGE) from None
    else:  # a terminal, or a pipe that may end at one: a log's control and bidi characters shown as escapes
        from mausbox.shown import json_safe, shown

        sys.stdout.write(json_safe(text) if args.format == "json" else shown(text, lines=True))
    return 0
