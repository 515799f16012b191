"""`mausbox sim`: the virtual unit."""

from __future__ import annotations

HELP = "run the virtual unit: interactive, a scenario file, a log replay, or a serial pty"


def add_parser(p):
    p.add_argument("--root", help="folder that stands in for the unit's flash")


def run(args) -> int:
    print("The virtual unit is not built yet (issue: virtual unit).")
    return 0
