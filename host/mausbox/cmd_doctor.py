"""`mausbox doctor`: what a unit found at boot (its /status.json) and what to do about each finding."""

from __future__ import annotations

HELP = "check a unit: port, firmware, free flash, RFID reader, piezo, stuck buttons, safe mode (never stops a game)"
EXAMPLES = """\
mausbox doctor
mausbox doctor --port /dev/ttyUSB0 --json
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each

LOW_FLASH = 64 * 1024  # below this a game log may not fit
PIEZO_RANGE = (2000, 60000)  # a baseline outside means the input floats or is shorted


def add_parser(p):
    from mausbox.cli import unit_options

    unit_options(p)


def diagnose(status: dict | None, micropython: str, free_flash: int | None, host_version: str,
             live: dict | None = None) -> list[dict]:
    """Findings: each {"check", "ok", "detail", "fix"}. Pure, so every rule is testable without a unit. `live`:
    the unit's answer to `status` now ("boot": this boot's id, "crashes": counted in a row), to tell a
    status.json of an earlier boot from this boot's."""
    out = []

    def add(check, ok, detail, fix=""):
        out.append({"check": check, "ok": ok, "detail": detail, "fix": "" if ok else fix})

    add("micropython", True, f"MicroPython {micropython}")
    now = (live or {}).get("boot")
    if now and status is not None and status.get("boot") != now:
        crashes = (live or {}).get("crashes")
        add("boot", False, "this boot did not get as far as its self-test (a crash or a hang while booting"
            + (f"; {crashes} boot(s) in a row so far" if isinstance(crashes, int) else "")
            + "): the unit's status.json is from an earlier boot, not shown",
            "watch it boot with `mausbox monitor`; `mausbox deploy` repairs a broken firmware")
        return out
    if status is None:
        add("firmware", False, "no /status.json: the firmware has not booted on this unit",
            "run `mausbox deploy`, then `mausbox monitor` to watch it boot")
        return out
    status = _typed(status)
    v = status.get("version")
    add("firmware", v == host_version, f"Mausbox {v}" + ("" if v == host_version else f" (this computer has {host_version})"),
        "run `mausbox deploy` to bring the unit up to date")
    add("board", bool(status.get("board")), f"board {status.get('board')}",
        "run `mausbox deploy --board NAME` to install a board file")
    free = status.get("free_bytes", free_flash)
    if free is None:
        free = free_flash if isinstance(free_flash, int) else None
    add("flash", free is not None and free >= LOW_FLASH,
        f"{free // 1024} KB free" if free is not None else "free space unknown",
        "pull the logs (`mausbox logs pull`), then delete old ones on the unit")
    if status.get("safe_mode"):
        add("safe mode", False, f"the unit is in safe mode after {status.get('crashes', '?')} crashes in a row",
            "pull the logs, run `mausbox deploy`, then in `mpremote repl`: "
            "import maus.unit; maus.unit.clear_safe_mode()")
        return out
    add("safe mode", True, "normal start")
    rv = status.get("rfid_version")
    known = {0x91: "MFRC522 v1.0", 0x92: "MFRC522 v2.0", 0x88: "FM17522 clone", 0x12: "counterfeit MFRC522"}
    add("rfid", rv not in (None, 0, 0xFF),
        f"reader version 0x{rv:02X} ({known.get(rv, 'unknown chip')})" if isinstance(rv, int) and rv not in (0, 0xFF)
        else "the RFID reader did not answer",
        "check the reader's SPI wiring (SCK, MOSI, MISO, SDA/CS, RST as in board.json) and that it gets 3.3 V")
    pb = status.get("piezo_baseline")
    add("piezo", pb is not None and PIEZO_RANGE[0] <= pb <= PIEZO_RANGE[1],
        f"baseline {pb}" if pb is not None else "no piezo reading",
        "check the piezo disc's cable and its bleed resistor (1 MOhm to ground); a baseline near 0 or 65535 "
        "means a short or an open input")
    stuck = status.get("stuck") or []
    add("buttons", not stuck, "no button held at boot" if not stuck else
        "held at boot: player " + ", ".join(str(p) for p in stuck),
        "release the button(s); if none is pressed, look for a short or a pinched cable on that input")
    for p in status.get("problems") or []:
        if not any(w in p for w in ("rfid", "stuck", "held at boot", "piezo")):
            add("self-test", False, p, "see docs/host.md (doctor)")
    return out


_TYPES = {"version": str, "board": str, "free_bytes": int, "safe_mode": bool, "crashes": int, "rfid_version": int,
          "piezo_baseline": int, "stuck": list, "problems": list}


def _typed(status: dict) -> dict:
    """The unit's status with every field of the wrong type dropped (a garbled or hostile status.json); list
    items made text."""
    out = {}
    for k, v in status.items():
        want = _TYPES.get(k)
        if want is None or (isinstance(v, want) and not (want is int and isinstance(v, bool))):
            if k == "problems":
                v = [str(x) for x in v]
            elif k == "stuck":
                v = [x for x in v if isinstance(x, int) and not isinstance(x, bool)]
            out[k] = v
    return out


def run(args) -> int:
    import json

    import maus

    from mausbox.link import UnitLink

    with UnitLink(args.port, timeout=args.timeout) as link:
        port = link.port
        info = link.hello()
        st = link.request("status")
    status = st.get("status") or None
    garbled = status is not None and not isinstance(status, dict)
    if garbled:
        status = None
    if isinstance(status, dict) and not status.get("version"):
        status = None  # no boot record: the app never booted on this unit
    if status is not None and isinstance(st.get("free_bytes"), int):
        status = dict(status, free_bytes=st["free_bytes"])  # now, not at boot
    platform = info.get("platform")
    where = "virtual unit" if platform == "linux" or info.get("board") == "sim" else platform
    doing = "the app runs" if info.get("app") else "the app is not running: the unit answers from its REPL"
    findings = [{"check": "port", "ok": True, "detail": f"{port} ({where}); {doing}", "fix": ""}]
    free_now = st.get("free_bytes") if isinstance(st.get("free_bytes"), int) else None
    findings += diagnose(status, str(info.get("micropython") or "?"), free_now, maus.VERSION, st)
    if garbled:
        findings.append({"check": "status", "ok": False, "detail": "the unit's /status.json is garbled (not an "
                         "object)", "fix": "restart the unit: it writes the file anew at every boot"})
    bad = [f for f in findings if not f["ok"]]
    if args.json:
        print(json.dumps({"ok": not bad, "findings": findings, "status": status, "unit": info,
                          "live": {k: st.get(k) for k in ("mode", "game", "log", "mem_free", "uptime_ms", "wall")}},
                         indent=2))
    else:
        from mausbox.shown import shown

        for f in findings:
            print(f"{'ok ' if f['ok'] else '!! '} {f['check']:<10} {shown(f['detail'])}")
            if f["fix"]:
                print(f"     -> {shown(f['fix'])}")
        print("doctor: all good" if not bad else f"doctor: {len(bad)} thing(s) to fix")
    return 1 if bad else 0
