"""Deploy over the virtual unit at a real link's pace (115200 baud, 20 ms per command): bytes the host sends
for a full deploy, and for an incremental deploy after a one-file change."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

import mausbox  # noqa: E402,F401 - installs the micropython shim
import mausbox.deploy as deploy_mod  # noqa: E402
from mausbox import heapbudget  # noqa: E402
from mausbox.link import UnitLink  # noqa: E402
from mausbox.mpbuild import micropython_binary  # noqa: E402
from mausbox.paths import FIRMWARE_PKG  # noqa: E402
from mausbox.sim.serial import SerialUnit  # noqa: E402


def run_deploy(pty: str):
    with UnitLink(pty, timeout=30) as link:
        t = time.monotonic()
        report = deploy_mod.deploy(link, say=lambda *a: None, confirm_s=0)
        return report, time.monotonic() - t


def main() -> int:
    if micropython_binary() is None:
        print("deploy.skipped: 1 flag")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "fw" / "maus"
        shutil.copytree(FIRMWARE_PKG, snap, ignore=shutil.ignore_patterns("__pycache__"))
        deploy_mod.FIRMWARE_PKG = snap
        unit_root = Path(tmp) / "unit"
        unit_root.mkdir()
        # the board's heap plus the simulator's and the REPL server's shares: a deploy's probe must fit a board
        with SerialUnit(unit_root, heapsize=str(heapbudget.unit_heap(serial=True)), baud=115200, exec_delay_ms=20) as unit:
            full, t_full = run_deploy(unit.pty_path)
            with open(snap / "ticks.py", "a") as f:
                f.write("\nBENCH_EDIT = 1\n")
            inc, t_inc = run_deploy(unit.pty_path)
        size = sum(len(v) for v in deploy_mod.firmware_files("linux", 2822, "sim")[0].values())
    print(f"deploy.full_files: {len(full.sent)} files")
    print(f"deploy.full_payload: {size} bytes")
    print(f"deploy.full_sent: {full.bytes_sent} bytes")
    print(f"deploy.full_time_115200: {t_full:.1f} s")
    print(f"deploy.incremental_files: {len(inc.sent)} files")
    print(f"deploy.incremental_sent: {inc.bytes_sent} bytes")
    print(f"deploy.incremental_time_115200: {t_inc:.1f} s")
    return 0 if inc.sent == ["maus/ticks.mpy"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
