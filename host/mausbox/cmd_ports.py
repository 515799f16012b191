"""`mausbox ports`: connected units and likely ESP32 boards."""

from __future__ import annotations

HELP = "list connected units and likely ESP32 boards, with their firmware version"

_ASK = """import sys
try:
 import maus
 v=maus.VERSION
except ImportError:
 v=None
print(repr((v,'.'.join(str(x) for x in sys.implementation.version[:3]),sys.platform)))
"""


def add_parser(p):
    p.add_argument("--json", action="store_true", help="print the ports as JSON")
    p.add_argument("--no-probe", action="store_true",
                   help="do not ask boards for their firmware (asking stops a running game briefly)")
    p.add_argument("--all", action="store_true", help="also list serial ports that are not likely ESP32 boards")


def probe(device: str, timeout: float = 3) -> dict:
    """Ask a port what runs on it: Mausbox version, MicroPython version. Never raises."""
    import ast

    from mausbox.cli import UserError
    from mausbox.transport import UnitLink

    try:
        with UnitLink(device, timeout=timeout) as link:
            link.enter_raw()
            out = link.exec(_ASK, timeout=timeout)
            version, mpy, platform = ast.literal_eval(out.decode().strip())
    except UserError as e:
        return {"state": "busy" if "busy" in str(e) else "no answer", "detail": str(e)}
    except (ValueError, SyntaxError, UnicodeDecodeError):
        return {"state": "no answer", "detail": "garbled answer"}
    if version is None:
        return {"state": "micropython", "micropython": mpy, "platform": platform}
    return {"state": "unit", "firmware": version, "micropython": mpy, "platform": platform}


def run(args) -> int:
    import json
    from dataclasses import asdict

    from mausbox.transport import list_ports

    rows = []
    for p in list_ports():
        if not (p.likely_esp32 or args.all):
            continue
        row = asdict(p)
        row["usb_id"] = f"{p.vid:04X}:{p.pid:04X}" if p.vid is not None and p.pid is not None else None
        if p.likely_esp32 and not args.no_probe:
            row.update(probe(p.device))
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no units or ESP32 boards found (plug one in, or run `mausbox sim --serial`)")
        return 0
    for r in rows:
        what = {"unit": f"Mausbox {r.get('firmware')} (MicroPython {r.get('micropython')})",
                "micropython": f"MicroPython {r.get('micropython')}, no Mausbox firmware: run `mausbox deploy`",
                "busy": "busy (another program has it open)",
                "no answer": "no MicroPython answer: run `mausbox flash`"}.get(r.get("state", ""), "")
        usb = r["usb_id"] or "-"
        print(f"{r['device']:<22} {r['kind']:<14} {usb:<10} {what or r['description']}")
    return 0
