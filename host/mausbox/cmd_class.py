"""`mausbox class`: a classroom's seats. `class seats "Tisch 3" P1=Anna P2=Ben` tells the unit named "Tisch 3"
who sits at which button; the unit keeps it until it is changed and writes it into each game's start, so a
report counts each game for the children who sat there then (docs/log-format.md: game_start `seats`)."""

from __future__ import annotations

HELP = "who sits where: a unit's seats (P1=Anna ...), kept on the unit and recorded in each game's log"
EXAMPLES = """\
mausbox class seats "Tisch 3" P1=Anna P2=Ben P3=Cleo
mausbox class seats "Tisch 3"
mausbox class seats --port /dev/ttyUSB0 P1=Anna
mausbox class seats "Tisch 3" --clear
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    from mausbox.cli import unit_options

    unit_options(p)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    s = sub.add_parser("seats", help="set (or show) who sits at which button of a unit")
    s.add_argument("words", nargs="*", metavar="UNIT P1=NAME", help="the unit's name (`mausbox name set`; or "
                   "--port), then seat=child pairs; none: show the seats")
    s.add_argument("--clear", action="store_true", help="no seats: players are counted by unit and button again")
    unit_options(s, under=True)


def parse_seats(words: list[str]) -> dict[str, str]:
    """["P1=Anna", "2=Ben"] -> {"1": "Anna", "2": "Ben"}; UserError for anything else."""
    from maus.settings.classroom import check_seats

    from mausbox.cli import EXIT_USAGE, UserError

    out: dict[str, str] = {}
    for w in words:
        k, eq, v = w.partition("=")
        k = k.strip().upper().removeprefix("P")
        if not eq or not k.isdigit():
            raise UserError(f"not a seat: {w!r} (want P1=Anna)", EXIT_USAGE)
        if k in out:
            raise UserError(f"seat P{k} is given twice", EXIT_USAGE)
        out[k] = v.strip()
    why = check_seats(out)
    if why:
        raise UserError(f"seats: {why}", EXIT_USAGE)
    return out


def find_named(name: str, timeout: float) -> str:
    """The port of the connected unit named `name` (`mausbox name set`); UserError if none or several are."""
    from mausbox import fleet
    from mausbox.cli import EXIT_NO_UNIT, EXIT_USAGE, UserError

    ports = fleet.all_ports()
    found = {p: fleet.probe(p, timeout) for p in ports}
    hits = [p for p, r in found.items() if (r.get("name") or "").casefold().strip() == name.casefold().strip()]
    if not hits:
        have = ", ".join(sorted(str(r.get("name")) for r in found.values() if r.get("name"))) or "none"
        raise UserError(f"no connected unit is named {name!r} (named: {have}); `mausbox name show --all` lists them",
                        EXIT_NO_UNIT)
    if len(hits) > 1:
        raise UserError(f"{len(hits)} units are named {name!r} ({', '.join(hits)}): give --port, and "
                        "`mausbox name set` one of them", EXIT_USAGE)
    return hits[0]


def run(args) -> int:
    import json

    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.link import UnitLink
    from mausbox.shown import shown

    if args.action != "seats":
        raise UserError("say what: mausbox class seats UNIT P1=NAME ...", EXIT_USAGE)
    words = list(args.words)
    port = args.port
    if words and "=" not in words[0]:
        port = find_named(words.pop(0), min(args.timeout, 3.0)) if not port else port
    seats = parse_seats(words)
    if seats and args.clear:
        raise UserError("--clear or seats, not both", EXIT_USAGE)
    with UnitLink(port, timeout=args.timeout) as link:
        info = link.hello()
        got = link.request("seats", seats=seats) if seats or args.clear else link.request("seats")
    now = got.get("seats") or {}
    if args.json:
        print(json.dumps({"unit": info.get("unit"), "name": info.get("name"), "seats": now}))
        return 0
    from mausbox.fleet import label

    who = label(info.get("unit"), info.get("name"))
    if not now:
        print(f"{who}: no seats (players are counted by unit and button)")
    else:
        print(f"{who}: " + ", ".join(f"P{k}={shown(v)}" for k, v in sorted(now.items())))
    return 0
