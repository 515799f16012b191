"""Boot time of the virtual unit (`mausbox sim --serial`, real time) with no logs and with 2,000 (issue 27 item 5):
power-on to MAUSBOX READY (status.json written), the median of RUNS boots of each, interleaved.

- season.boot_ms_empty: no logs.
- season.boot_ms_2000_logs: 2,000 finished logs, a third of them pulled (tests/host/fullflash.py), the newest one
  cut by a power loss (its recovery is part of the boot).
- season.boot_2000_logs_over_empty: the difference in %.

Both units have the flash of a 16 MB module (MAUSBOX_FLASH_BYTES): the board's 2 MiB partition holds about 480 of
these logs (host/mausbox/sim/vflash.py). Each round of boots starts 2 s after the last change to the logs, as a
unit's logs are older than its boot (the virtual unit reads a directory changed in the last 2 s again at each path:
host/mausbox/sim/replserver.py _Jail.links).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "host"), str(HERE.parent / "tests")]

from mausbox.mpbuild import micropython_binary  # noqa: E402

RUNS = 7
FLASH = 16 * 1024 * 1024 - 0x200000


def boot_ms(root: Path) -> float:
    from mausbox.cmd_sim import wait_ready
    from mausbox.sim import run as simrun
    from mausbox.sim import tui as simtui
    from mausbox.sim.serial import SerialUnit

    (root / "status.json").unlink(missing_ok=True)
    (root / ".sim").mkdir(exist_ok=True)
    ctl = simtui.Link(root)
    since = time.time() - 1
    t0 = time.monotonic()
    with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env={**ctl.env(), "MAUSBOX_FLASH_BYTES": str(FLASH)}):
        # status.json looked for every 2 ms: at the default 50 ms each figure was a multiple of ~55 ms
        assert wait_ready(root, since, timeout=600, poll=0.002), "the virtual unit did not boot"
        return (time.monotonic() - t0) * 1000


def main() -> int:
    if micropython_binary() is None:
        print("season.boot_skipped: 1 flag")
        return 0
    from fullflash import fill
    from maus.log import writer as gamelog
    from mausbox.sim import run as simrun

    with tempfile.TemporaryDirectory(prefix="mausbox-boot-") as d:
        base = Path(d) / "fw"
        simrun.prepare_root(base)
        empty, full = Path(d) / "empty", Path(d) / "full"
        shutil.copytree(base, empty)
        shutil.copytree(base, full)
        fill(full, 2000)
        cut = gamelog.encode(0, 0, "game_start", {"v": 2, "game": "mms", "n": 2001})
        (full / "logs" / "02001-mms.jsonl").write_bytes(cut + b'{"seq": 1, "t"')
        (full / "logs" / "counter").write_text("2002")
        e, f = [], []
        for k in range(RUNS):  # interleaved: a busy machine weighs on both alike
            time.sleep(2)  # the files older than the boot (the first boot's recovery rewrote the cut log)
            e.append(boot_ms(empty))
            f.append(boot_ms(full))
            if k == 0:
                recs = (full / "logs" / "02001-mms.jsonl").read_bytes().splitlines()
                assert b'"game_abort"' in recs[-1], recs[-1]  # the boot recovered the cut log
    me, mf = statistics.median(e), statistics.median(f)
    print(f"season.boot_ms_empty: {me:.0f} ms", flush=True)
    print(f"season.boot_ms_2000_logs: {mf:.0f} ms", flush=True)
    print(f"season.boot_2000_logs_over_empty: {100 * (mf - me) / me:.1f} %", flush=True)
    print("boot runs (ms): empty %s, 2000 logs %s" % ([round(x) for x in e], [round(x) for x in f]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.pop("MAUSBOX_FLASH_BYTES", None)
    raise SystemExit(main())
