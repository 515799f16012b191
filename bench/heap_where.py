"""Where a scenario's heap goes, for cutting it: `python bench/heap_where.py SCENARIO [--at MS]`.

Without --at: the board-share peaks per phase (bench/heapkit.watch, qstr pool tables included) and the
firmware modules loaded at the game phase's highest peak. With --at MS: the unit taken apart piece by
piece at that moment of virtual time (bench/mpy/heapwatch.py MAUSBOX_HEAPPROBE_MS), the bytes each
removal freed. With --alive: the modules let go whose code is still alive, at each firmware load (a second copy
of a module loaded while its first is held is RAM paid twice). A development tool, not a figure of `make bench`."""

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
    ap.add_argument("--alive", action="store_true",
                    help="at each firmware module's load, the modules let go (not in sys.modules) whose code is "
                         "still alive: held by an object, a function, or a stale pointer the GC finds")
    a = ap.parse_args()
    exe = heapkit.micropython_binary()
    if exe is None:
        print("no MicroPython unix port (make setup)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "unit"
        norm = heapkit.prepare(a.scenario, root)
        if a.alive:
            env = {"MAUSBOX_HEAPWATCH_LOADS": "2"}
        elif a.at is not None:
            env = {"MAUSBOX_HEAPPROBE_MS": str(a.at)}
        elif a.at_bytes is not None:
            env = {"MAUSBOX_HEAPPROBE_BYTES": str(a.at_bytes)}
        else:
            env = {"MAUSBOX_HEAPWATCH_MODS": "1"}
        proc = heapkit._run(root, norm, "heapwatch", 1 << 19, str(heapkit._bare(exe)), **env)
        lines = proc.stdout.splitlines()
        if a.alive:
            _alive(lines)
            return 0
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
        print(" ".join(f"{k}={v}" for k, v in res.items() if not k.endswith("_names")))
    return 0


def _alive(lines: list[str]) -> None:
    # A module's object (its context: globals, constants) is an "M" block in MicroPython's heap map (py/gc.c
    # gc_dump_alloc_table): one whose address is no module in sys.modules is a module let go whose code something
    # still holds. Printed where the set changes.
    names: dict[int, str] = {}
    cur = ("", "", "")
    prev = None
    i = 0
    while i < len(lines):
        ln = lines[i]
        i += 1
        if ln.startswith("HEAPLOAD "):
            _, name, addr, t, phase = ln.split()
            names[int(addr, 16)] = name
            cur = (name, t, phase)
        elif ln.startswith("HEAPLIVE"):
            live = {int(x, 16) for x in ln.split()[1:]}
            while i < len(lines) and not lines[i].startswith("GC memory layout"):
                i += 1
            base = int(lines[i].split("from ")[1].rstrip(":"), 16)
            blocks = set()
            i += 1
            while i < len(lines) and re.match(r"[0-9a-f]{8}: ", lines[i]):
                off = int(lines[i][:8], 16)
                blocks.update(base + off + 16 * c for c, ch in enumerate(lines[i][10:]) if ch == "M")
                i += 1
            dead = " ".join(sorted(names[b] for b in blocks - live if b in names)) or "-"
            if dead != prev:
                print(f"{cur[1]} {cur[2]} loading {cur[0]}: let go, still alive: {dead}")
                prev = dead


if __name__ == "__main__":
    raise SystemExit(main())
