"""The test harness's heap margins: for every firmware test file, the smallest heap at which all its tests
still pass under the 32-bit MicroPython (the ESP32's object sizes), against the cap the suite runs it at
(the board's heap plus the file's simulated chips, host/mausbox/heapbudget.py).

    harness.peak_heap.<file>: N bytes     the smallest passing heap (found by bisection, 512-byte steps)
    harness.margin.<file>: P %            (cap - peak) / cap; every file keeps at least 15 %

A file that needs more than 85 % of its cap is flagged (`harness.margin_too_small: N files`) and this
benchmark exits 1: such a file passes or fails by heap-layout luck.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox import heapbudget, mpbuild  # noqa: E402
from mausbox.build import compile_tree  # noqa: E402

FWTESTS = ROOT / "tests" / "fw"
MIN_MARGIN = 0.15
STEP = 512


def run(exe: str, tree: Path, stem: str, heap: int) -> tuple[bool, int]:
    env = dict(os.environ, MICROPYPATH=f"{tree}:.frozen", MAUSBOX_REPO=str(ROOT))
    proc = subprocess.run([exe, "-X", f"heapsize={heap}", "-m", "_mpyrunner", stem], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=900)
    passed = len(re.findall(r"^@@PASS ", proc.stdout, re.M))
    failed = len(re.findall(r"^@@FAIL ", proc.stdout, re.M))
    return proc.returncode == 0 and failed == 0, passed


def peak(exe: str, tree: Path, path: Path) -> tuple[int, int, int]:
    """(peak, cap, tests) for one file; peak = -1 if it fails even at its cap."""
    cap = heapbudget.heap_for(heapbudget.sim_parts(path, [ROOT / "firmware", FWTESTS]))
    ok, n = run(exe, tree, path.stem, cap)
    if not ok:
        return -1, cap, n
    lo, hi = 4096, cap  # lo fails (assumed), hi passes
    while hi - lo > STEP:
        mid = (lo + hi) // 2 // 16 * 16
        good, got = run(exe, tree, path.stem, mid)
        if good and got == n:
            hi = mid
        else:
            lo = mid
    return hi, cap, n


def main() -> int:
    exe = mpbuild.binary()
    if exe is None:
        print("harness.skipped: 1 flag (no 32-bit MicroPython: make setup)")
        return 0
    files = sorted(FWTESTS.glob("test_*.py"))
    with tempfile.TemporaryDirectory() as tmp:
        tree = compile_tree([ROOT / "firmware", FWTESTS], Path(tmp), "x86", ROOT)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda p: (p, peak(str(exe), tree, p)), files))
    short = 0
    worst = 1.0
    for path, (pk, cap, _n) in results:
        name = path.stem
        if pk < 0:
            print(f"harness.peak_heap.{name}: fails at its cap {cap} bytes")
            short += 1
            continue
        margin = (cap - pk) / cap
        worst = min(worst, margin)
        print(f"harness.peak_heap.{name}: {pk} bytes")
        print(f"harness.margin.{name}: {margin * 100:.0f} % (cap {cap} bytes)")
        if margin < MIN_MARGIN:
            short += 1
    print(f"harness.heap_cap_board: {heapbudget.BOARD_HEAP} bytes")
    print(f"harness.worst_margin: {worst * 100:.0f} %")
    print(f"harness.margin_too_small: {short} files")
    return 1 if short else 0


if __name__ == "__main__":
    raise SystemExit(main())
