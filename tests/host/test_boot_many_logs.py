"""A virtual unit (`mausbox sim --serial`) with 2,000 finished logs boots: it writes status.json (MAUSBOX READY),
is not in safe mode, and still recovers the newest log, which a power cut left without its end. Its flash is
that of an ESP32 with 16 MB (a 2 MiB partition holds about 480 of these logs: littlefs gives each file over
128 bytes a 4 KB block, host/mausbox/sim/vflash.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import fullflash
import pytest
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun
from mausbox.sim import tui as simtui
from mausbox.sim.serial import SerialUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

FLASH = 16 * 1024 * 1024 - 0x200000  # the vfs partition of a 16 MB module (app and the rest: 2 MiB)


def _boot(root: Path, flash: int | None = None) -> dict:
    (root / ".sim").mkdir(exist_ok=True)
    p = root / "status.json"
    before = p.read_bytes() if p.exists() else None
    ctl = simtui.Link(root)
    env = {**ctl.env(), **({"MAUSBOX_FLASH_BYTES": str(flash)} if flash else {})}
    with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP, env=env) as u:
        end = time.monotonic() + 120
        while not (p.exists() and p.read_bytes() != before and p.read_bytes().endswith(b"}")):
            assert u._proc is not None and time.monotonic() < end, "no new status.json"
            time.sleep(0.05)
        return json.loads(p.read_text())


def test_a_unit_with_2000_logs_boots_and_recovers_its_newest_log(tmp_path):
    from maus.log import writer as gamelog

    root = tmp_path / "unit"
    simrun.prepare_root(root)
    pulled, unpulled = fullflash.fill(root, 2000)
    # the newest game, cut by a power loss: its start and a record torn in half
    cut = root / "logs" / "02001-mms.jsonl"
    start = gamelog.encode(0, 0, "game_start", {"v": 2, "game": "mms", "n": 2001})
    cut.write_bytes(start + gamelog.encode(1, 700, "note", {"text": "x"})[:20])
    (root / "logs" / "counter").write_text("2002")
    status = _boot(root, FLASH)
    assert status["safe_mode"] is False and status["problems"] == [], status
    assert status["recovered_logs"] == 1, status
    recs = [json.loads(x) for x in cut.read_bytes().splitlines()]
    assert [r["type"] for r in recs] == ["game_start", "recovered", "game_abort"], recs
    assert recs[-1]["reason"] == gamelog.POWER_LOSS
    names = {p.name for p in (root / "logs").glob("*.jsonl")}
    assert pulled | unpulled <= names  # the finished logs are all still there


def test_a_full_flash_still_gets_this_boots_status(tmp_path):
    # The flash cut to what the unit holds after two boots (the second one's count holds all the first wrote):
    # no block is free for status.json's temp file, and the earlier boot's status.json makes the room.
    root = tmp_path / "unit"
    simrun.prepare_root(root)
    fullflash.fill(root, 20, pulled_every=0)
    for _ in range(2):
        st = _boot(root)
    used = fullflash.used_blocks(root, st["free_bytes"])
    st2 = _boot(root, used * 4096)
    assert st2["free_bytes"] == 0 and st2["boot"] != st["boot"], (st, st2)
    assert not (root / "status.json.tmp").exists()
