"""Capture error under the ESP32 timing model: IRQ and poll capture over 10,000 simulated races with random
contact bounce and presses 0-5 ms apart, the handler's cost against a minimal one (bench/mpy/capture.py,
docs/capture.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host")]

from mausbox.mpbuild import micropython_binary  # noqa: E402

RACES = int(os.environ.get("MAUSBOX_BENCH_RACES", "10000"))


def main() -> int:
    exe = micropython_binary()
    if exe is None:
        print("capture.skipped: 1 flag (no MicroPython unix port)")
        return 0
    env = dict(os.environ)
    env["MICROPYPATH"] = f"{ROOT / 'firmware'}:{ROOT / 'tests' / 'fw'}:.frozen"
    proc = subprocess.run([str(exe), "-X", "heapsize=2m", str(ROOT / "bench" / "mpy" / "capture.py"), str(RACES)],
                          capture_output=True, text=True, env=env)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
