"""Where a scenario's heap goes, for cutting it: `python bench/heap_where.py SCENARIO [--at MS]`.

Without --at: the board-share peaks per phase (bench/heapkit.watch, qstr pool tables included) and the
firmware modules loaded at the game phase's highest peak. With --at MS: the unit taken apart piece by
piece at that moment of virtual time (bench/mpy/heapwatch.py MAUSBOX_HEAPPROBE_MS), the bytes each
removal freed. A development tool, not a figure of `make bench`."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import heapkit  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--at", type=int, help="take the unit apart at this virtual time (ms, game phase)")
    ap.add_argument("--at-bytes", type=int, help="take the unit apart at the first game peak of this many bytes")
    a = ap.parse_args()
    exe = heapkit.micropython_binary()
    if exe is None:
        print("no MicroPython unix port (make setup)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "unit"
        norm = heapkit.prepare(a.scenario, root)
        if a.at is not None:
            env = {"MAUSBOX_HEAPPROBE_MS": str(a.at)}
        elif a.at_bytes is not None:
            env = {"MAUSBOX_HEAPPROBE_BYTES": str(a.at_bytes)}
        else:
            env = {"MAUSBOX_HEAPWATCH_MODS": "1"}
        proc = heapkit._run(root, norm, "heapwatch", 1 << 19, str(heapkit._bare(exe)), **env)
        lines = proc.stdout.splitlines()
        if a.at is not None or a.at_bytes is not None:
            for ln in lines:
                if ln.startswith("HEAPPROBE") and not ln.endswith(" 0"):
                    print(ln[10:])
            return 0
        peaks = [ln for ln in lines if ln.startswith("HEAPMODS game ")]
        if peaks:
            _, _, b, t, *mods = peaks[-1].split()
            print(f"game peak (no qstr tables) {b} bytes at {t}; firmware modules loaded:")
            print("  " + " ".join(sorted(m for m in mods if not m.startswith("maus.sim") and m != "maus.sim.hw")))
        steps = [(int(m.group(1)), int(m.group(2))) for m in
                 (re.match(r"HEAPMODS game (\d+) t=(\d+)", ln) for ln in peaks)]
        big = [(t, b) for (b, t), (b0, _) in zip(steps[1:], steps) if b - b0 >= 512]
        if big:
            print("jumps of 512 bytes or more: " + ", ".join(f"t={t} ms -> {b}" for t, b in big))
        res = heapkit.watch(a.scenario, root)
        print(" ".join(f"{k}={v}" for k, v in res.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
