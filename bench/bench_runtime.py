"""Runtime figures: the capture handler's cost, the unit's peak heap idle and in races, and the virtual unit's
speed over a 10-minute scenario (capture errors in races: bench_capture.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox.mpbuild import micropython_binary  # noqa: E402
from mausbox.sim import run as simrun  # noqa: E402


def ten_minute_mausgeflippt() -> list[dict]:
    """4 players, slow play: a mouse every ~18 s, someone claims, taps an item, cards come off."""
    acts: list[dict] = [{"at_ms": 500, "tap": "game/mausgeflippt"}, {"at_ms": 900, "remove": "game/mausgeflippt"}]
    t = 1500
    for p in (1, 2, 3, 4):
        acts += [{"at_ms": t, "press": p}, {"at_ms": t + 80, "release": p}]
        t += 300
    acts += [{"at_ms": t + 500, "press": 1}, {"at_ms": t + 560, "release": 1},
             {"at_ms": t + 700, "press": 1}, {"at_ms": t + 760, "release": 1}]
    t += 2500
    acts += [{"at_ms": t, "tap": "mg/cheese/1"}, {"at_ms": t + 600, "remove": "mg/cheese/1"}]
    for k in range(1, 33):
        t += 18000
        mouse = "mg/mouse/%02d" % k
        item = "mg/clothing/%02d" % ((k * 7) % 58 + 1)
        p = k % 4 + 1
        acts += [{"at_ms": t, "tap": mouse}, {"at_ms": t + 1400, "press": p}, {"at_ms": t + 1480, "release": p},
                 {"at_ms": t + 2600, "tap": item}, {"at_ms": t + 3400, "remove": item},
                 {"at_ms": t + 3600, "remove": mouse}]
    return acts


def run_mpy(script: str, *args: str, heap: str = "512k", env=None, cwd=None) -> str:
    exe = micropython_binary()
    e = dict(os.environ)
    e["MICROPYPATH"] = f"{ROOT / 'firmware'}:{ROOT / 'tests' / 'fw'}:.frozen"
    e.update(env or {})
    proc = subprocess.run([exe, "-X", f"heapsize={heap}", script, *args], capture_output=True, text=True,
                          env=e, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-2000:])
    return proc.stdout


def main() -> int:
    if micropython_binary() is None:
        print("runtime.skipped: 1 flag (no MicroPython unix port)")
        return 0
    sys.stdout.write(run_mpy(str(ROOT / "bench" / "mpy" / "runtime.py"), "all"))
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp) / "ten.jsonl"
        acts = ten_minute_mausgeflippt()
        scen.write_text("".join(json.dumps(a) + "\n" for a in acts))
        virtual_s = acts[-1]["at_ms"] / 1000
        root = Path(tmp) / "unit"
        simrun.prepare_root(root)  # compile once, outside the timing
        import resource

        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        rc, lines = simrun.run_scenario(scen, root)
        wall = time.perf_counter() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        if rc != 0:
            print("\n".join(lines[-20:]), file=sys.stderr)
            return 1
        print(f"sim.scenario_virtual_time: {virtual_s:.0f} s")
        print(f"sim.scenario_wall_time: {wall:.2f} s")
        print(f"sim.scenario_cpu_time: {cpu:.2f} s")
        print(f"sim.speedup: {virtual_s / wall:.0f} x")
        print(f"sim.speedup_per_cpu_second: {virtual_s / cpu:.0f} x")
        # peak live heap of the unit (firmware + simulated chips; 64-bit objects), same scenario
        norm = root / ".sim" / "scenario.jsonl"
        out = run_mpy(str(ROOT / "bench" / "mpy" / "unitheap.py"), heap=simrun.DEFAULT_HEAP,
                      env={"MICROPYPATH": f"{root}:.frozen", "MAUSBOX_SIM_SCENARIO": str(norm)}, cwd=root)
        heap = [ln for ln in out.splitlines() if ln.startswith("HEAP ")][-1].split()
        print(f"heap.after_boot: {int(heap[1]) / 1024:.1f} KiB")
        print(f"heap.peak_idle: {int(heap[2]) / 1024:.1f} KiB")
        print(f"heap.peak_race: {int(heap[3]) / 1024:.1f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
