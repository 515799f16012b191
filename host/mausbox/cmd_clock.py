"""`mausbox clock`: the unit's real-time clock, set from the host.

A board keeps time in its RTC (`machine.RTC().datetime(...)`, lost at power-off). The virtual unit runs
on the host's clock; `clock set` writes `/clock.json` `{"offset_s": <float>}` there, and the simulated
hardware reports wall time as `time.time() + offset_s` (no file: the host's time).
"""

from __future__ import annotations

HELP = "set the unit's clock from this computer (clock set), or compare it (clock show)"

_SET = """import sys,time
if sys.platform=='linux':
 import json
 import os
 os.chdir('/')
 with open('clock.json.tmp','w') as f:f.write(json.dumps({'offset_s':%r-time.time()}))
 os.rename('clock.json.tmp','clock.json')
else:
 import machine
 machine.RTC().datetime(%r)
"""
_SHOW = """import sys,time
o=0
if sys.platform=='linux':
 try:
  import json
  with open('/clock.json') as f:o=json.loads(f.read())['offset_s']
 except (OSError,ValueError,KeyError):
  pass
print(repr(time.localtime(int(time.time()+o))[:6]))
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


def sim_epoch(host_t: float, utc: bool = False) -> float:
    """What the virtual unit's `time.time() + offset_s` must read so that its localtime() (the host's zone)
    shows local time, or UTC with --utc."""
    import time

    return host_t - (time.localtime(host_t).tm_gmtoff if utc else 0)


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
            link.exec(_SET % (sim_epoch(now, utc), rtc_tuple(now, utc)))
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
