"""`mausbox doctor`: what a unit found at boot (its /status.json) and what to do about each finding."""

from __future__ import annotations

HELP = "check a unit: port, firmware, free flash, RFID reader, piezo, stuck buttons, safe mode (never stops a game)"
EXAMPLES = """\
mausbox doctor
mausbox doctor --port /dev/ttyUSB0 --json
mausbox doctor --hardware
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each

LOW_FLASH = 64 * 1024  # below this a game log may not fit
PIEZO_RANGE = (2000, 60000)  # a baseline outside means the input floats or is shorted


def add_parser(p):
    from mausbox.cli import unit_options

    unit_options(p)
    p.add_argument("--hardware", action="store_true",
                   help="walk through every part of the unit (buttons, LEDs, buzzer, reader, piezo, display, "
                        "latency jumper) with a pass/fail each; the unit must be at its menu")


PART_WAIT_S = 40  # the unit waits 15 s for a press, a card or a knock: a part's frames come within this


def hardware(args) -> int:
    """`doctor --hardware`: the unit runs its bring-up check (maus.checks.bringup); its prompts and results are shown as
    they come, then the summary (saved on the unit as bringup.json)."""
    import json

    from mausbox.link import UnitLink
    from mausbox.shown import shown

    def show(f):
        line = f.payload.decode("utf-8", "replace")
        print(f"-- {shown(line[2:])}" if line.startswith("? ") else f"   {shown(line)}", flush=True)

    with UnitLink(args.port, timeout=max(args.timeout, PART_WAIT_S)) as link:
        link.hello()
        out = link.request("bringup", on_frame=show)
    parts = out.get("parts") or []
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        mark = {"ok": "ok ", "FAIL": "!! ", "look": "?? ", "skip": "-- "}
        for p in parts:
            print(f"{shown(mark.get(str(p.get('result')), '?? '))} {shown(str(p.get('part', '?'))):<10} {shown(str(p.get('detail', '')))}")
            if p.get("hint"):
                print(f"     -> {shown(str(p['hint']))}")
        bad = [p for p in parts if p.get("result") == "FAIL"]
        print("bring-up: every part works (?? : look and listen yourself)" if not bad else
              f"bring-up: {len(bad)} part(s) failed: " + ", ".join(shown(str(p.get("part"))) for p in bad))
    return 0 if out.get("passed") else 1


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
        why = "; ".join(status.get("problems") or [])
        add("safe mode", False, f"the unit is in safe mode after {status.get('crashes', '?')} crashes in a row"
            + (f" ({why})" if why else ""),
            "pull the logs, run `mausbox deploy`, then in `mpremote repl`: "
            "import maus.unit; maus.unit.clear_safe_mode()")
        return out
    add("safe mode", True, "normal start")
    rv = status.get("rfid_version")
    name = status.get("rfid_chip") or "unknown chip"
    rfid_bad = [p for p in status.get("problems") or [] if p.startswith("rfid:")]
    started = status.get("rfid_ok")
    if started is None:  # a status.json of a firmware before rfid_ok: the version alone says
        started = rv not in (None, 0, 0xFF)
    if rfid_bad and not started:
        add("rfid", False, rfid_bad[0][5:].strip(), "check the reader's wiring on those pins and that it gets 3.3 V; "
            "`mausbox doctor --hardware` walks through every part")
    else:
        add("rfid", bool(started) and rv not in (None, 0, 0xFF),
            f"reader version 0x{rv:02X} ({name})" if isinstance(rv, int) and rv not in (0, 0xFF)
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
          "rfid_chip": str, "rfid_ok": bool,
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

    if getattr(args, "hardware", False):
        return hardware(args)

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
    findings = [{"check": "port", "ok": True, "detail": f"{port} ({where}); {doing}", "fix": ""},
                {"check": "name", "ok": True, "detail": "%s (unit %s)" % (info["name"], info.get("unit"))
                 if info.get("name") else "none: known by its id %s (`mausbox name set NAME`)" % info.get("unit"),
                 "fix": ""}]
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
