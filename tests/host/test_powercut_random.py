"""Power cuts at random points of longer games and during boot recovery (see test_powercut.py).

littlefs (vfs.VfsLfs2) on a RAM block device loses power after its Nth block write or erase, for every N
during a game of 202 records on the ESP32's 4 KB blocks, and at 1,000 random points in four games of 802
records on 512-byte blocks; every third (resp. second) cut tears the write it hits half-way.
`make bench` also runs every cut of a 252-record game on 512-byte blocks. The surviving image is remounted
and recovered. The driver is tests/fw/powercut.py, run once per campaign: a generous heap holds the write
journal (test scaffolding; the firmware itself runs in the 96 KB dual-run tests).
"""

from __future__ import annotations

import re

from conftest import FWTESTS, run_micropython


def campaign(*args: str) -> dict[str, int]:
    proc = run_micropython(FWTESTS / "powercut.py", *args, heapsize="32m", timeout=240)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    got = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", out)}
    assert "first=None" in out, out
    return got


def test_random_cuts_in_longer_games():
    # 300 here keeps `make test` fast; `make bench` runs the full 1,000 (powercut.random_1000_cuts).
    s = campaign("random", "256", "800", "300")
    assert s["cuts"] == 300
    assert s["lost"] == 0 and s["mount_failures"] == 0 and s["crashes"] == 0 and s["bad"] == 0


def test_power_cuts_during_boot_recovery():
    # At 18 points of a game's own power cut, every write/erase of the recovery that follows is cut too;
    # the next boot must still recover, losing nothing that had been flushed.
    s = campaign("recovery", "96", "60", "20")
    assert s["runs"] > 100 and s["cuts"] == s["runs"]
    assert s["lost"] == 0 and s["mount_failures"] == 0 and s["crashes"] == 0 and s["bad"] == 0
