"""`mausbox deploy`: the firmware onto a unit, compiled to match it, only what changed."""

from __future__ import annotations

HELP = "copy the firmware to a unit (only changed files), then confirm it boots"
EXAMPLES = """\
mausbox deploy --port /dev/ttyUSB0
mausbox deploy --board esp32-devkitc-6p --json
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    p.add_argument("--port", help="serial port (default: the only unit connected)")
    p.add_argument("--board", help="board file from boards/ to install as /board.json "
                                   "(default: keep the unit's, else esp32-devkitc, or sim on the virtual unit)")
    p.add_argument("--no-mip", action="store_true", help="(no effect: every module the firmware needs is deployed from this computer, no network)")
    p.add_argument("--no-confirm", action="store_true", help="do not soft-reset and wait for the boot line")
    p.add_argument("--romfs", action="store_true", help="put the app into the unit's ROMFS partition (where its "
                                                        "MicroPython has one) so its bytecode runs from flash")
    p.add_argument("--force", action="store_true", help="deploy even to a unit in a game (the game ends unfinished)")
    p.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for each answer of the unit")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args) -> int:
    import json
    from dataclasses import asdict

    from mausbox import progress
    from mausbox.deploy import deploy, deploy_romfs
    from mausbox.link import UnitLink
    from mausbox.shown import shown

    # what deploy says may quote the unit (the paths it lists, its answers): escaped
    say = (lambda *a: None) if args.json else (lambda *a: print(*(shown(x) for x in a)))
    bar = progress.Bar("deploy", 0, enabled=progress.wanted(args.json))
    quiet = bar.enabled  # one bar instead of a line per file

    def tell(*a):
        if not quiet or not a or not str(a[0]).startswith("  sent "):
            bar.close()
            say(*a)

    with UnitLink(args.port, timeout=args.timeout, recover=False) as link:
        try:
            if args.romfs:
                report = deploy_romfs(link, args.board, say=say, force=args.force)
            else:
                report = deploy(link, args.board, say=tell, confirm_s=0 if args.no_confirm else 20,
                                mip=not args.no_mip, force=args.force, progress=lambda done, total: bar.set(done, total))
        finally:
            bar.close()
    if args.json:
        print(json.dumps(asdict(report), indent=2))
        return 0
    for note in report.notes:
        print(f"note: {shown(note)}")
    done = f"{len(report.sent)} files sent ({report.bytes_sent} bytes over the link), {report.unchanged} unchanged"
    if report.ready:
        print(f"deploy: {done}; the unit booted: Mausbox {shown(report.ready)}")
    else:
        print(f"deploy: {done}")
    return 0
