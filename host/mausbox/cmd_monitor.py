"""`mausbox monitor`: what the unit is doing, live, through the host service's event stream (never stops a game)."""

from __future__ import annotations

HELP = "show a unit's game events live (never interrupts it); waits through resets and replugs"
EXAMPLES = """\
mausbox monitor
mausbox monitor --port /dev/ttyUSB0 --json --count 20
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    p.add_argument("--port", help="serial port (default: the only unit connected)")
    p.add_argument("--json", action="store_true", help="print each event as one JSON object per line")
    p.add_argument("--raw", action="store_true", help="also print the unit's console lines")
    p.add_argument("--count", type=int, help="stop after this many events")
    p.add_argument("--seconds", type=float, help="stop after this many seconds")
    p.add_argument("--timeout", type=float, default=5.0,
                   help="seconds to wait for each answer of the unit; silent that long, it counts as gone "
                        "(default %(default)s)")


def format_line(line: str, raw: bool = False) -> tuple[dict | None, str | None]:
    """A console line -> (event, text to show). `EV <record>` lines (what the unit prints when no monitor has
    subscribed) are events; other lines show with --raw, the boot line and self-test findings always."""
    import json

    if line.startswith("EV "):
        try:
            ev = json.loads(line[3:])
        except ValueError:
            return None, f"(garbled event) {line}"
        return ev, line[3:]
    if line.startswith(("MAUSBOX READY", "MAUSBOX SAFE MODE", "SELFTEST", "SAY ")) or raw:
        return None, line
    return None, None


def run(args) -> int:
    import json
    import sys
    import time

    from mausbox.cli import UserError
    from mausbox.link import LinkError, LinkLost, NoService, UnitLink, resolve_port

    port = resolve_port(args.port)
    end = time.monotonic() + args.seconds if args.seconds else None
    events = 0
    first = True
    quiet_note = ""
    from mausbox.shown import one_line
    from mausbox.shown import shown as esc

    def left() -> float | None:
        return None if end is None else max(0.0, end - time.monotonic())

    def show(ev) -> bool:
        nonlocal events
        events += 1
        if isinstance(ev, bytes):
            ev = {"garbled": ev.decode("utf-8", "replace")}
        text = json.dumps(ev, separators=(",", ":"))  # ASCII: no control or bidi character reaches the terminal
        print(text if args.json else f"{time.strftime('%H:%M:%S')}  {text}", flush=True)
        return bool(args.count and events >= args.count)

    while end is None or time.monotonic() < end:
        try:
            link = UnitLink(port, timeout=args.timeout, recover=False)
        except UserError as e:
            if first or "busy" in str(e) or "permission" in str(e):
                raise
            time.sleep(0.5)  # unplugged: wait for it to come back
            continue
        pending = bytearray()
        stop = [False]

        def text(t: bytes, pending=pending, stop=stop) -> None:
            pending.extend(t)
            while b"\n" in pending:
                i = pending.index(b"\n")
                line = pending[:i].decode("utf-8", "replace").rstrip("\r")
                del pending[:i + 1]
                ev, shown = format_line(line, args.raw)
                if line.startswith("MAUSBOX READY"):
                    print(f"-- unit (re)started: {esc(line[8:])}", file=sys.stderr)
                elif ev is not None:
                    stop[0] = stop[0] or show(ev)
                elif shown is not None and not args.json:
                    print(f"{time.strftime('%H:%M:%S')}  | {esc(shown)}", flush=True)

        link.on_text = text
        try:
            info = link.hello()
            if first:
                print(f"-- monitoring {port}: unit {esc(info.get('unit'))}, Mausbox {esc(info.get('fw'))} "
                      "(Ctrl-C to stop)",
                      file=sys.stderr)
                first = False
            elif quiet_note:
                print("-- the unit answers again", file=sys.stderr)
            quiet_note = ""
            for ev in link.events(seconds=left()):
                if show(ev) or stop[0]:
                    return 0
            if stop[0]:
                return 0
        except LinkLost:
            print(f"-- lost {port}; waiting for the unit to come back", file=sys.stderr)
            first = False
        except NoService:
            if first:
                raise
            note = "-- the unit shows its REPL (the app is not running); waiting"
            if quiet_note != note:
                print(note, file=sys.stderr)
            quiet_note = note
            time.sleep(1)
        except LinkError as e:
            if first:
                raise
            note = f"-- the unit does not answer ({one_line(e)}); waiting"
            if quiet_note != note:
                print(note, file=sys.stderr)
            quiet_note = note
        finally:
            link.close()
        if stop[0]:
            return 0
    return 0
