"""M is for Mouse: the pair finder on the MicroPython unix port.

Figures: the cost of one Pairs.find on the largest table the unit checks after every change (variant C:
8 cards, no chips yet, the 8-card deal with the most pairs found among 3,000 deals), in µs per call and
heap bytes per call (gc.mem_alloc() before and after 1,000 calls; and whether a call runs with the heap
locked); for scale, variant B's worst case (all 23 cards face up) and a claim check (Pairs.between).
The unix port on a PC is far faster than an ESP32 at 240 MHz; the allocation figures carry over as they are.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox.mpbuild import micropython_binary  # noqa: E402

SCRIPT = r"""
import gc, json, time, micropython
from maus.games.mim import catalog as mim_catalog
from maus.games.mim.engine import Pairs

with open(mim_catalog.default_path()) as f:
    cat = mim_catalog.build(json.load(f))
f = Pairs(cat.cards)

# the worst 8-card deal: most pairs (xorshift32 deals, the same every run)
s = 2463534242
best = None
deck = list(range(23))
slots = bytearray(8)
used = bytearray(8)
for _ in range(3000):
    for i in range(22, 0, -1):
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        j = s % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    for i in range(8):
        slots[i] = deck[i]
    n = f.find(slots, 8, used)
    if best is None or n > best[0]:
        best = (n, bytes(slots))
slots = bytearray(best[1])

def bench(name, fn, n=2000):
    fn()
    gc.collect()
    a = gc.mem_alloc()
    t0 = time.ticks_us()
    for _ in range(n):
        fn()
    dt = time.ticks_diff(time.ticks_us(), t0)
    alloc = gc.mem_alloc() - a
    micropython.heap_lock()
    try:
        fn()
        locked = 1
    except MemoryError:
        locked = 0
    micropython.heap_unlock()
    print("mim.%s: %.1f us" % (name, dt / n))
    print("mim.%s.alloc: %d bytes/call" % (name, alloc // n))
    print("mim.%s.runs_heap_locked: %d flag" % (name, locked))

print("mim.worst_8_card_deal.pairs: %d pairs" % best[0])
bench("find_8_cards_all_letters_free", lambda: f.find(slots, 8, used))
all23 = bytearray(range(23))
used23 = bytearray(23)
print("mim.all_23_cards.pairs: %d pairs" % f.find(all23, 23, used23))
bench("find_23_cards", lambda: f.find(all23, 23, used23))
bench("between_two_cards", lambda: f.between(0, 0, 4, 0))
"""


def main() -> int:
    mpy = micropython_binary()
    if mpy is None:
        print("bench_mim: MicroPython unix port not found", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_mim_mpy.py"
        script.write_text(SCRIPT)
        env = dict(os.environ, MICROPYPATH=f"{ROOT / 'firmware'}:.frozen")
        proc = subprocess.run([str(mpy), "-X", "heapsize=96k", str(script)], capture_output=True, text=True,
                              env=env, cwd=tmp)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr or proc.stdout)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
