"""The virtual unit's plumbing on the host: its flash folder, scenario files, and the firmware process.

The firmware runs as it is deployed: `maus/` copied into the unit's flash folder (ROOT), `board.json`
(the sim board) and a two-line `main.py`, executed by the MicroPython unix port with ROOT as its
current directory. Simulated hardware lives in the firmware tree (`maus/sim/hw.py`, `maus/sim/`): the board's own
hardware layer (`maus/hw/esp32.py`) runs on an emulated `machine` wired to the simulated world.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from mausbox.mpbuild import micropython_binary, sim_march
from mausbox.paths import BOARDS_DIR, FIRMWARE_DIR, FIRMWARE_PKG

DEFAULT_HEAP = "512k"  # tests and tools: the firmware loaded as .mpy plus the simulated chips, with room to spare
ACTIONS = ("press", "release", "hold", "double", "tap", "remove", "knock", "noise", "rfid")
# The sim's knock keys (`k` gentle, `K` hard). A fresh unit (sensitivity 5, no calibration) alarms from about
# 0.03 of full scale (its base threshold, 768 counts of the detector's deviation, docs/piezo.md), and every
# bump from 0.05 up (the softest that rings the game's bell) must alarm: a gentle knock the castle takes in
# silence is well under that (0.01: the meter moves, no alarm); the hard one rings.
KNOCKS = {"gentle": {"knock": 0.01, "ms": 40}, "hard": {"knock": 0.7, "ms": 60}}


class ScenarioError(ValueError):
    pass


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def board_heap(binary: str | None = None) -> str:
    """The heap `mausbox sim` gives the firmware by default (not with --serial): on the 32-bit build (the
    ESP32's object sizes) the board's GC heap plus what the simulator itself holds (heapbudget.unit_heap),
    so the firmware runs out of memory in the sim where it would on a stock ESP32-WROOM-32; on a 64-bit
    build, whose objects are larger, the roomy DEFAULT_HEAP (a figure there would say nothing of a board).
    A served unit (--serial) keeps DEFAULT_HEAP: its REPL server, while it serves a running app, holds more
    than the idle share measured (heapbudget.SIM_SHARE["repl"]), so there the host service would run out
    of room where a board has it (docs/build.md section 7)."""
    from mausbox import heapbudget
    from mausbox.mpbuild import micropython_words

    exe = binary or micropython_binary()
    if exe and micropython_words(exe) == "32":
        return str(heapbudget.unit_heap())
    return DEFAULT_HEAP


def prepare_root(root: Path, board: str = "sim", compiled: bool = True, binary: str | None = None,
                 frozen: bool = False) -> Path:
    """Lay the firmware into ROOT as `mausbox deploy` does on a board: modules compiled to .mpy (for the
    native code of the unix port that will run them), data files copied; only what changed is rewritten.
    frozen: for a binary with the firmware frozen in (mpbuild.ensure_frozen), as a deploy onto an image with the
    app frozen in lays it: the data files only, in maus.FROZEN_DATA, and no maus/ folder (it would hide the
    frozen package)."""
    from mausbox.build import FIRMWARE_OPT, compile_file

    march = sim_march(binary)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".sim").mkdir(exist_ok=True)
    from maus import FROZEN_DATA

    shutil.rmtree(root / ("maus" if frozen else FROZEN_DATA), ignore_errors=True)  # what a deploy removes too
    dest = root / (FROZEN_DATA if frozen else "maus")
    compiled = compiled and not frozen
    manifest_path = root / ".sim" / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        manifest = {}
    wanted = set()
    for src in sorted(FIRMWARE_PKG.rglob("*")):
        if "__pycache__" in src.parts or not src.is_file() or src.suffix not in (".py", ".json", ".cat") or \
                frozen and src.suffix == ".py":
            continue
        rel = src.relative_to(FIRMWARE_PKG)
        out_rel = rel.with_suffix(".mpy") if compiled and src.suffix == ".py" else rel
        wanted.add(out_rel)
        dst = dest / out_rel
        digest = _sha(src) + (f"-{march}-O{FIRMWARE_OPT}" if out_rel.suffix == ".mpy" else "")
        key = str(out_rel)
        if dst.exists() and manifest.get(key) == digest:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if out_rel.suffix == ".mpy":
            err = compile_file(src, dst, march=march)
            if err:
                raise RuntimeError(err)
        else:
            shutil.copyfile(src, dst)
        manifest[key] = digest
    for old in list(dest.rglob("*")):  # files removed from the firmware go from the unit too
        if old.is_file() and old.relative_to(dest) not in wanted:
            old.unlink()
            manifest.pop(str(old.relative_to(dest)), None)
    manifest_path.write_text(json.dumps(manifest, sort_keys=True))
    # Starting the virtual unit is a power-on: RTC memory (the crash counter) does not survive it.
    # A soft reboot over the serial REPL keeps it, as on a board.
    for f in (".rtcmem", ".wdt"):  # and a watchdog runs only once the firmware starts one
        (root / f).unlink(missing_ok=True)
    board_src = BOARDS_DIR / f"{board}.json"
    (root / "board.json").write_bytes(board_src.read_bytes())
    from mausbox.build import board_ok

    # (frozen: no board.ok, as a deploy writes none there: the unit checks its board at each boot, with the checker
    # in the image, which costs its RAM nothing)
    checker = dest / "hw" / ("board.mpy" if compiled else "board.py")
    ok = None if frozen else board_ok(board_src.read_bytes(), checker.read_bytes())
    if ok is not None:
        (root / "board.ok").write_bytes(ok)
    else:
        (root / "board.ok").unlink(missing_ok=True)
    for name in ("boot.py", "main.py"):  # as `mausbox deploy` writes them (the watchdog keeper, the app)
        shutil.copyfile(FIRMWARE_DIR / name, root / name)
    return root


def _check_ident(value, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{where}: a card identity must be a string like \"mg/mouse/07\"")
    ident = value[8:] if value.startswith("mausbox:") else value
    parts = ident.split("/")
    if len(parts) not in (2, 3) or not all(parts) or any(not p.replace("-", "").replace("_", "").isalnum() for p in parts):
        raise ScenarioError(f"{where}: {value!r} is not a card identity (<game>/<kind>/<id>, e.g. \"mg/mouse/07\")")
    return ident


def parse_scenario(text: str, name: str = "scenario") -> list[dict]:
    """Validate a scenario (JSON lines); every error names the line. Returns the actions by time."""
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"{name}:{n}"
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        try:
            act = json.loads(line)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(act, dict):
            raise ScenarioError(f"{where}: each line must be a JSON object")
        at = act.get("at_ms")
        if type(at) is not int or at < 0:
            raise ScenarioError(f"{where}: \"at_ms\" must be a whole number of ms >= 0")
        kinds = [k for k in ACTIONS if k in act]
        if len(kinds) != 1:
            raise ScenarioError(f"{where}: exactly one action needed, one of {', '.join(ACTIONS)}")
        kind = kinds[0]
        extra = set(act) - {"at_ms", kind, "ms", "comment"}
        if extra:
            raise ScenarioError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
        v = act[kind]
        clean: dict = {"at_ms": at, kind: v}
        if kind in ("press", "release", "hold", "double"):
            if type(v) is not int or not 1 <= v <= 6:
                raise ScenarioError(f"{where}: \"{kind}\" takes a player number 1..6")
            if kind == "hold":
                ms = act.get("ms")
                if type(ms) is not int or ms <= 0:
                    raise ScenarioError(f"{where}: \"hold\" needs \"ms\", the hold time in ms (> 0)")
                clean["ms"] = ms
        elif kind in ("tap", "remove"):
            clean[kind] = _check_ident(v, where)
        elif kind == "knock":
            if type(v) not in (int, float) or not 0 <= v <= 1:
                raise ScenarioError(f"{where}: \"knock\" takes an amplitude 0..1")
            ms = act.get("ms", 30)
            if type(ms) is not int or not 1 <= ms <= 5000:
                raise ScenarioError(f"{where}: knock \"ms\" must be 1..5000")
            clean["ms"] = ms
        elif kind == "noise":
            if type(v) not in (int, float) or not 0 <= v <= 1:
                raise ScenarioError(f"{where}: \"noise\" takes a level 0..1")
        elif kind == "rfid":
            if v != "reset":
                raise ScenarioError(f"{where}: \"rfid\" takes \"reset\" (the reader chip resets itself)")
        if "ms" in act and kind not in ("hold", "knock"):
            raise ScenarioError(f"{where}: \"ms\" only goes with hold or knock")
        out.append(clean)
    out.sort(key=lambda a: a["at_ms"])  # stable: same-time actions keep file order
    return out


def scenario_text(actions: list[dict]) -> str:
    """The scenario file the unit reads: one action a line, each tap with "card", the text its card holds
    (maus.sim.rf_field.card_text), worked out here, so that in a game the unit loads no module to make a card."""
    from maus.sim.rf_field import card_text

    return "".join(json.dumps(dict(a, card=card_text(a["tap"])) if "tap" in a else a) + "\n" for a in actions)


def firmware_env(root: Path, **extra: str) -> dict:
    from mausbox.sim.unitproc import unit_id

    env = dict(os.environ)
    env["MICROPYPATH"] = f"{root}:.frozen"
    env["MAUSBOX_UNIT_ID"] = unit_id(root)
    for k in ("MAUSBOX_SIM_SCENARIO", "MAUSBOX_SIM_CTL", "MAUSBOX_SIM_OUT"):
        env.pop(k, None)
    env.update(extra)
    return env


def run_scenario(scenario: Path, root: Path, heap: str = DEFAULT_HEAP, echo=None, timeout: float = 600,
                 binary: str | None = None, frozen: bool = False):
    """Run a scenario headless in virtual time. Returns (exit code, console lines). binary: the MicroPython to run
    on (default: micropython_binary()); frozen: it has the firmware frozen in (prepare_root)."""
    actions = parse_scenario(scenario.read_text(encoding="utf-8"), scenario.name)
    prepare_root(root, binary=binary, frozen=frozen)
    norm = root / ".sim" / "scenario.jsonl"
    norm.write_text(scenario_text(actions))
    exe = binary or micropython_binary()
    if exe is None:
        raise FileNotFoundError("MicroPython unix port not found (run `make setup`)")
    proc = subprocess.Popen([exe, "-X", f"heapsize={heap}", "main.py"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=firmware_env(root, MAUSBOX_SIM_SCENARIO=str(norm)))
    lines = []
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        lines.append(line)
        if echo:
            echo(line)
    rc = proc.wait(timeout=timeout)
    return rc, lines


def logs_in(root: Path) -> list[Path]:
    d = root / "logs"
    return sorted(d.glob("*.jsonl")) if d.exists() else []
