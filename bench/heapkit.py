"""The board's share of the GC heap while the virtual unit boots and plays: the measuring behind bench_heap.py.

Runs the firmware as `mausbox deploy` lays it out (maus/ as .mpy, the unit's own main()) on the 32-bit
MicroPython build (the ESP32's object sizes), with a scenario file as the players:
  watch()          the peak live heap per phase, board share only (bench/mpy/heapwatch.py says how the
                   simulator's share is measured and taken out), plus the qstr pool tables the board's
                   own pools would take (board_qstr_tables);
  capped()         a whole game in the heap the harness gives the virtual unit (the board's budget plus
                   the simulator's share): did it run, and the largest free block after it;
  smallest_heap()  the smallest heap in which the whole game still runs (bisection over capped runs).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox import heapbudget, simrun  # noqa: E402
from mausbox.build import compile_file  # noqa: E402
from mausbox.paths import micropython_binary  # noqa: E402

SCENARIOS = ROOT / "tests" / "scenarios"
GAMES = {"mausgeflippt": "mg", "mim": "mim", "mms": "mms"}

# ESP32_GENERIC (MicroPython 1.28) freezes asyncio, the networking bundle and a few drivers; the names
# they use beyond the port's own make a frozen qstr pool of about 395 entries (counted from the port's
# boards/manifest.py, docs/build.md). The first pool a running program gets holds twice that, each next
# one twice the last (py/qstr.c qstr_add), an entry taking 7 bytes: a pointer, a 2-byte hash
# (MICROPY_QSTR_BYTES_IN_HASH at the EXTRA_FEATURES level) and a length byte, plus a 24-byte header.
ESP32_FROZEN_QSTRS = 395
QSTR_ENTRY = 7
QSTR_POOL_HEAD = 24

_QSTR = re.compile(r"qstr pool: n_pool=(\d+), n_qstr=(\d+), n_str_data_bytes=(\d+), n_total_bytes=(\d+)")


def board_qstr_tables(n: int) -> int:
    """Bytes of the qstr pool tables a stock ESP32_GENERIC image allocates for n interned names."""
    total, room, alloc = 0, 0, 2 * ESP32_FROZEN_QSTRS
    while room < n:
        total += -(-(QSTR_POOL_HEAD + QSTR_ENTRY * alloc) // 16) * 16  # whole 16-byte GC blocks
        room += alloc
        alloc *= 2
    return total


def scenarios(game: str) -> list[Path]:
    return sorted(p for p in SCENARIOS.glob(f"{GAMES[game]}-*.jsonl") if p.with_suffix(".expect.json").exists())


def most_players(game: str) -> Path:
    """The scenario of that game with the most players (the largest set-up)."""
    return max(scenarios(game), key=lambda p: (int(re.search(r"-(\d)p", p.stem).group(1)), p.stem))


def _bare(exe: str) -> int:
    out = subprocess.run([exe, "-c", "import gc;gc.collect();print(gc.mem_alloc())"], capture_output=True,
                         text=True, check=True).stdout
    return int(out.strip())


def prepare(scenario: Path, root: Path) -> Path:
    """The unit's flash folder with the firmware, its tools and the scenario (checked, in time order)."""
    actions = simrun.parse_scenario(scenario.read_text(encoding="utf-8"), scenario.name)
    simrun.prepare_root(root)
    for old in (root / "logs").glob("*") if (root / "logs").exists() else ():
        old.unlink()
    for f in ("settings.json", "settings.bak", "status.json", ".rtcmem", "calib.json"):
        (root / f).unlink(missing_ok=True)
    norm = root / ".sim" / "scenario.jsonl"
    norm.write_text("".join(json.dumps(a) + "\n" for a in actions))
    for name in ("heapwatch", "afterheap"):
        err = compile_file(ROOT / "bench" / "mpy" / f"{name}.py", root / ".sim" / f"{name}.mpy",
                           march=simrun.sim_march())
        if err:
            raise RuntimeError(err)
    return norm


def _run(root: Path, norm: Path, module: str, heap: int, *args: str) -> subprocess.CompletedProcess:
    exe = micropython_binary()
    if exe is None:
        raise FileNotFoundError("no MicroPython unix port (make setup)")
    env = simrun.firmware_env(root, MAUSBOX_SIM_SCENARIO=str(norm))
    env["MICROPYPATH"] = f"{root}:{root / '.sim'}:.frozen"
    return subprocess.run([exe, "-X", f"heapsize={heap}", "-m", module, *args], cwd=root, capture_output=True,
                          text=True, env=env, timeout=1800)


def _qstrs(out: str) -> dict[str, int]:
    got = {}
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("HEAPWATCH qstrs "):
            m = _QSTR.search(lines[i + 1])
            got[line.split()[2]] = int(m.group(2))
    return got


def watch(scenario: Path, root: Path) -> dict:
    """Peak board share per phase (bytes), the names the firmware interned, and what the pools add."""
    norm = prepare(scenario, root)
    exe = micropython_binary()
    proc = _run(root, norm, "heapwatch", 1 << 19, str(_bare(exe)))
    if proc.returncode != 0:
        raise RuntimeError(f"{scenario.name}: the heap watcher failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    vals = {ln.split()[1]: [int(x) for x in ln.split()[2:]] for ln in proc.stdout.splitlines()
            if ln.startswith("HEAPWATCH ") and ln.split()[1] not in ("qstrs", "mem")}
    q = _qstrs(proc.stdout)
    own = (q["esp32"] - q["start"]) + vals["ssd1306"][1]  # the board's hardware layer's names
    res = {"scenario": scenario.stem, "sim_share": vals["sim"][0]}
    for phase in ("boot", "game"):
        names = q[phase] - q["sim"] + own
        res[f"{phase}_qstrs"] = names
        res[f"{phase}_qstr_tables"] = board_qstr_tables(names)
        res[phase] = vals[phase][0] + board_qstr_tables(names)
    return res


def capped(scenario: Path, root: Path, heap: int | None = None) -> dict:
    """The whole scenario in `heap` (default: the board's budget plus the virtual unit's share). ok: it ran to
    its end and the game ended; largest_free: the largest free block after it (bytes)."""
    norm = prepare(scenario, root)
    heap = heap or heapbudget.unit_heap()
    proc = _run(root, norm, "afterheap", heap)
    out = proc.stdout
    logs = simrun.logs_in(root)
    ended = any('"type":"game_end"' in p.read_text() for p in logs)
    m = re.search(r"max free sz: (\d+)", out)
    return {"ok": proc.returncode == 0 and ended and "MemoryError" not in out + proc.stderr,
            "largest_free": int(m.group(1)) * 16 if m else 0, "heap": heap,
            "tail": (out + proc.stderr)[-1500:]}


def smallest_heap(scenario: Path, root: Path, lo: int, hi: int, step: int = 1024) -> int:
    """The smallest heapsize (to `step` bytes) in which the whole scenario runs; hi must be one that does."""
    if not capped(scenario, root, hi)["ok"]:
        raise RuntimeError(f"{scenario.name} does not run in {hi} bytes")
    while hi - lo > step:
        mid = (lo + hi) // 2
        if capped(scenario, root, mid)["ok"]:
            hi = mid
        else:
            lo = mid
    return hi
