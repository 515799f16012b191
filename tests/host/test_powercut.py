"""Power cuts at the block-device level, exhaustively, on the real MicroPython unix port.

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


def test_every_cut_during_a_200_event_game_esp32_blocks():
    s = campaign("every", "24", "200", "4096")
    assert s["records"] == 202 and s["block_size"] == 4096
    assert s["cuts"] == s["ops"] + 1 > 3000
    assert s["lost"] == 0 and s["mount_failures"] == 0 and s["crashes"] == 0 and s["bad"] == 0
    assert 0 < s["dropped"] < s["cuts"]
