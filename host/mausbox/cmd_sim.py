"""`mausbox sim`: the virtual unit — the real firmware on the MicroPython unix port, simulated hardware."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path

from mausbox.shown import plural

HELP = "run the virtual unit: interactive, a scenario file, a log replay, or a serial pty"
EXAMPLES = """\
mausbox sim                                              # play in this terminal
mausbox sim --scenario tests/scenarios/mg-4p-mice.jsonl --root /tmp/unit
mausbox sim --serial --root /tmp/unit                    # plus a pty that mpremote and mausbox can use
mausbox sim --replay game.jsonl --json
mausbox sim --web                                        # the page of make web, on localhost, in your browser
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    p.add_argument("--root", help="folder that stands in for the unit's flash (default: per-user data folder)")
    p.add_argument("--scenario", metavar="FILE",
                   help="run a scenario file headless in virtual time, then exit; with --serial: play its "
                        "physical events in real time while the pty is open (host commands can join in)")
    p.add_argument("--replay", metavar="LOG", help="replay a pulled game log and check every verdict")
    p.add_argument("--serial", action="store_true", help="expose a pseudo-terminal that speaks the MicroPython REPL")
    p.add_argument("--link", metavar="PATH", help="with --serial: also make PATH a symlink to the pty")
    p.add_argument("--baud", type=int, help="with --serial: limit throughput like a UART at N baud")
    p.add_argument("--bridge-max", type=int, metavar="BAUD",
                   help="with --serial: the USB-serial bridge's highest rate (a host asking more gets garbled bytes "
                        "and falls back, as with a bridge that cannot do it; MAUSBOX_SIM_BRIDGE_MAX too)")
    p.add_argument("--exec-delay-ms", type=int, default=0, help="with --serial: delay each raw-REPL exec by N ms")
    p.add_argument("--heap", default=None,
                   help="MicroPython heap size, e.g. 512k (default: on the 32-bit build the ESP32-WROOM-32's "
                        "GC heap plus the simulator's own share, so a MemoryError shows where the board "
                        "would have one; 512k with --serial or on a 64-bit build)")
    p.add_argument("--headless", action="store_true", help="with --serial: no terminal UI")
    p.add_argument("-v", "--verbose", action="store_true", help="print the unit's console (events, prompts)")
    p.add_argument("--json", action="store_true", help="print the scenario or replay result as JSON")
    p.add_argument("--web", action="store_true",
                   help="serve the virtual unit's web page (build/web/, made by `make web` if missing) on localhost "
                        "and open it in the browser (the address is printed)")


def _root(args) -> Path:
    from mausbox.paths import data_home

    return Path(args.root).expanduser().resolve() if args.root else data_home() / "sim"


def run(args) -> int:
    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.sim import run as simrun

    if args.web:
        return web_page()
    heap = args.heap or (simrun.DEFAULT_HEAP if args.serial else simrun.board_heap())
    root = _root(args)
    if args.scenario and args.serial:
        return serial_scenario(args, root, heap)
    if args.scenario:
        path = Path(args.scenario)
        if not path.is_file():
            raise UserError(f"no scenario file {path}", EXIT_USAGE)
        before = {log.name: log.stat().st_size for log in simrun.logs_in(root)}
        root.mkdir(parents=True, exist_ok=True)
        from mausbox.sim.tui import follow_lang

        follow_lang(root)  # a new unit speaks the terminal's language, as in the interactive sim
        try:
            rc, lines = simrun.run_scenario(path, root, heap=heap, echo=print if args.verbose else None)
        except simrun.ScenarioError as e:
            raise UserError(str(e), EXIT_USAGE) from None
        return _report(root, rc, lines, args, before, path.name)
    if args.replay:
        from mausbox.sim import replay as simreplay

        return simreplay.replay(Path(args.replay), root, heap=heap, as_json=args.json)
    from mausbox.sim import tui as simtui

    starting(root, args.serial)
    return simtui.main(root, heap=heap, serial=args.serial, link=args.link, baud=args.baud,
                       exec_delay_ms=args.exec_delay_ms, headless=args.headless, bridge_max=args.bridge_max)


def starting(root: Path, serial: bool) -> None:
    """Say what the start-up waits for: laying the firmware into the unit's flash folder (compiled with
    mpy-cross: the first time takes a while), then the firmware's boot."""
    import time

    from mausbox.sim import run as simrun

    first = not (root / ".sim" / "manifest.json").exists()
    print(f"sim: {'compiling the firmware into' if first else 'checking the firmware in'} {root}"
          + (" (first time: a minute)" if first else "") + " ...", flush=True)
    t0 = time.monotonic()
    simrun.prepare_root(root)
    print(f"sim: firmware ready ({time.monotonic() - t0:.0f} s); starting MicroPython, the unit boots", flush=True)
    print("sim: " + ("mpremote and mausbox commands answer once it has booted (MAUSBOX READY)" if serial
                     else "its screen shows once the firmware has booted"), flush=True)


