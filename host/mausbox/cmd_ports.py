"""`mausbox ports`: connected units and likely ESP32 boards, found without disturbing them."""

from __future__ import annotations

HELP = "list connected units and likely ESP32 boards, with their firmware and what they are doing"
EXAMPLES = """\
mausbox ports
mausbox ports --json --timeout 5
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    p.add_argument("--json", action="store_true", help="print the ports as JSON")
    p.add_argument("--no-probe", action="store_true", help="only USB ids: do not ask the boards who they are")
    p.add_argument("--all", action="store_true", help="also list serial ports that are not likely ESP32 boards")
    p.add_argument("--timeout", type=float, default=3.0,
                   help="seconds to wait for each board's answer (default %(default)s)")


def run(args) -> int:
    import json
    from dataclasses import asdict

    from mausbox.fleet import probe
    from mausbox.link import list_ports

    rows = []
    for p in list_ports():
        if not (p.likely_esp32 or args.all):
            continue
        row = asdict(p)
        row["usb_id"] = f"{p.vid:04X}:{p.pid:04X}" if p.vid is not None and p.pid is not None else None
        if p.likely_esp32 and not args.no_probe:
            row.update(probe(p.device, args.timeout))
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no units or ESP32 boards found (plug one in, or run `mausbox sim --serial`)")
        return 0
    from mausbox.fleet import is_shared, label, shared_names
    from mausbox.shown import shown, wrapped

    shared = shared_names((r.get("unit"), r.get("name")) for r in rows if r.get("state") == "unit")
    dev_w = max(len(r["device"]) for r in rows)
    kind_w = max(len(r["kind"]) for r in rows)
    usb_w = max(len(r["usb_id"] or "-") for r in rows)
    for r in rows:
        doing = r.get("mode") or ""
        if r.get("game"):
            doing = f"playing {r['game']}" if doing == "play" else f"{doing}, {r['game']}"
        what = {"unit": f"Mausbox {r.get('firmware')} (MicroPython {r.get('micropython')}), unit "
                        f"{label(r.get('unit'), r.get('name'))}" + (f", {doing}" if doing else "")
                        + (" -- !! another unit has this name" if is_shared(r.get("name"), shared) else ""),
                "micropython": "MicroPython REPL, the app is not running: `mausbox doctor` says why",
                "busy": "busy (another program has it open)",
                "no answer": "no answer: no Mausbox firmware (`mausbox deploy`), or no MicroPython (`mausbox flash`)"
                }.get(r.get("state", ""), "")
        usb = r["usb_id"] or "-"
        # what the port holds wraps under its own column; on a narrow terminal, under the port
        head = f"{r['device']:<{dev_w}}  {r['kind']:<{kind_w}}  {usb:<{usb_w}}  "
        indent = len(head) if len(head) <= 40 else 4
        print("\n".join(wrapped(head + shown(what or r["description"]), indent)))
    return 0
