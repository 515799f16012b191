"""`mausbox monitor`: the unit's console events, live, without interrupting the game."""

from __future__ import annotations

HELP = "show the events a unit prints while it plays (never interrupts it); reconnects after a reset"


def add_parser(p):
    p.add_argument("--port", help="serial port (default: the only unit connected)")
    p.add_argument("--json", action="store_true", help="print each event as one JSON object per line")
    p.add_argument("--raw", action="store_true", help="print every console line, not only events")
    p.add_argument("--count", type=int, help="stop after this many events")
    p.add_argument("--seconds", type=float, help="stop after this many seconds")


def format_line(line: str, raw: bool = False) -> tuple[dict | None, str | None]:
    """A console line -> (event, text to show). Events are `EV <compact JSON>`; other lines show with --raw,
    and the boot line and self-test findings always show."""
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

    import serial  # type: ignore[import-untyped]

    from mausbox.cli import EXIT_NO_UNIT
    from mausbox.transport import BAUD, open_error, resolve_port

    port = resolve_port(args.port)
    end = time.monotonic() + args.seconds if args.seconds else None
    events = 0
    first = True
    buf = b""
    while True:
        try:
            ser = serial.Serial(port, BAUD, timeout=0.2, exclusive=True)
        except (OSError, serial.SerialException) as e:
            err = open_error(port, e)
            if first or "busy" in str(err) or "permission" in str(err):
                raise err from None
            if end and time.monotonic() > end:
                return 0
            time.sleep(0.5)  # unplugged: wait for it to come back
            continue
        if not first:
            print(f"-- reconnected to {port}", file=sys.stderr)
        else:
            print(f"-- monitoring {port} (Ctrl-C to stop)", file=sys.stderr)
        first = False
        try:
            while True:
                if end and time.monotonic() > end:
                    return 0
                chunk = ser.read(max(1, ser.in_waiting))
                buf += chunk
                while b"\n" in buf:
                    raw_line, buf = buf.split(b"\n", 1)
                    line = raw_line.decode("utf-8", "replace").rstrip("\r")
                    ev, text = format_line(line, args.raw)
                    if line.startswith("MAUSBOX READY"):
                        print(f"-- unit (re)started: {line[8:]}", file=sys.stderr)
                        continue
                    if ev is not None:
                        events += 1
                        print(json.dumps(ev, separators=(",", ":")) if args.json
                              else f"{time.strftime('%H:%M:%S')}  {text}", flush=True)
                        if args.count and events >= args.count:
                            return 0
                    elif text is not None and not args.json:
                        print(f"{time.strftime('%H:%M:%S')}  | {text}", flush=True)
        except (OSError, serial.SerialException):
            print(f"-- lost {port}; waiting for the unit to come back", file=sys.stderr)
            buf = b""
        finally:
            try:
                ser.close()
            except (OSError, serial.SerialException):
                pass
    return EXIT_NO_UNIT
