"""`mausbox clock`: the unit's real-time clock, set from the host.

A board keeps time in its RTC (`machine.RTC().datetime(...)`, lost at power-off). The virtual unit's
machine.RTC keeps it as an offset from the host's clock in `/clock.json` `{"offset_s": <float>}`, which
the simulated hardware reads too (no file: the host's time).
"""

from __future__ import annotations

HELP = "set the unit's clock from this computer (clock set), or compare it (clock show)"

_SET = """import machine
machine.RTC().datetime(%r)
"""
_SHOW = """import machine
d=machine.RTC().datetime()
print(repr(d[:3]+d[4:7]))
"""


def add_parser(p):
    p.add_argument("--port", help="serial port (default: the only unit connected)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    s = sub.add_parser("set", help="set the unit's clock to this computer's time")
    s.add_argument("--utc", action="store_true", help="set UTC instead of local time")
    sub.add_parser("show", help="show the unit's time and how far it is off")


def rtc_tuple(t: float, utc: bool = False) -> tuple:
    """machine.RTC().datetime() order: (year, month, day, weekday 0=Monday, hour, minute, second, subseconds)."""
    import time

    tm = time.gmtime(t) if utc else time.localtime(t)
    return (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_wday, tm.tm_hour, tm.tm_min, tm.tm_sec, 0)


def run(args) -> int:
    import ast
    import json
    import time

    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.transport import UnitLink

    if args.action is None:
        raise UserError("say what to do: clock set, or clock show", EXIT_USAGE)
    utc = getattr(args, "utc", False)
    with UnitLink(args.port) as link:
        link.enter_raw(soft_reset=True)
        if args.action == "set":
            now = time.time()
            link.exec(_SET % (rtc_tuple(now, utc),))
        parts = ast.literal_eval(link.exec(_SHOW).decode().strip())
    host = time.gmtime() if utc else time.localtime()
    drift = round(time.mktime(time.struct_time(tuple(parts) + (0, 0, -1)))
                  - time.mktime(time.struct_time(tuple(host[:6]) + (0, 0, -1))))
    shown = "%04d-%02d-%02d %02d:%02d:%02d" % tuple(parts)
    if args.json:
        print(json.dumps({"unit_time": shown, "off_by_s": drift}))
    else:
        print(f"unit clock: {shown} ({'+' if drift >= 0 else ''}{drift} s from this computer)")
    return 0
