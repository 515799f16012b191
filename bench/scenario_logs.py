"""Every scenario's output, to compare two versions of the virtual unit (a speed-up must change nothing).

    .venv/bin/python bench/scenario_logs.py OUT_DIR [SCENARIO ...]

runs each scenario (default: tests/scenarios/*.jsonl) through `mausbox sim --scenario -v`, as the scenario
tests do, on a fresh flash folder with a fixed unit id, and writes OUT_DIR/<name>.console (the unit's
console) and OUT_DIR/<name>.logs (its game logs) with the firmware version taken out. Run it before and
after a change and `diff -r` the two folders: they must be identical. It prints each scenario's CPU time.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNIT_ID = "5e1d00c0ffee"
_FW = re.compile(r'"fw":"[^"]*"')


def normal(text: str) -> str:
    return _FW.sub('"fw":"-"', text)


def run_one(scenario: Path, out: Path, tmp: Path) -> float:
    root = tmp / scenario.stem
    (root / ".sim").mkdir(parents=True)
    (root / ".sim" / "unique_id").write_text(UNIT_ID)
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'host'}:{ROOT / 'firmware'}", LANG="C")  # this checkout's, also from a copy
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "mausbox", "sim", "--scenario", str(scenario), "--root", str(root),
                           "-v"], capture_output=True, text=True, env=env, cwd=ROOT)
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    (out / f"{scenario.stem}.console").write_text(normal(proc.stdout + proc.stderr + f"exit {proc.returncode}\n"))
    logs = sorted((root / "logs").glob("*.jsonl")) if (root / "logs").is_dir() else []
    (out / f"{scenario.stem}.logs").write_text("".join(f"== {p.name}\n" + normal(p.read_text()) for p in logs))
    return (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip())
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    scenarios = [Path(a).resolve() for a in argv[1:]] or sorted((ROOT / "tests" / "scenarios").glob("*.jsonl"))
    total = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for s in scenarios:
            cpu = run_one(s, out, Path(tmp))
            total += cpu
            print(f"{s.stem}: {cpu:.2f} s CPU", flush=True)
    print(f"all {len(scenarios)}: {total:.2f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
