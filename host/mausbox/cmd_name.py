"""`mausbox name`: a unit's name ("Tisch 3"), stored on the unit itself. The unit shows it on its idle menu;
`ports`, `doctor`, `logs list`, the report and the pulled logs' folders show it beside the unit's id."""

from __future__ import annotations

HELP = "name a unit (\"Tisch 3\"): kept on the unit, shown on it and beside its id everywhere"
EXAMPLES = """\
mausbox name set "Tisch 3"
mausbox name set "Tisch 3" --port /dev/ttyUSB0
mausbox name show --all
mausbox name clear --port /dev/ttyUSB1
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    from mausbox.cli import unit_options

    unit_options(p)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    s = sub.add_parser("set", help="give the unit a name (at most 16 characters: one line of its display)")
    s.add_argument("name")
    w = sub.add_parser("show", help="the unit's name (--all: every connected unit's, names two units share flagged)")
    w.add_argument("--all", action="store_true", help="every connected unit")
    c = sub.add_parser("clear", help="take the unit's name away")
    for q in (s, w, c):
        unit_options(q, under=True)


def ask(port: str | None, timeout: float, name: str | None = None, clear: bool = False) -> tuple[dict, dict]:
    """(the unit's hello, its `name` answer), setting the name first when given (or clearing it)."""
    from mausbox.link import UnitLink

    with UnitLink(port, timeout=timeout) as link:
        info = link.hello()
        if name is not None or clear:
            got = link.request("name", name="" if clear else name)
        else:
            got = link.request("name")
    return info, got


def run(args) -> int:
    import json

    from mausbox import fleet
    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.shown import shown

    if args.action is None:
        raise UserError("say what: mausbox name set NAME | show | clear", EXIT_USAGE)
    if args.action == "set":
        from maus.settings.classroom import check_name

        why = check_name(args.name)
        if why:
            raise UserError(f"not a name: {why}", EXIT_USAGE)
    if args.action == "show" and args.all:
        def one(port, row):
            info, got = ask(port, args.timeout)
            row.unit, row.name = info.get("unit"), got.get("name")
            return shown(row.name) if row.name else "(no name: mausbox name set NAME --port %s)" % port

        return fleet.print_rows(fleet.over_all(fleet.all_ports(), one), args.json, "name")
    info, got = ask(args.port, args.timeout, args.name if args.action == "set" else None, args.action == "clear")
    name = got.get("name")
    if args.json:
        print(json.dumps({"unit": info.get("unit"), "name": name}))
    elif args.action == "show":
        print(fleet.label(info.get("unit"), name) if name else f"unit {shown(info.get('unit'))}: no name")
    else:
        print(f"unit {shown(info.get('unit'))} is now " + (f"named {shown(name)!r}" if name else "without a name"))
    return 0
