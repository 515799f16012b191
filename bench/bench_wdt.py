"""Watchdog: the longest the virtual unit's watchdog went unfed (ms, real time on this computer's unix port) from power-on
to the menu and at a deploy. The unit's watchdog bites at 8,000 ms (maus.unit.WDT_MS); each figure
should stay below 4,000: half the timeout, for a board slower than this computer.

The watchdog model (maus/sim/hw.py _Watchdog) keeps the longest gap between two feeds (the app's and the keeper's,
across soft resets) in the unit's .wdt file, which this script reads.
- wdt.max_gap_ms.boot: main.py starts the watchdog, the boot steps run, the menu shows.
- wdt.max_gap_ms.deploy: `mausbox deploy` to a unit running its app: raw REPL (boot.py's keeper), the copy,
  the soft reset and the boot that follows.
- wdt.max_gap_ms.make_room: a game starts on a unit whose flash is full of 2,000 logs, a third of them pulled
  (tests/host/fullflash.py): make_room checks and deletes pulled logs, oldest first, until the game has room.

Not measured: a boot over `mpremote mount` (every import read over the serial link). On the virtual unit it reads the
simulator's own modules (maus/sim) over the link as well, ~300 KB of source compiled on the unit (out of memory at
512 KB) or ~100 KB compiled (the watchdog bit after 8 s of reading them on a loaded machine), which says nothing of a
board, whose mounted tree has no simulator.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "tests" / "host"), str(ROOT / "tests")]  # tests/: conftest, for scenariokit

from mausbox.mpbuild import micropython_binary  # noqa: E402


def _gap(root: Path) -> int:
    time.sleep(1.5)  # the model writes .wdt once a second
    return int(json.loads((root / ".wdt").read_text())["max_gap_ms"])


def boot(tmp: Path) -> int:
    from ptyunit import PtyUnit

    with PtyUnit(tmp / "boot") as unit:
        assert unit.ready
        return _gap(unit.root)


def deploy(tmp: Path) -> int:
    from mausbox.deploy import deploy as do_deploy
    from mausbox.link import UnitLink
    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit

    root = tmp / "deploy"
    root.mkdir()
    (root / "settings.json").write_text("{}")
    (root / ".sim").mkdir(exist_ok=True)
    ctl = simtui.Link(root)
    with SerialUnit(root, heapsize="512k", extra_path=[], env=ctl.env()) as unit:
        with UnitLink(unit.pty_path) as link:
            rep = do_deploy(link, say=lambda *a: None, confirm_s=60)  # first: the app is on the unit
        assert rep.ready
        with UnitLink(unit.pty_path) as link:  # again, now over a running app and its watchdog
            rep = do_deploy(link, say=lambda *a: None, confirm_s=60, force=True)
        assert rep.ready
        return _gap(root)


def make_room(tmp: Path) -> int:
    from fullflash import fill, play, simrun, wait_log
    from mausbox.cmd_sim import wait_ready
    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit

    root = tmp / "make_room"
    simrun.prepare_root(root)
    pulled, unpulled = fill(root, 2000)
    (root / ".sim").mkdir(exist_ok=True)
    ctl = simtui.Link(root)
    # The board's 2 MiB partition holds about 480 of these logs (host/mausbox/sim/vflash.py): a flash that holds the
    # 2,000 and what the boot writes, and less than a game's reserve besides. A first boot on a large one counts them.
    big = 16 * 1024 * 1024
    with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env={**ctl.env(), "MAUSBOX_FLASH_BYTES": str(big)}) as unit:
        since = time.time() - 1
        assert unit.pty_path and wait_ready(root, since, timeout=300)
    free = json.loads((root / "status.json").read_text())["free_bytes"]
    flash = big - free + 4 * 4096
    with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env={**ctl.env(), "MAUSBOX_FLASH_BYTES": str(flash)}) as unit:
        since = time.time() - 1
        assert unit.pty_path and wait_ready(root, since, timeout=300)
        play(ctl)
        recs = wait_log(root, "02001-mms.jsonl")  # make_room is done once game_start is written
        names = {p.name for p in (root / "logs").glob("*.jsonl")}
        assert unpulled <= names and len(pulled - names) > 0, "unpulled logs deleted or nothing made room"
        assert recs[0]["type"] == "game_start"
        return _gap(root)


def main() -> int:
    if micropython_binary() is None:
        print("wdt.skipped: 1 flag")
        return 0
    rc = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, fn in (("boot", boot), ("deploy", deploy), ("make_room", make_room)):
            try:
                ms = fn(tmp)
                print(f"wdt.max_gap_ms.{name}: {ms} ms", flush=True)
                if ms >= 4000:
                    rc = 1
            except Exception:  # noqa: BLE001 - one case's failure is reported, the others still run
                import traceback

                traceback.print_exc()
                print(f"wdt.max_gap_ms.{name}.failed: 1 flag", flush=True)
                rc = 1
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
