"""The bench's count of the names a board interns (bench/heapkit.py) and the pools a long-lived unit adds for them."""

from __future__ import annotations

import sys

from conftest import ROOT
from mausbox import heapbudget

sys.path.insert(0, str(ROOT / "bench"))

import heapkit  # noqa: E402


def _q(**sets: str) -> dict[str, set[str]]:
    return {k: set(v.split()) for k, v in sets.items()}


def test_a_firmware_name_the_watcher_interned_first_is_the_boards_and_so_is_its_text():
    # "spend" is the watcher's own name and a firmware one: the run never shows it interned, a board interns it
    q = _q(start="spend _st _prefill", esp32="spend _st _prefill", fw="spend _st _prefill maus",
           sim="spend _st _prefill maus _emu tap", game="spend _st _prefill maus _emu tap Catalog")
    fw = {"spend", "maus", "tap", "Catalog"}
    names = heapkit.board_names(q, "game", fw)
    assert names == {"spend", "maus", "tap", "Catalog"}  # not the watcher's _st, not the simulator's _emu
    # paid by neither the board's live heap: "spend" (before the start) and "tap" (the simulator's window)
    assert heapkit.unpaid_text(q, names) == len("spend") + 1 + len("tap") + 1


def test_a_name_the_esp32_has_in_rom_is_never_the_boards():
    q = _q(start="", esp32="", fw="", sim="", game="Pin neopixel Catalog")
    assert heapkit.board_names(q, "game", {"Pin", "Catalog"}) == {"Catalog"}


def test_a_unit_that_played_every_game_holds_the_next_pool():
    # one game after a boot stays under 1,260 names; every game's names pass it, and the board adds 1,280 entries
    assert heapbudget.board_qstr_tables(1260) == heapbudget.board_qstr_tables(heapbudget.FW_QSTRS) == 9008
    assert heapbudget.board_qstr_tables(1261) == 9008 + 8992
    assert heapbudget.LONG_LIVED_QSTR_TABLES == 8992
    assert heapbudget.board_qstr_tables(heapbudget.EVERY_GAME_QSTRS) == heapbudget.board_qstr_tables(2540)