def web_page() -> int:
    """`mausbox sim --web`: build/web/ on a localhost server until Ctrl-C, opened in the browser if there is one."""
    import os
    import time
    import webbrowser

    from mausbox import web
    from mausbox.cli import UserError

    out = web.DEFAULT_OUT
    if not (out / "unit.json").is_file():
        print(f"building the page into {out} (make web)")
        try:
            web.build(out)
        except web.WebBuildError as e:
            raise UserError(str(e)) from None
    srv, url = web.serve(out)
    print(f"the virtual unit's page: {url} (Ctrl-C stops the server)")
    if sys.platform in ("darwin", "win32") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        webbrowser.open(url)
    else:
        print("no graphical browser here: open the address above in one")
    sys.stdout.flush()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.shutdown()
    return 0


HOLD_MAX_MS = 2000  # a press and its release at most this far apart go as one hold, timed by the unit


def timeline(actions: list[dict]) -> list[tuple[float, dict]]:
    """A scenario's actions as (seconds after the start, control line) for the control FIFO, which applies each
    the moment it arrives. A press and the release of the same button after it (within HOLD_MAX_MS) go as one
    hold the unit times by its own clock: sent apart, a busy machine could deliver a 70 ms press and its release
    in one read, a press the unit never saw."""
    out = []
    used = set()
    for i, a in enumerate(actions):
        if i in used:
            continue
        t = a["at_ms"] / 1000
        if "press" in a:
            p = a["press"]
            for j in range(i + 1, len(actions)):
                b = actions[j]
                if b.get("press") == p or b.get("hold") == p or b.get("double") == p:
                    break
                if b.get("release") == p:
                    ms = b["at_ms"] - a["at_ms"]
                    if 0 < ms <= HOLD_MAX_MS:
                        used.add(j)
                        out.append((t, {"hold": p, "ms": ms}))
                    break
            if out and out[-1][0] == t and out[-1][1].get("hold") == p:
                continue
        out.append((t, {k: v for k, v in a.items() if k != "at_ms"}))
    out.sort(key=lambda x: x[0])
    return out


def wait_ready(root: Path, since: float, timeout: float = 120.0, poll: float = 0.05) -> bool:
    """The firmware has booted: it writes status.json right before `MAUSBOX READY` (maus/unit.py); looked for
    every `poll` seconds (bench/bench_boot.py times boots with 2 ms)."""
    import time

    end = time.monotonic() + timeout
    status = root / "status.json"
    while time.monotonic() < end:
        try:
            if status.stat().st_mtime >= since:
                return True
        except OSError:
            pass
        time.sleep(poll)
    return False


@contextmanager
def served_unit(root: Path, heapsize: str, **kw):
    """A virtual unit on its pty with its app running, as `mausbox sim --serial` serves one: its control FIFO
    pumped in a thread (the firmware's peripheral output drained: a full pipe would stall it). Yields the
    SerialUnit (`kw` goes to it; `env` is added to the FIFO's) once the firmware reports ready; SerialUnitError if it
    does not in 120 s."""
    import threading
    import time

    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit, SerialUnitError

    fifo = simtui.Link(root)
    stop = threading.Event()

    def pump() -> None:
        while not stop.is_set():
            fifo.pump()
            time.sleep(0.02)

    threading.Thread(target=pump, name="mausbox-served-fifo", daemon=True).start()
    since = time.time() - 1
    try:
        with SerialUnit(root, heapsize=heapsize, env={**fifo.env(), **kw.pop("env", {})}, **kw) as unit:
            if not wait_ready(root, since):
                raise SerialUnitError(f"the virtual unit in {root} did not report ready within 120 s")
            yield unit
    finally:
        stop.set()


def play(fifo, events: list[tuple[float, dict]], t0: float, stopped=lambda: False, forever: bool = False) -> int:
    """Queue each control line for its time after t0 (time.monotonic()) on the virtual unit's FIFO link
    (`simtui.Link`) and pump it, which also drains the unit's peripheral output (a full pipe would stall the
    firmware); with `forever` it goes on pumping after the last event. Returns the events sent."""
    import time

    now = time.monotonic()
    for t, act in events:
        fifo.send(act, max(t0 + t - now, 1e-6))
    while not stopped():
        fifo.pump()
        if not fifo._pending and not forever:
            break
        time.sleep(0.01)
    return len(events) - len(fifo._pending)


