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

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox import heapbudget  # noqa: E402
from mausbox.build import compile_file  # noqa: E402
from mausbox.mpbuild import micropython_binary, sim_march  # noqa: E402
from mausbox.sim import run as simrun  # noqa: E402

SCENARIOS = ROOT / "tests" / "scenarios"
GAMES = {"mausgeflippt": "mg", "mim": "mim", "mms": "mms"}

# The qstr pools a board allocates for the names a run interned: heapbudget.board_qstr_tables (its sources).
board_qstr_tables = heapbudget.board_qstr_tables

# Names a stock ESP32_GENERIC image (MicroPython 1.28.0) has in ROM, so the firmware using them interns
# nothing: each is a MP_QSTR_ of the C code the port builds (py/, extmod/, shared/, drivers/, ports/esp32/)
# or a qstr of a module its boards/manifest.py freezes (micropython-lib at the submodule's commit 8380c7bb).
# Only the ones the firmware uses are listed (found by matching its .mpy qstr tables against those
# sources): a name missing here counts as interned, the safe side. The unix port has some of them in ROM
# too (then they never show up), but not the machine module's (Pin, PWM, ...) nor the frozen ones.
ESP32_ROM_QSTRS = frozenset("""
. .. .tmp 0 : <genexpr> <listcomp> ADC ATTN_11DB HOLD I2C IN IRQ_FALLING NeoPixel OUT PULL_UP PWM Pin RMT RTC SPI
WDT __contains__ __dict__ __file__ __import__ _path add addr align alloc_emergency_exception_buf antenna arg
array ascii atten b baudrate binascii board buf buffer call cancel cat choice cmd code collect crc32 cs d data
decode default delattr delete digest discard done dump dumps duty_u16 e edge encode enumerate error esp32 f
feed file fill floor flush freq gc handler hard hashlib hold i idle idle_level idx ilistdir implementation
init irq json level line listdir load loads localtime lock locked log machine max memory memoryview message
min miso mkdir mode module modules mosi msg n name neopixel off offset on os path phase pid pin pins poll
prompt property pull rb read_u16 real reason release rename request reset resolution_hz rpartition run s scan
sck scl sda seed seek separators seq setup sha256 sleep sleep_ms sleep_us spi src stat status statvfs stdout
stream sys t text threshold ticks ticks_add ticks_diff ticks_ms ticks_us time timeout trigger unique_id v val
version version_info w wait wake wb width write_pulses write_readinto
""".split())

_QNAME = re.compile(r"^Q\((.*)\)$", re.M)


def scenarios(game: str) -> list[Path]:
    return sorted(p for p in SCENARIOS.glob(f"{GAMES[game]}-*.jsonl") if p.with_suffix(".expect.json").exists())


def most_players(game: str) -> Path:
    """The scenario of that game with the most players (the largest set-up)."""
    return max(scenarios(game), key=lambda p: (int(re.search(r"-(\d)p", p.stem).group(1)), p.stem))


def _bare(exe: str) -> int:
    out = subprocess.run([exe, "-c", "import gc;gc.collect();print(gc.mem_alloc())"], capture_output=True,
                         text=True, check=True).stdout
    return int(out.strip())


def prepare(scenario: Path, root: Path, hostsvc: Path | None = None, frozen: str | None = None) -> Path:
    """The unit's flash folder with the firmware, its tools and the scenario (checked, in time order).
    hostsvc: a maus/host/service.py from another branch, compiled in for the heap watcher to load."""
    actions = simrun.parse_scenario(scenario.read_text(encoding="utf-8"), scenario.name)
    simrun.prepare_root(root, binary=frozen, frozen=frozen is not None)
    if hostsvc is not None:
        err = compile_file(hostsvc, root / "maus" / "host" / "service.mpy", march=sim_march(), shown=Path("maus.host.service"))
        if err:
            raise RuntimeError(err)
    for old in (root / "logs").glob("*") if (root / "logs").exists() else ():
        old.unlink()
    for f in ("settings.json", "settings.bak", "status.json", ".rtcmem", "calib.json"):
        (root / f).unlink(missing_ok=True)
    norm = root / ".sim" / "scenario.jsonl"
    norm.write_text(simrun.scenario_text(actions))
    for name in ("heapwatch", "afterheap"):
        err = compile_file(ROOT / "bench" / "mpy" / f"{name}.py", root / ".sim" / f"{name}.mpy",
                           march=sim_march())
        if err:
            raise RuntimeError(err)
    return norm


