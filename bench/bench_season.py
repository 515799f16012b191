"""A unit that lives a season (issue 27 item 7): `season.*` lines.

Boot times (season.boot_ms_*) are bench/bench_boot.py's.

The season (tests/fw/seasonunit.py, tests/host/seasonhost.py, bench/seasonkit.py): ONE unit process on the 32-bit
MicroPython build plays GAMES (300) games back to back in virtual time, without a reboot:
- its heap is the virtual unit's at the board's (heapbudget.unit_heap, as tests/fw/unitheap.py plays a whole game)
  plus only what the bench's own set-up takes beyond that harness's (measured each run, ~4.5 KB: the littlefs
  mount over its file, the hooks on the line and the capture), and it holds heapbudget.BOARD_ONLY (maus.hw.esp32 and
  the SSD1306 driver, measured by tests/fw/test_board_only.py) all through, and from the second game family since a
  boot on heapbudget.LONG_LIVED_QSTR_TABLES (8,992 bytes: the qstr pool a board adds for good once the names of two
  games are interned; tests/fw/seasonunit.py SeasonHw.apply);
- its flash is littlefs (vfs.VfsLfs2, 4 KiB blocks as on the ESP32 port) on a file of BLOCKS blocks (384 KiB): a
  few pulls' worth of games beside a game's reserve, so the season fills it many times over (season.flash_fills:
  the bytes pulled over the capacity) and every game's start must delete pulled logs to make room;
- the games: blocks of 30, each holding every game, variant and player count the generators of tests/scenarios
  play (Mausgeflippt 2-6 players, M is for Mouse A 2-5, B 3-5, C 4-5, Mucks Mäuschen Still 2-4: 17 kinds) once,
  and 13 of the cheaper ones (Mausgeflippt, M is for Mouse A), in a seeded random order; Mausgeflippt and Mucks
  Mäuschen Still are seeded random legal play in their generator's own moves (mostly protected mice: a dozen
  rounds; mostly sticks placed), so the season fits the bench's ten minutes on an idle 2-core machine;
- a host (maus.sim.uart's line, the host's side in this process: seasonhost.Host) pulls after every 10 games
  (hello, listing, every log not marked pulled read and checked, marked pulled, `copied`); every third pull is
  asked for 20 s into the next game and waits for its end (error `game`); `status` twice a second through every
  third game of each kind;
- a crash (a MemoryError out of the main loop, a watchdog reset, a process that ends without its end line, as
  when it runs out of memory while it says how it crashed) restarts the unit from its flash as a board resets (a
  new process), at the next game.

Printed: season.games (games that reached game_end), season.crashes, season.memory_errors (console lines
naming a MemoryError, and `nomem` answers), season.watchdog_resets, season.unpulled_lost (games started that
the host never got: deleted, or never listed), season.records_lost (per game: the records the unit wrote, its
console's EV lines, less those in the copy the host pulled), season.capture_p99_us_under_polling and
season.capture_p99_us (per press, from its edge on the simulated pin to the first-edge time the capture path
hands the unit, in the polled games and in the others: the same mix of games), and what explains them
(presses counted, pulls, pull problems, scores against the generators' oracles, the flash, wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "host"), str(ROOT / "tests" / "host"), str(ROOT / "firmware")]

from mausbox.mpbuild import micropython_binary  # noqa: E402

GAMES = 300
BLOCKS = 96  # 4 KiB blocks of littlefs: 384 KiB of flash


def season(games: int, blocks: int, seed: int, keep: Path | None = None) -> dict:
    """The season (module docstring): one unit process plays `games` games; -> its figures."""
    import seasonhost
    import seasonkit
    from mausbox import heapbudget

    exe = micropython_binary("32")
    if exe is None:
        raise FileNotFoundError("no 32-bit MicroPython (make setup)")
    gs = seasonkit.games(games, seed)
    plan = seasonkit.plan(gs)
    with tempfile.TemporaryDirectory(prefix="mausbox-season-") as d:
        work = Path(d)
        tree = seasonhost.prepare(work, str(exe))
        heap = seasonhost.fair_heap(str(exe), work, tree, heapbudget.unit_heap(), blocks)
        os.environ["MAUSBOX_SEASON_POOL"] = str(heapbudget.LONG_LIVED_QSTR_TABLES)  # the board's, from a 2nd game on
        run = seasonhost.season(str(exe), work, tree, heap, blocks, heapbudget.BOARD_ONLY, plan.actions)
        cap = (work / "capture.bin").read_bytes()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / "capture.bin").write_bytes(cap)
            (keep / "console.txt").write_text("\n".join(run.console) + "\n")
            (keep / "pace.txt").write_text("".join("%s %d %.1f\n" % (g.kind, g.length_ms, b - a) for g, a, b in
                                                   zip(gs, run.marks, run.marks[1:] + [run.wall])))
    f = figures(plan, run.host, run.console, cap, run.crashes, run.wall, blocks)
    f["heap"] = heap
    return f


def figures(plan, host, console: list[str], cap: bytes, crashed: int, wall: float, blocks: int) -> dict:
    import seasonhost

    numbered = seasonhost.games(console)  # the unit's records of each game as it wrote them
    ev = [recs for _, recs in numbered]
    ends = sum(1 for g in ev if g and '"type":"game_end"' in g[-1])
    by_num = {int(n.split("-")[0]): p for n, p in host.pulled.items()}
    lost = [k for k in range(1, len(ev) + 1) if k not in by_num]
    rec_lost = 0
    mismatch = 0
    for k, recs in enumerate(ev, 1):
        p = by_num.get(k)
        if p is None:
            continue
        got = p.data.decode().splitlines()
        rec_lost += max(0, len(recs) - len(got))
        mismatch += got != recs
    scores = []
    for k, recs in numbered:
        k -= 1
        if 0 <= k < len(plan.games) and recs and '"type":"game_end"' in recs[-1]:
            end = json.loads(recs[-1])
            want = plan.games[k].expect
            if {str(a): b for a, b in end.get("scores", {}).items()} != want.get("scores"):
                scores.append("game %d %s: scores %s, the generator's %s" % (k + 1, plan.games[k].kind,
                                                                            end.get("scores"), want.get("scores")))
    # each MemoryError the console names once (a crash: its traceback's last line, not the bench's own summary of
    # it), and each `nomem` answer
    mem = sum(1 for x in console if "MemoryError" in x and not x.startswith("SEASON crash")) + host.results.get(
        "nomem", 0)
    wdt = sum(1 for x in console if "task_wdt" in x)
    lat: dict[int, list[int]] = {0: [], 1: []}
    by_game: dict[int, list[int]] = {}
    for i in range(0, len(cap) - 5, 6):
        v = cap[i + 3] | cap[i + 4] << 8 | cap[i + 5] << 16
        lat[cap[i]].append(v)
        by_game.setdefault(cap[i + 1] | cap[i + 2] << 8, []).append(v)
    total = sum(len(p.data) for p in host.pulled.values())
    return {
        "games": ends, "started": len(ev), "crashes": crashed, "memory_errors": mem,
        "watchdog_resets": wdt, "stalls": sum(1 for x in console if x.startswith("SEASON stalled")),
        "unpulled_lost": len(lost), "records_lost": rec_lost, "logs_differ": mismatch,
        "score_mismatches": len(scores), "score_lines": scores, "by_game": by_game, "pulls": host.pulls, "pulls_in_game": host.pull_in_game,
        "pull_problems": len(host.bad), "host_results": host.results, "lat": lat, "wall": wall,
        "flash_bytes": blocks * 4096, "log_bytes": total, "console_tail": console[-40:], "kinds": [g.kind for g in plan.games], "polled": plan.polled, "bad": host.bad[:10],
        "crash_lines": [x for x in console if x.startswith("SEASON crash ")][:5], "lost": lost,
        "nomem": host.nomem}


def p99(xs: list[int]) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.99 * len(xs)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=GAMES)
    ap.add_argument("--blocks", type=int, default=BLOCKS)
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--keep", type=Path, help="keep the unit's console here")
    args = ap.parse_args()
    if micropython_binary() is None:
        print("season.skipped: 1 flag")
        return 0
    f = season(args.games, args.blocks, args.seed, args.keep)
    for k in ("games", "crashes", "memory_errors", "watchdog_resets", "stalls", "unpulled_lost", "records_lost"):
        print(f"season.{k}: {f[k]} " + ("games" if k in ("games", "unpulled_lost") else "records"
                                       if k == "records_lost" else "count"), flush=True)
    print(f"season.capture_p99_us_under_polling: {p99(f['lat'][1]):.0f} us")
    print(f"season.capture_p99_us: {p99(f['lat'][0]):.0f} us")
    print(f"season.capture_presses_under_polling: {len(f['lat'][1])} presses")
    print(f"season.capture_presses: {len(f['lat'][0])} presses")
    print(f"season.pulls: {f['pulls']} count")
    print(f"season.pulls_waiting_for_a_game: {f['pulls_in_game']} count")
    print(f"season.pull_problems: {f['pull_problems']} count")
    print(f"season.logs_differing_from_the_units_records: {f['logs_differ']} count")
    print(f"season.score_mismatches: {f['score_mismatches']} games")
    print(f"season.flash_bytes: {f['flash_bytes']} bytes")
    print(f"season.flash_fills: {f['log_bytes'] / f['flash_bytes']:.1f} x")
    print(f"season.wall_s: {f['wall']:.0f} s")
    ok = f["games"] == args.games and not f["crashes"]
    if not ok or f["bad"]:
        sys.stderr.write("\n".join(f["crash_lines"] + f["bad"] + f["console_tail"]) + "\n")
    if f["nomem"]:
        sys.stderr.write("season: requests answered nomem: %s\n" % f["nomem"])
    if f["lost"]:
        sys.stderr.write("season: games started and never pulled (log numbers): %s\n" % f["lost"])
    if f["score_lines"]:
        sys.stderr.write("\n".join(f["score_lines"]) + "\n")
    if args.keep:
        (args.keep / "latency.txt").write_text("".join(
            "%d %s %s %s\n" % (k, f["kinds"][k - 1] if 0 < k <= len(f["kinds"]) else "-", f["polled"][k - 1]
                               if 0 < k <= len(f["polled"]) else "-", sorted(v)[-5:])
            for k, v in sorted(f["by_game"].items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
