"""The host service's heap cost on the 32-bit MicroPython (the ESP32's object sizes), loaded as .mpy as deployed:
the module, one instance with its preallocated buffers, and what a listing and a log stream take (held between
main-loop passes, and allocated within one pass: garbage the idle-time collection takes back)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox import heapbudget, mpbuild  # noqa: E402
from mausbox.build import compile_tree  # noqa: E402


def main() -> int:
    exe = mpbuild.binary()
    if exe is None:
        print("hostsvc.skipped: 1 flag (no 32-bit MicroPython)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tree = compile_tree([ROOT / "firmware", ROOT / "tests" / "fw", ROOT / "bench" / "mpy"], Path(tmp) / "t", "x86",
                            ROOT)
        unit = Path(tmp) / "unit"
        unit.mkdir()
        env = dict(os.environ, MICROPYPATH=f"{tree}:.frozen")
        # the board's heap, plus 200 KB for the RAM flash holding the logs (a board keeps them in flash)
        for args, heap in ((["lfs"], heapbudget.BOARD_HEAP + 400 * 512 + 16384), (["posix", str(unit)],
                                                                                    heapbudget.BOARD_HEAP)):
            proc = subprocess.run([str(exe), "-X", f"heapsize={heap}", "-m", "svcheap", *args],
                                  capture_output=True, text=True, env=env, cwd=unit)
            sys.stdout.write(proc.stdout)
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr[-3000:])
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
