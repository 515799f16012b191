# What a board holds that the virtual unit does not load: its own hardware layer (maus.hw.esp32) and the
# SSD1306 display driver (maus.drivers.ssd1306). The whole-game heap tests at the board's heap (HEAP_BUDGET = "board") hold this
# much besides (tests/fw/unitheap.py), so a game runs out of memory there where the board would (issue 27
# item 1). Measured here against the emulated `machine` (maus.sim.wiring), as host/mausbox/heapbudget.py's
# BOARD_ONLY says: the modules' code and globals once imported, nothing they make.
import gc
import json
import os
import sys

from fwtest import repo_path
from maus.sim import world  # noqa: F401 - the simulated part this file carries

HEAP_BUDGET = "board"
_MPY = sys.implementation.name == "micropython"


def test_the_board_only_modules_take_what_the_heap_tests_hold_for_them():
    if not _MPY:
        return
    from maus.sim.wiring import Wiring

    with open(repo_path("boards") + "/esp32-devkitc.json") as f:
        board = json.load(f)
    wiring = Wiring(board, world.World(0, model=world.Esp32Timing(1), rebase=True))
    wiring.install()
    try:
        for m in ("maus.hw.esp32", "maus.drivers.ssd1306"):
            sys.modules.pop(m, None)
        import machine  # noqa: F401 - the emulated one, loaded before the count

        gc.collect()
        before = gc.mem_alloc()
        import maus.drivers.ssd1306  # noqa: F401 - the project's own, as esp32_setup loads it
        import maus.hw.esp32  # noqa: F401

        gc.collect()
        took = gc.mem_alloc() - before
    finally:
        wiring.uninstall()
    held = int(os.getenv("MAUSBOX_BOARD_ONLY") or 0)
    print("board-only modules:", took, "bytes; charged", held)
    assert took <= held <= took * 1.1 + 512, (took, held)
