# What a board holds that the virtual unit does not load (host/mausbox/heapbudget.py BOARD_ONLY, the ballast the
# whole-game heap tests hold besides: tests/fw/unitheap.py). The virtual unit runs the board's own hardware layer
# (maus.hw.esp32, its setup, the SSD1306 driver) on the emulated `machine` (maus.sim.wiring), so every firmware
# module a board's hardware loads is loaded in the virtual unit too, and the charge is nothing.
import json
import os
import sys

from fwtest import repo_path
from maus.sim import world  # noqa: F401 - the simulated part this file carries

HEAP_BUDGET = "board"
_MPY = sys.implementation.name == "micropython"


def _load(name):
    with open(repo_path("boards") + "/%s.json" % name) as f:
        return json.load(f)


def _firmware(mods):
    # the firmware's own modules (a board's), not the simulator's
    return {m for m in mods if m.startswith("maus.") and not m.startswith("maus.sim.") and m != "maus.sim.hw"}


def test_the_virtual_unit_loads_every_module_a_boards_hardware_loads():
    if not _MPY:
        return
    from maus.sim import emulate
    from maus.sim.wiring import Wiring

    board = _load("esp32-devkitc")
    wiring = Wiring(board, world.World(0, model=world.Esp32Timing(1), rebase=True))
    emulate.install(wiring)
    try:
        before = set(sys.modules)
        from maus.hw import open_hardware

        hw = open_hardware(board)
        assert type(hw).__module__ == "maus.hw.esp32"
        on_board = _firmware(set(sys.modules) - before)
    finally:
        emulate.uninstall()
    assert "maus.hw.esp32" in on_board and "maus.drivers.ssd1306" in on_board, on_board
    import maus

    for m in on_board:
        maus.unload(m)
    hw = None
    before = set(sys.modules)
    hw = open_hardware(_load("sim"))
    in_sim = _firmware(set(sys.modules) - before)
    assert isinstance(hw, sys.modules["maus.hw.esp32"].Hardware) and hw.display is not None and hw.spi is not None
    assert on_board <= in_sim, on_board - in_sim
    held = int(os.getenv("MAUSBOX_BOARD_ONLY") or 0)
    print("board-only modules:", sorted(on_board - in_sim), "charged", held)
    assert held == 0, held