def serial_scenario(args, root: Path, heap: str) -> int:
    """`sim --serial --scenario FILE`: the virtual unit on its pty, the scenario's physical events played in
    real time (from the moment the firmware is ready) through the control FIFO; the unit keeps running after
    the last event until stopped (Ctrl-C, SIGTERM)."""
    import signal
    import time

    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.sim import run as simrun
    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit

    path = Path(args.scenario)
    if not path.is_file():
        raise UserError(f"no scenario file {path}", EXIT_USAGE)
    try:
        events = timeline(simrun.parse_scenario(path.read_text(encoding="utf-8"), path.name))
    except simrun.ScenarioError as e:
        raise UserError(str(e), EXIT_USAGE) from None
    simrun.prepare_root(root)
    simtui.follow_lang(root)  # a new unit speaks the terminal's language, as in the interactive sim
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    fifo = simtui.Link(root)
    unit = SerialUnit(root, heapsize=heap, baud=args.baud, exec_delay_ms=args.exec_delay_ms, env=fifo.env(),
                      link=args.link, register=True, bridge_max=args.bridge_max)
    since = time.time() - 1
    try:
        pty = unit.start()
        print(f"virtual unit on {pty}" + (f" (also {args.link})" if args.link else "") + f"; flash folder {root}",
              flush=True)
        if not wait_ready(root, since):
            print("the firmware did not report ready within 120 s; playing the scenario anyway", flush=True)
        print(f"scenario {path.name}: {plural(len(events), 'event')} over {events[-1][0] if events else 0:.0f} s, "
              "starting now", flush=True)
        n = play(fifo, events, time.monotonic())
        print(f"scenario {path.name}: {'all ' if n > 1 else ''}{plural(n, 'event')} played; the unit keeps "
              "running (Ctrl-C stops it)", flush=True)
        play(fifo, [], 0, forever=True)  # until Ctrl-C or SIGTERM
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        unit.stop()


def ending(log_name: str, end: dict) -> str:
    """A game_end record in words, players in order: "Mausgeflippt: scores P1 8, P2 7; winner P1 (last
    mouse)". Mucks Mäuschen Still counts the sticks each player has left (fewest wins)."""
    from mausbox.report import GAME_NAMES

    game = log_name.rsplit(".", 1)[0].partition("-")[2]
    raw = end.get("scores")
    scores: dict = raw if isinstance(raw, dict) else {}
    order = sorted(scores, key=lambda k: (int(k) if str(k).isdigit() else 99, str(k)))
    what = "sticks left" if game == "mms" else "scores"
    line = f"{GAME_NAMES.get(game, game)}: {what} " + (", ".join(f"P{k} {scores[k]}" for k in order) or "none")
    winners = [w for w in end.get("winners") or [] if isinstance(w, int)]
    if winners:
        line += f"; {'winner' if len(winners) == 1 else 'winners'} " + ", ".join(f"P{w}" for w in winners)
    why = end.get("why") or end.get("reason")
    return line + (f" ({str(why).replace('_', ' ')})" if why else "")


def _report(root: Path, rc: int, lines: list[str], args, before: dict[str, int], name: str) -> int:
    """The games this scenario played (logs new or grown in the folder since it started), not the folder's
    older ones; exit 1 when it started none."""
    from mausbox.sim import run as simrun

    games: list[dict] = []
    for log in simrun.logs_in(root):
        if before.get(log.name) == log.stat().st_size:
            continue
        end: dict | None = None
        for raw in log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if rec.get("type") in ("game_end", "game_abort"):
                end = rec
        games.append({"log": str(log), "end": end})
    none = rc == 0 and not games
    if args.json:
        print(json.dumps({"exit": 1 if none else rc, "games": games}, indent=2))
    else:
        for g in games:
            end = g["end"] or {}
            assert isinstance(end, dict)
            if end.get("type") == "game_end":
                print(f"{Path(g['log']).name}: {ending(Path(g['log']).name, end)}")
            else:
                print(f"{Path(g['log']).name}: {end.get('type', 'no end record')} {end.get('reason', '')}")
    if none:
        print(f"{name} started no game: the unit is still in its menu (a game starts with a game card or player "
              "1's long press, players join, and a double press starts it: docs/scenarios.md)", file=sys.stderr)
        return 1
    if rc != 0:
        tail = "\n".join(lines[-20:])
        print(f"the virtual unit stopped with exit code {rc}:\n{tail}", file=sys.stderr)
        return 1
    return 0
