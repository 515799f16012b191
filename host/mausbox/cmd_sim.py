"""`mausbox sim`: the virtual unit — the real firmware on the MicroPython unix port, simulated hardware."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HELP = "run the virtual unit: interactive, a scenario file, a log replay, or a serial pty"


def add_parser(p):
    p.add_argument("--root", help="folder that stands in for the unit's flash (default: per-user data folder)")
    p.add_argument("--scenario", metavar="FILE", help="run a scenario file headless in virtual time, then exit")
    p.add_argument("--replay", metavar="LOG", help="replay a pulled game log and check every verdict")
    p.add_argument("--serial", action="store_true", help="expose a pseudo-terminal that speaks the MicroPython REPL")
    p.add_argument("--link", metavar="PATH", help="with --serial: also make PATH a symlink to the pty")
    p.add_argument("--baud", type=int, help="with --serial: limit throughput like a UART at N baud")
    p.add_argument("--exec-delay-ms", type=int, default=0, help="with --serial: delay each raw-REPL exec by N ms")
    p.add_argument("--heap", default=None, help="MicroPython heap size (default %(default)s)")
    p.add_argument("--headless", action="store_true", help="with --serial: no terminal UI")
    p.add_argument("-v", "--verbose", action="store_true", help="print the unit's console (events, prompts)")
    p.add_argument("--json", action="store_true", help="scenario/replay result as JSON")


def _root(args) -> Path:
    from mausbox.paths import data_home

    return Path(args.root).expanduser().resolve() if args.root else data_home() / "sim"


def run(args) -> int:
    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.sim import run as simrun

    heap = args.heap or simrun.DEFAULT_HEAP
    root = _root(args)
    if args.scenario:
        path = Path(args.scenario)
        if not path.is_file():
            raise UserError(f"no scenario file {path}", EXIT_USAGE)
        try:
            rc, lines = simrun.run_scenario(path, root, heap=heap, echo=print if args.verbose else None)
        except simrun.ScenarioError as e:
            raise UserError(str(e), EXIT_USAGE) from None
        return _report(root, rc, lines, args)
    if args.replay:
        from mausbox.sim import replay as simreplay

        return simreplay.replay(Path(args.replay), root, heap=heap, as_json=args.json)
    from mausbox.sim import tui as simtui

    return simtui.main(root, heap=heap, serial=args.serial, link=args.link, baud=args.baud,
                       exec_delay_ms=args.exec_delay_ms, headless=args.headless)


def _report(root: Path, rc: int, lines: list[str], args) -> int:
    from mausbox.sim import run as simrun

    games: list[dict] = []
    for log in simrun.logs_in(root):
        end: dict | None = None
        for raw in log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if rec.get("type") in ("game_end", "game_abort"):
                end = rec
        games.append({"log": str(log), "end": end})
    if args.json:
        print(json.dumps({"exit": rc, "games": games}, indent=2))
    else:
        for g in games[-5:]:
            end = g["end"] or {}
            assert isinstance(end, dict)
            if end.get("type") == "game_end":
                print(f"{Path(g['log']).name}: scores {end.get('scores')}, winners {end.get('winners')} "
                      f"({end.get('why') or end.get('reason')})")
            else:
                print(f"{Path(g['log']).name}: {end.get('type', 'no end record')} {end.get('reason', '')}")
    if rc != 0:
        tail = "\n".join(lines[-20:])
        print(f"the virtual unit stopped with exit code {rc}:\n{tail}", file=sys.stderr)
        return 1
    return 0
