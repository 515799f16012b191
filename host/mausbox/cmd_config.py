"""`mausbox config`: the unit's settings, checked against the firmware's schema on both sides."""

from __future__ import annotations

HELP = "show or change a unit's settings: config get [KEY] | set KEY VALUE | reset"
EXAMPLES = """\
mausbox config get
mausbox config get lang --port /dev/ttyUSB0
mausbox config set lang en
mausbox config reset --yes
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each

def add_parser(p):
    from mausbox.cli import unit_options

    unit_options(p)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    g = sub.add_parser("get", help="show all settings, or one")
    g.add_argument("key", nargs="?")
    s = sub.add_parser("set", help="change one setting")
    s.add_argument("key")
    s.add_argument("value")
    r = sub.add_parser("reset", help="every setting back to its default")
    r.add_argument("--yes", action="store_true", help="do not ask")
    for q in (g, s, r):
        unit_options(q, under=True)


def describe(key: str) -> str:
    from maus.settings.values import SCHEMA

    spec = SCHEMA[key]
    d = spec[0]
    if type(d) is bool:
        return "true|false"
    if type(d) is int:
        return f"{spec[1]}..{spec[2]}"
    return "|".join(spec[1])


def parse_value(key: str, text: str):
    """The typed value for a setting, checked against the schema here, before anything is sent."""
    from maus.settings.values import SCHEMA, check

    from mausbox.cli import EXIT_USAGE, UserError

    if key not in SCHEMA:
        raise UserError(f"no setting {key!r}; the settings are: {', '.join(sorted(SCHEMA))}", EXIT_USAGE)
    d = SCHEMA[key][0]
    value: object = text
    if type(d) is bool:
        low = text.strip().lower()
        if low not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
            raise UserError(f"{key} must be true or false, not {text!r}", EXIT_USAGE)
        value = low in ("true", "on", "yes", "1")
    elif type(d) is int:
        try:
            value = int(text, 10)
        except ValueError:
            raise UserError(f"{key} must be a whole number ({describe(key)}), not {text!r}", EXIT_USAGE) from None
    why = check(key, value)
    if why:
        raise UserError(f"{key} {why}", EXIT_USAGE)
    return value


def show(value) -> str:
    import json

    return json.dumps(value)


def run(args) -> int:
    import json

    from mausbox.cli import EXIT_LINK, EXIT_PROBLEM, UserError
    from mausbox.link import UnitError, UnitLink
    from mausbox.shown import shown

    value = None
    if args.action == "set":
        value = parse_value(args.key, args.value)
    if args.action == "get" and args.key:
        parse_value_key_only(args.key)
    if args.action == "reset" and not args.yes:
        try:
            said = input("Reset every setting of the unit to its default? [y/N] ")
        except (EOFError, RuntimeError):  # stdin at its end or closed (a script, a pipe): no answer is no
            print()
            said = ""
        if said.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return EXIT_PROBLEM
    with UnitLink(args.port, timeout=args.timeout) as link:
        link.hello()
        try:
            if args.action == "set":
                out = link.request("set", key=args.key, value=value)
                print(f"{args.key} = {show(value)}" + ("" if out.get("changed") else " (unchanged)"))
                return 0
            if args.action == "reset":
                link.request("reset_settings")
                print("settings reset to defaults")
                return 0
            got = link.request("settings")
        except UnitError as e:
            raise UserError(f"the unit refused: {e.msg}", EXIT_PROBLEM) from None
    values, source, message = got.get("values") or {}, got.get("source"), got.get("message")
    if not isinstance(values, dict):
        raise UserError(f"{link.port}: the unit's settings answer is garbled (values: {type(values).__name__})",
                        EXIT_LINK)
    if args.key:
        print(json.dumps({args.key: values.get(args.key)}) if args.json else shown(show(values.get(args.key))))
        return 0
    if args.json:
        print(json.dumps({"values": values, "source": source, "message": message}, indent=2))
        return 0
    from maus.settings.values import SCHEMA

    for k in sorted(values):
        default = SCHEMA[k][0] if k in SCHEMA else None
        mark = "" if values[k] == default else "   (default " + show(default) + ")"
        print(f"{shown(k):<22} {shown(show(values[k])):<14} {describe(k) if k in SCHEMA else ''}{shown(mark)}")
    print(f"-- {shown(message)}")
    return 0


def parse_value_key_only(key: str) -> None:
    from maus.settings.values import SCHEMA

    from mausbox.cli import EXIT_USAGE, UserError

    if key not in SCHEMA:
        raise UserError(f"no setting {key!r}; the settings are: {', '.join(sorted(SCHEMA))}", EXIT_USAGE)
