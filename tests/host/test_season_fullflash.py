"""2,000 logs on a full flash (issue 27, "Must show"): the unit boots, starts a game, a host pulls the logs, and no
unpulled game is deleted.

The virtual unit of tests/fw/seasonunit.py at the board's heap (with the board-only modules' share held all
through): littlefs on a file of 4 KiB blocks holding 2,000 finished logs, every 20th not pulled, and a file taking
the rest of the flash down to a block or two, so the game's start must make room. A host on its console line
(tests/host/seasonhost.py) asks for a pull while the game runs (told `game`, it waits for the game's end, as
`mausbox logs pull` does), then reads and checks every log not marked pulled and marks it.
"""

from __future__ import annotations

import json
import re

import pytest
import seasonhost
from mausbox import heapbudget, mpbuild

SCENARIO = "mim-a-3p"  # a short game (52 s)
LOGS = 2000
UNPULLED_EVERY = 20
BLOCKS = 2600  # 10.4 MiB: 2,000 logs of a block each, their directory, and the file that fills the rest

pytestmark = pytest.mark.skipif(mpbuild.binary() is None, reason="no 32-bit MicroPython (make setup)")


def test_2000_logs_on_a_full_flash_boot_play_pull_and_keep_every_unpulled_game(tmp_path):
    exe = str(mpbuild.binary())
    tree = seasonhost.prepare(tmp_path, exe)
    heap = seasonhost.fair_heap(exe, tmp_path, tree, heapbudget.unit_heap(), BLOCKS)
    filled = seasonhost.unit(exe, tmp_path, tree, 16 << 20, BLOCKS, 0, "fill:%d:%d" % (LOGS, UNPULLED_EVERY))
    assert filled.returncode == 0, filled.stdout[-2000:] + filled.stderr[-2000:]
    unpulled = set(re.findall(r"^SEASON unpulled (\S+)$", filled.stdout, re.M))
    assert len(unpulled) == LOGS // UNPULLED_EVERY
    free = int(re.search(r"^SEASON filled (\d+) blocks free$", filled.stdout, re.M).group(1))
    assert free <= 3, filled.stdout[-500:]  # full: far less than a game's reserve (maus.log.start.WORST)

    with open(seasonhost.ROOT / "tests" / "scenarios" / f"{SCENARIO}.jsonl") as f:
        acts = [json.loads(x) for x in f if x.strip() and not x.startswith("#")]
    pull = [{"at_ms": 6000, "host": {"op": "hello", "host": "test", "proto": 1}},  # in the game: it waits
            {"at_ms": 6000, "host": {"op": "logs"}}]
    run = seasonhost.season(exe, tmp_path, tree, heap, BLOCKS, heapbudget.BOARD_ONLY,
                            sorted(acts + pull, key=lambda a: a["at_ms"]), mode="again", timeout=600)
    said = "\n".join(x for x in run.console if not x.startswith(("EV ", "SAY ")))
    assert run.rc == 0 and "MAUSBOX READY" in said and "SEASON end crashes 0 wdt 0" in said, said[-3000:]
    host = run.host
    games = seasonhost.records(run.console)
    assert len(games) == 1 and '"type":"game_end"' in games[0][-1], said[-2000:]  # it started and ended a game
    new = "%05d-mim.jsonl" % (LOGS + 1)

    # the pull: asked during the game, it waited for its end, then took every log not marked pulled, each checked
    assert host.pulls == 1 and host.pull_in_game == 1 and host.results.get("game", 0) >= 1, host.results
    assert not host.bad, host.bad
    assert set(host.pulled) == unpulled | {new}, sorted(set(host.pulled) ^ (unpulled | {new}))[:10]
    assert host.pulled[new].data.decode().splitlines() == games[0]  # the game's log, every record the unit wrote
    # ... and no unpulled game was deleted to make room, while pulled ones were (the flash was full)
    listed = {n for n, _ in host.listing if n.endswith("-mms.jsonl")}
    assert unpulled <= listed
    assert len(listed) < LOGS, "the game's start made no room"
    assert all(int(n[:5]) % UNPULLED_EVERY for n in set("%05d-mms.jsonl" % i for i in range(1, LOGS + 1)) - listed)
