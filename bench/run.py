"""`make bench`: run every benchmark in bench/ and print `name: value unit`, one figure a line.

Each bench/bench_*.py, and bench/web_bench.py (the web page), is run in its own process; it prints its figures itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = 0
    for script in [*sorted(HERE.glob("bench_*.py")), HERE / "web_bench.py"]:
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            failed += 1
            print(f"{script.stem}.failed: 1 flag", flush=True)
            sys.stderr.write(proc.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
