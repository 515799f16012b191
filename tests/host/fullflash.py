"""A virtual unit's flash folder holding thousands of finished logs, some of them marked pulled (their marker
holds the log's sha256, as `mausbox logs pull` leaves it), and a game played on it through the control FIFO.
The virtual unit's flash (host/mausbox/sim/vflash.py) counts a file over 128 bytes (each log here) as at least one
4 KB block of the board's 2 MiB littlefs partition, as littlefs does, so 2,000 logs fill it."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from mausbox.cmd_sim import timeline
from mausbox.sim import run as simrun
from scenariokit import live_records

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE.parent / "scenarios"


def _log(i: int) -> bytes:
    from maus.log import writer as gamelog

    return (gamelog.encode(0, 0, "game_start", {"v": 2, "game": "mms", "n": i})
            + gamelog.encode(1, 5000, "game_end", {"scores": {}, "winners": [], "breakdown": {}, "why": "x"}))


def fill(root: Path, n: int = 2000, pulled_every: int = 3) -> tuple[set[str], set[str]]:
    """n finished logs in root/logs, every `pulled_every`-th marked pulled (0: none); -> (pulled, unpulled)."""
    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pulled, unpulled = set(), set()
    for i in range(1, n + 1):
        name = "%05d-mms.jsonl" % i
        data = _log(i)
        (logs / name).write_bytes(data)
        if pulled_every and i % pulled_every == 0:
            (logs / (name + ".pulled")).write_text(hashlib.sha256(data).hexdigest())
            pulled.add(name)
        else:
            unpulled.add(name)
    (logs / "counter").write_text(str(n + 1))
    return pulled, unpulled


def play(ctl, scenario: str = "mms-2p-draw", until_s: float = 4.0) -> None:
    """The scenario's actions up to until_s (mms-2p-draw: the game card, two players join, the double press
    that starts the game) sent in real time to the unit's control FIFO (simtui.Link)."""
    path = SCENARIOS / f"{scenario}.jsonl"
    acts = simrun.parse_scenario(path.read_text(encoding="utf-8"), path.name)
    t0 = time.monotonic()
    for t, act in timeline(acts):
        if t > until_s:
            break
        time.sleep(max(0.0, t0 + t - time.monotonic()))
        ctl.send(act)


def used_blocks(root: Path, free_bytes: int) -> int:
    """Blocks of the 2 MiB flash in use, from a boot's status.json free_bytes: statvfs counts each directory's
    pair twice, the allocator once."""
    dirs = sum(1 for p in root.rglob("*") if p.is_dir() and ".sim" not in p.relative_to(root).parts)
    return 512 - free_bytes // 4096 - 2 * dirs


def wait_log(root: Path, name: str, types: tuple = ("game_start",), timeout: float = 300) -> list[dict]:
    """The records of root/logs/name once one of `types` is there (the unit runs in real time)."""
    p = root / "logs" / name
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if p.exists():
            recs = live_records(p)
            if any(r["type"] in types for r in recs):
                return recs
        time.sleep(0.2)
    raise AssertionError(f"{name}: no {types}: {p.read_text()[-500:] if p.exists() else 'no log'}")


__all__ = ["fill", "play", "wait_log", "simrun"]
