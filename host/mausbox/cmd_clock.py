"""`mausbox clock`: the unit's real-time clock, set from the host while the unit plays.

A board keeps time in its RTC (`machine.RTC().datetime(...)`, lost at power-off); the virtual unit keeps an
offset from the host's clock in `/clock.json`. Either way the host sends the `clock` request with the time in
the RTC's order and the unit answers with its wall clock (docs/protocol.md).
"""

from __future__ import annotations

HELP = "set the unit's clock from this computer (clock set), or compare it (clock show)"
EXAMPLES = """\
mausbox clock show
mausbox clock set --port /dev/ttyUSB0
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    from mausbox.cli import unit_options

    unit_options(p)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    s = sub.add_parser("set", help="set the unit's clock to this computer's time")
    s.add_argument("--utc", action="store_true", help="set UTC instead of local time")
    w = sub.add_parser("show", help="show the unit's time and how far it is off")
    for q in (s, w):
        unit_options(q, under=True)


def rtc_tuple(t: float, utc: bool = False) -> tuple:
    """machine.RTC().datetime() order: (year, month, day, weekday 0=Monday, hour, minute, second, subseconds)."""
    import time

    tm = time.gmtime(t) if utc else time.localtime(t)
    return (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_wday, tm.tm_hour, tm.tm_min, tm.tm_sec, 0)


def run(args) -> int:
    import json
    import time

    from mausbox.cli import EXIT_LINK, UserError
    from mausbox.link import UnitLink

    utc = getattr(args, "utc", False)
    with UnitLink(args.port, timeout=args.timeout) as link:
        link.hello()
        if args.action == "set":
            # whole seconds: the RTC's subseconds are not settable; wait for the next second to start
            time.sleep(1 - time.time() % 1)
            got = link.request("clock", rtc=list(rtc_tuple(time.time(), utc)))
        else:
            got = link.request("clock")
    wall = got.get("wall")
    if not wall:
        if args.action == "show":
            print("unit clock: not set (run `mausbox clock set`)")
            return 1
        raise UserError(f"{link.port}: the unit did not take the time", EXIT_LINK)
    try:
        unit_t = time.mktime(time.strptime(wall, "%Y-%m-%dT%H:%M:%S"))
    except (TypeError, ValueError, OverflowError):
        raise UserError(f"{link.port}: the unit's clock answer is garbled: {wall!r}", EXIT_LINK) from None
    host = time.gmtime() if utc else time.localtime()
    drift = round(unit_t - time.mktime(time.struct_time(tuple(host[:6]) + (0, 0, -1))))
    when = wall.replace("T", " ")  # it parsed as a time: nothing but digits and separators
    if args.json:
        print(json.dumps({"unit_time": when, "off_by_s": drift}))
    else:
        print(f"unit clock: {when} ({'+' if drift >= 0 else ''}{drift} s from this computer)")
    return 0
