"""The firmware against a stock ESP32-WROOM-32's heap (no PSRAM, .mpy on the filesystem as `mausbox deploy`
lays it out), measured on the 32-bit MicroPython build: the budget, the peak board share after boot and
in every game (worst over that game's scenarios and variants), the largest free block after a game in the
virtual unit's heap (budget + simulator share), and the smallest heap each game's largest set-up runs in; and each
game's peak on a unit that has played every game since its boot (every game's names interned, and the pools a
board adds for them).
The same peaks for the app frozen into the image (`make image`: bytecode and names in flash), measured on the
unix port with the firmware frozen in by the same manifest (esp32.frozen.*, each game's worst scenario): a figure
for a choice, not a budget line (the product runs on the stock image).
How it is measured: bench/heapkit.py, bench/mpy/heapwatch.py; what it means: docs/build.md."""

from __future__ import annotations

import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import heapkit  # noqa: E402
from mausbox import heapbudget  # noqa: E402
from mausbox.mpbuild import micropython_binary  # noqa: E402


def _watch(path: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return heapkit.watch(Path(path), Path(tmp) / "unit")


def _watch_frozen(args: tuple[str, str]) -> dict:
    path, exe = args
    with tempfile.TemporaryDirectory() as tmp:
        return heapkit.watch(Path(path), Path(tmp) / "unit", frozen=exe)


def _after(path: str) -> tuple[dict, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "unit"
        c = heapkit.capped(Path(path), root)
        hi = heapbudget.unit_heap()
        least = heapkit.smallest_heap(Path(path), root, hi - 65536, hi, 2048) if c["ok"] else 0
        return c, least


def main() -> int:
    if micropython_binary() is None:
        print("esp32.heap.skipped: 1 flag (no MicroPython unix port)")
        return 0
    print(f"esp32.heap_budget: {heapbudget.BOARD_HEAP} bytes")
    runs = {g: heapkit.scenarios(g) for g in heapkit.GAMES}
    with ProcessPoolExecutor(2) as pool:
        watched = {g: list(pool.map(_watch, [str(p) for p in ps])) for g, ps in runs.items()}
        after = dict(zip(heapkit.GAMES, pool.map(_after, [str(heapkit.most_players(g)) for g in heapkit.GAMES])))
    boot = max(r["boot"] for rs in watched.values() for r in rs)
    print(f"esp32.heap_peak.boot: {boot} bytes")
    worst = {g: max(rs, key=lambda r: r["game"]) for g, rs in watched.items()}
    for g, w in worst.items():
        print(f"esp32.heap_peak.{g}: {w['game']} bytes")
        print(f"esp32.heap_peak.{g}.scenario: {w['scenario']} name")
        print(f"esp32.qstr_tables.{g}: {w['game_qstr_tables']} bytes")
        print(f"esp32.qstrs.{g}: {w['game_qstrs']} names")
    # A unit that has played every game since its boot holds every game's names: past 1,260 of them a board adds a
    # pool of 1,280 entries (8,992 bytes) for good. What each game's peak comes to then (its worst scenario's peak,
    # with the other games' names and their pools).
    every = set().union(*(r["game_names"] for rs in watched.values() for r in rs))
    every_tables = heapbudget.board_qstr_tables(len(every))
    print(f"esp32.qstrs.after_every_game: {len(every)} names")
    print(f"esp32.qstr_tables.after_every_game: {every_tables} bytes")
    for g, w in worst.items():
        extra = every_tables - w["game_qstr_tables"] + heapkit.name_text(every - w["game_names"])
        print(f"esp32.heap_peak_after_every_game.{g}: {w['game'] + extra} bytes")
    share = heapbudget.unit_share()
    failed = 0
    if every_tables > heapbudget.board_qstr_tables(heapbudget.EVERY_GAME_QSTRS):
        failed += 1  # the season holds too little for the board's pools (heapbudget.LONG_LIVED_QSTR_TABLES)
        sys.stderr.write(f"{len(every)} names take more pools than heapbudget.EVERY_GAME_QSTRS allows for\n")
    for g, (c, least) in after.items():
        if not c["ok"]:
            failed += 1
            print(f"esp32.runs_in_budget.{g}: 0 flag")
            sys.stderr.write(c["tail"])
            continue
        print(f"esp32.runs_in_budget.{g}: 1 flag")
        print(f"esp32.smallest_heap.{g}: {least - share} bytes")
    print(f"esp32.largest_free_after_game: {min(c['largest_free'] for c, _ in after.values())} bytes")
    failed += _frozen({g: w["scenario"] for g, w in worst.items()})
    return 1 if failed else 0


def _frozen(worst: dict[str, str]) -> int:
    from mausbox.mpbuild import BuildError, ensure_frozen

    try:
        exe = str(ensure_frozen(log=lambda m: None))
    except BuildError as e:
        print(f"esp32.frozen.skipped: 1 flag ({str(e).splitlines()[0]})")
        return 0
    paths = [str(heapkit.SCENARIOS / f"{worst[g]}.jsonl") for g in heapkit.GAMES]
    with ProcessPoolExecutor(2) as pool:
        got = dict(zip(heapkit.GAMES, pool.map(_watch_frozen, [(p, exe) for p in paths])))
    print(f"esp32.frozen.heap_peak.boot: {max(r['boot'] for r in got.values())} bytes")
    for g, r in got.items():
        print(f"esp32.frozen.heap_peak.{g}: {r['game']} bytes")
        print(f"esp32.frozen.qstrs.{g}: {r['game_qstrs']} names")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
