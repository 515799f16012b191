"""Mausgeflippt on the MicroPython unix port (96 KB heap): the heap the game holds once loaded from .mpy
as deployed (and from source, as the tests load it), the compact catalog, the most heap in use during
random games (with the test table simulator, also from .mpy), and the cost of one reveal (race, claims, verdicts) on the host.

Prints `name: value unit` lines. Objects on the 64-bit unix port are up to twice their ESP32 size.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))

from mausbox.build import compile_file  # noqa: E402
from mausbox.mpbuild import micropython_binary, sim_march  # noqa: E402

FW = ROOT / "firmware"
# The firmware as deployed (maus/ as .mpy, not the simulator): the game imports what it needs of it.
MODULES = sorted(p.relative_to(FW).as_posix() for p in (FW / "maus").rglob("*.py")
                 if "/sim/" not in p.as_posix() and not p.name.startswith(("sim.", "esp32")))
GAMES = 30

SCRIPT = """
import gc, sys, time
gc.collect()
base = gc.mem_alloc()
import maus.games.mausgeflippt.rules
from maus.games.mausgeflippt import cards as mausgeflippt_cards
gc.collect()
code = gc.mem_alloc() - base
from maus.games.mausgeflippt import catalog as mausgeflippt_catalog
cat = mausgeflippt_cards.load(mausgeflippt_catalog.read_file())
gc.collect()
print("RES", code, gc.mem_alloc() - base - code)
if sys.argv[-1] == "play":
    import test_mausgeflippt_sim as S
    S.CAT = cat
    reveals = 0
    t0 = time.ticks_us()
    for seed in range(1, %d + 1):
        sim = S.Sim(seed)
        while not sim.g.done:
            sim.one_reveal()
            reveals += 1
    dt = time.ticks_diff(time.ticks_us(), t0)
    peak = 0
    for seed in range(1, 6):  # live heap after every reveal
        sim = S.Sim(seed)
        while not sim.g.done:
            sim.one_reveal()
            gc.collect()
            peak = max(peak, gc.mem_alloc())
    print("PLAY", reveals, dt, peak - base)
""" % GAMES


def run(path: str, script: Path, *args: str) -> str:
    exe = micropython_binary()
    proc = subprocess.run([str(exe), "-X", "heapsize=96k", str(script), *args], capture_output=True, text=True,
                          env={"MICROPYPATH": path}, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(proc.stdout + proc.stderr)
    return proc.stdout


def main() -> int:
    if micropython_binary() is None:
        print("mausgeflippt.skipped: 1 flag (no MicroPython unix port)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for rel in MODULES:
            out = (t / rel).with_suffix(".mpy")
            out.parent.mkdir(parents=True, exist_ok=True)
            err = compile_file(FW / rel, out, march=sim_march())
            if err:
                raise SystemExit(err)
        for name in ("fwtest.py", "tablefake.py", "test_mausgeflippt_sim.py"):  # the random-play table
            err = compile_file(ROOT / "tests" / "fw" / name, (t / name).with_suffix(".mpy"), march=sim_march())
            if err:
                raise SystemExit(err)
        shutil.copytree(FW / "maus/catalogs", t / "maus/catalogs")
        shutil.copytree(FW / "maus/texts", t / "maus/texts")  # the prompts, read from flash when shown
        script = t / "bench.py"
        script.write_text(SCRIPT)
        mpy = run(str(t), script, "play").split()
        alone = t / "src"  # the script's own folder comes first in sys.path: none of the .mpy beside it
        alone.mkdir()
        (alone / "bench.py").write_text(SCRIPT)
        src = run(str(FW), alone / "bench.py", "load").split()
    res = mpy.index("RES")
    play = mpy.index("PLAY")
    reveals, dt, peak = int(mpy[play + 1]), int(mpy[play + 2]), int(mpy[play + 3])
    print(f"mausgeflippt.heap_game_mpy: {mpy[res + 1]} bytes")
    print(f"mausgeflippt.heap_game_source: {src[src.index('RES') + 1]} bytes")
    print(f"mausgeflippt.heap_catalog_compact: {mpy[res + 2]} bytes")
    print(f"mausgeflippt.heap_live_peak_in_random_games: {peak} bytes (game, catalog and the simulated table)")
    print(f"mausgeflippt.random_games: {GAMES} games")
    print(f"mausgeflippt.reveals_per_game: {reveals / GAMES:.1f} reveals")
    print(f"mausgeflippt.reveal_cost_unix: {dt / reveals:.0f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
