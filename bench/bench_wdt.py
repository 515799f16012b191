"""Watchdog: the longest the virtual unit's watchdog went unfed (ms, real time on this computer's unix port) from power-on
to the menu and at a deploy. The unit's watchdog bites at 8,000 ms (maus.unit.WDT_MS); each figure
should stay below 4,000: half the timeout, for a board slower than this computer.

The watchdog model (maus/sim/hw.py _Watchdog) keeps the longest gap between two feeds (the app's and the keeper's,
across soft resets) in the unit's .wdt file, which this script reads.
- wdt.max_gap_ms.boot: main.py starts the watchdog, the boot steps run, the menu shows.
- wdt.max_gap_ms.deploy: `mausbox deploy` to a unit running its app: raw REPL (boot.py's keeper), the copy,
  the soft reset and the boot that follows.
- wdt.max_gap_ms.mount: `mpremote mount FIRMWARE exec "import main"`: the app boots with every import read over
  the serial link (mpremote's remote filesystem), the slowest boot there is.
- wdt.max_gap_ms.make_room: a game starts on a unit whose flash is full of 2,000 logs, a third of them pulled
  (tests/host/fullflash.py): make_room checks and deletes pulled logs, oldest first, until the game has room.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "tests" / "host")]

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


def mount(tmp: Path) -> int:
    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit

    root = tmp / "mount"
    root.mkdir()
    src = tmp / "mounted"
    src.mkdir()
    shutil.copytree(ROOT / "firmware" / "maus", src / "maus", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "firmware" / "main.py", src / "main.py")
    shutil.copy(ROOT / "boards" / "sim.json", src / "board.json")
    (root / ".sim").mkdir(exist_ok=True)
    ctl = simtui.Link(root)
    with SerialUnit(root, heapsize="512k", extra_path=[], env=ctl.env()) as unit:
        mpremote = shutil.which("mpremote", path=str(Path(sys.executable).parent)) or "mpremote"
        proc = subprocess.Popen([mpremote, "connect", unit.pty_path, "mount", str(src), "exec", "import main"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: list[str] = []
        threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True).start()
        end = time.monotonic() + 600
        while time.monotonic() < end and not any("MAUSBOX READY" in ln for ln in lines) and proc.poll() is None:
            time.sleep(0.2)
        try:
            assert any("MAUSBOX READY" in ln for ln in lines), "".join(lines)[-2000:]
            return _gap(root)
        finally:
            proc.kill()
            proc.wait()


def make_room(tmp: Path) -> int:
    from fullflash import fill, play, simrun, wait_log
    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit

    root = tmp / "make_room"
    simrun.prepare_root(root)
    pulled, unpulled = fill(root, 2000)
    (root / ".sim").mkdir(exist_ok=True)
    ctl = simtui.Link(root)
    with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env=ctl.env()) as unit:
        since = time.time() - 1
        from mausbox.cmd_sim import wait_ready

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
        for name, fn in (("boot", boot), ("deploy", deploy), ("mount", mount), ("make_room", make_room)):
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