def _run(root: Path, norm: Path, module: str, heap: int, *args: str, exe: str | None = None,
         **env_extra: str) -> subprocess.CompletedProcess:
    exe = exe or micropython_binary()
    if exe is None:
        raise FileNotFoundError("no MicroPython unix port (make setup)")
    env = simrun.firmware_env(root, MAUSBOX_SIM_SCENARIO=str(norm), **env_extra)
    env["MICROPYPATH"] = f"{root}:{root / '.sim'}:.frozen"
    return subprocess.run([exe, "-X", f"heapsize={heap}", "-m", module, *args], cwd=root, capture_output=True,
                          text=True, env=env, timeout=1800)


def _qstrs(out: str) -> dict[str, set[str]]:
    """The interned names at each `HEAPWATCH qstrs X` mark (MicroPython's qstr_info(1) after it)."""
    got = {}
    marks = list(re.finditer(r"^HEAPWATCH qstrs (\w+)$", out, re.M))
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(out)
        block = out[m.end():end]
        block = block[:block.find("\nHEAPWATCH ")] if "\nHEAPWATCH " in block else block
        got[m.group(1)] = set(_QNAME.findall(block))
    return got


def mpy_qstrs(path: Path) -> list[str]:
    """The names in an .mpy file's qstr table (those mpy-cross did not mark as static)."""
    b = path.read_bytes()

    def uint(i: int) -> tuple[int, int]:
        v = 0
        while True:
            c = b[i]
            i += 1
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                return v, i

    i = 4
    if b[2] & 0x40:  # architecture flags follow
        _, i = uint(i)
    n, i = uint(i)
    _, i = uint(i)
    out = []
    for _ in range(n):
        ln, i = uint(i)
        if not ln & 1:
            out.append(b[i:i + (ln >> 1)].decode())
            i += (ln >> 1) + 1
    return out


def firmware_names(root: Path) -> set[str]:
    """Every name the deployed firmware's modules (not the simulator's) can intern."""
    names: set[str] = set()
    for p in (root / "maus").rglob("*.mpy"):
        rel = p.relative_to(root / "maus").as_posix()
        if not rel.startswith("sim/"):
            names.update(mpy_qstrs(p))
    return names


def board_names(q: dict[str, set[str]], phase: str, fw: set[str]) -> set[str]:
    """The names the board interns by the end of `phase`: all interned since the tool's start, less those
    only the simulator uses (it interned them, and no firmware module has them), less the ESP32's ROM ones.
    A name the simulator and the firmware share counts: the board interns it for the firmware. So does a firmware
    name this tool had interned before its start (`maus`, `hw`, `spend`, ...: its own code uses them too), which
    the run never shows interned (49 of them in a game; before, the bench missed them)."""
    sim_only = (q["sim"] - q["fw"]) - fw
    return ((q[phase] - q["start"]) - sim_only | q["start"] & fw) - ESP32_ROM_QSTRS


def unpaid_text(q: dict[str, set[str]], names: set[str]) -> int:
    """Bytes of text of those board `names` the board share measured did not pay for: interned before the tool's
    start, or by the simulator as its Hardware was made (its share); their hash and length are in the pool tables."""
    return name_text(names & (q["start"] | (q["sim"] - q["fw"])))


def name_text(names: set[str]) -> int:
    """Bytes the text of these interned names takes: its length and a NUL each (py/qstr.c qstr_from_strn)."""
    return sum(len(n.encode()) + 1 for n in names)


def watch(scenario: Path, root: Path, hostsvc: Path | None = None, frozen: str | None = None) -> dict:
    """Peak board share per phase (bytes), the names the firmware interned, and what the pools add.
    hostsvc: also load that host service (prepare()) from power-on. frozen: a MicroPython with the firmware frozen
    in (mausbox.mpbuild.ensure_frozen), run with only the data files on the flash, as on an image built by
    `make image`."""
    norm = prepare(scenario, root, hostsvc, frozen)
    exe = frozen or micropython_binary()
    extra = {"MAUSBOX_HEAP_HOSTSVC": "1"} if hostsvc is not None else {}
    proc = _run(root, norm, "heapwatch", 1 << 19, str(_bare(exe)), exe=exe, **extra)
    if proc.returncode != 0:
        raise RuntimeError(f"{scenario.name}: the heap watcher failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    vals = {ln.split()[1]: [int(x) for x in ln.split()[2:]] for ln in proc.stdout.splitlines()
            if ln.startswith("HEAPWATCH ") and ln.split()[1] not in ("qstrs", "mem")}
    q = _qstrs(proc.stdout)
    fw = firmware_names(root)
    res = {"scenario": scenario.stem, "sim_share": vals["sim"][0]}
    for phase in ("boot", "game"):
        names = board_names(q, phase, fw)
        res[f"{phase}_qstrs"] = len(names)
        res[f"{phase}_qstr_tables"] = tables = board_qstr_tables(len(names))
        res[f"{phase}_qstr_text_unpaid"] = unpaid = unpaid_text(q, names)
        res[phase] = vals[phase][0] + tables + unpaid
        res[f"{phase}_names"] = names
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
