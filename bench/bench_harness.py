"""The test harness's heap margins: for every firmware test file, the smallest heap at which all its tests
still pass under the 32-bit MicroPython (the ESP32's object sizes), against the cap the suite runs it at
(tests/conftest.py; both take it from host/mausbox/heapbudget.py file_cap and the file's HEAP_BUDGET marker):
the board's heap plus the file's simulated chips; for HEAP_BUDGET = "boot" or "game", that budget with the
15 % margin plus the virtual unit's simulator share; for "board", the board's whole GC heap plus that share.

    harness.peak_heap.<file>: N bytes     the smallest passing heap (found by bisection, 512-byte steps)
    harness.margin.<file>: P %            (cap - peak) / cap; every file keeps at least 15 %
    harness.board_margin.<file>: P %      the same for a HEAP_BUDGET = "board" file, not held to 15 %
    harness.budget_margin.<file>: P %     the same for a HEAP_BUDGET = "boot" or "game" file, not held to 15 %

A file that needs more than 85 % of its cap is flagged (`harness.margin_too_small: N files`) and this
benchmark exits 1: such a file passes or fails by heap-layout luck. So is one that fails at its cap, whatever
its marker.

A file marked HEAP_BUDGET is not flagged for its margin: its cap is the firmware's limit itself, and how near
the firmware comes to it is the firmware's figure, not the test's scaffolding's. A "board" file runs the whole
firmware at the board's GC heap (111,936 bytes, the physical limit; issue 27 asked for tests there), where the
firmware's game takes ~90 KB: its cap has no margin by design. A "boot" or "game" file's cap is the budget
with the 15 % margin inside it (heapbudget.budget_cap) plus the virtual unit's simulator share, whose "unit"
figure was set from what the boot tests need: a firmware that uses its budget fills all but 15 % of the
budget's part, under 7 % of the whole cap, so the rule cannot hold there either. Their margin is bench_heap.py's
(esp32.smallest_heap.*, esp32.largest_free_after_game, the peak board share against each budget); this prints
the margin for the record, and for a budget file the peak less the simulator share.

    bench_harness.py [test_name ...]      only these files (their stems), e.g. to check one changed file
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


def run(exe: str, tree: Path, stem: str, heap: int, budget: str | None = None) -> tuple[bool, int]:
    env = dict(os.environ, MICROPYPATH=f"{tree}:.frozen", MAUSBOX_REPO=str(ROOT), **heapbudget.file_env(budget))
    proc = subprocess.run([exe, "-X", f"heapsize={heap}", "-m", "_mpyrunner", stem], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=900)
    passed = len(re.findall(r"^@@PASS ", proc.stdout, re.M))
    failed = len(re.findall(r"^@@FAIL ", proc.stdout, re.M))
    return proc.returncode == 0 and failed == 0, passed


def cap(path: Path) -> tuple[int, str | None]:
    """(the heap cap, the HEAP_BUDGET marker) of a test file: the suite's (tests/conftest.py Interp.heap, 32-bit)."""
    budget = heapbudget.file_budget(path)
    return heapbudget.file_cap(heapbudget.sim_parts(path, [ROOT / "firmware", FWTESTS]), budget), budget


def peak(exe: str, tree: Path, path: Path) -> tuple[int, int, int]:
    """(peak, cap, tests) for one file; peak = -1 if it fails even at its cap."""
    top, budget = cap(path)
    ok, n = run(exe, tree, path.stem, top, budget)
    if not ok:
        return -1, top, n
    lo, hi = 4096, top  # lo fails (assumed), hi passes
    while hi - lo > STEP:
        mid = (lo + hi) // 2 // 16 * 16
        good, got = run(exe, tree, path.stem, mid, budget)
        if good and got == n:
            hi = mid
        else:
            lo = mid
    return hi, top, n


def main(only: list[str]) -> int:
    exe = mpbuild.binary()
    if exe is None:
        print("harness.skipped: 1 flag (no 32-bit MicroPython: make setup)")
        return 0
    files = sorted(p for p in FWTESTS.glob("test_*.py") if not only or p.stem in only)
    budgets = {p: cap(p)[1] for p in files}
    with tempfile.TemporaryDirectory() as tmp:
        tree = compile_tree([ROOT / "firmware", FWTESTS], Path(tmp), "x86", ROOT)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda p: (p, peak(str(exe), tree, p)), files))
    short = 0
    worst = 1.0
    for path, (pk, top, _n) in results:
        name = path.stem
        if pk < 0:
            print(f"harness.peak_heap.{name}: fails at its cap {top} bytes")
            short += 1
            continue
        margin = (top - pk) / top
        print(f"harness.peak_heap.{name}: {pk} bytes")
        budget = budgets[path]
        if budget == "board":  # the board's heap, no margin by design: bench_heap.py's figures (docstring)
            print(f"harness.board_margin.{name}: {margin * 100:.0f} % (cap {top} bytes)")
            continue
        if budget is not None:  # the budget's own margin is inside the cap (docstring)
            share = heapbudget.unit_share()
            print(f"harness.budget_margin.{name}: {margin * 100:.0f} % (cap {top} bytes = {budget} budget "
                  f"{heapbudget.BUDGETS[budget]} with the {heapbudget.MARGIN:.0%} margin + simulator share {share}; "
                  f"peak less the share {pk - share} bytes)")
            continue
        worst = min(worst, margin)
        print(f"harness.margin.{name}: {margin * 100:.0f} % (cap {top} bytes)")
        if margin < MIN_MARGIN:
            short += 1
    print(f"harness.heap_cap_board: {heapbudget.BOARD_HEAP} bytes")
    print(f"harness.worst_margin: {worst * 100:.0f} %")
    print(f"harness.margin_too_small: {short} files")
    return 1 if short else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
