"""The heap figures the harness runs under: the board's heap and the simulated chips' measured share."""

from __future__ import annotations

import re

import pytest
from conftest import FIRMWARE, FWTESTS, INTERPS, ROOT, run_micropython
from mausbox import heapbudget

needs32 = pytest.mark.skipif(INTERPS["32"].binary is None, reason="no 32-bit MicroPython built")


@needs32
def test_sim_share_constants_match_what_the_chips_take():
    """Each simulated part's constant covers its measured heap on the 32-bit build, with no more than 10 %
    (and 512 bytes of rounding) to spare: a part that grows fails here, not as a MemoryError elsewhere."""
    got = {}
    for part in heapbudget.SIM_SHARE:  # each alone, in a fresh interpreter (simshare.py says why)
        if part == "repl":
            continue  # the next test's
        proc = run_micropython(FWTESTS / "simshare.py", part, interp=INTERPS["32"], heapsize=1 << 20)
        assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
        got.update({k: int(v) for k, v in re.findall(r"SHARE (\w+) (\d+)", proc.stdout.decode())})
    assert set(got) == set(heapbudget.SIM_SHARE) - {"repl"}, got
    for part, measured in got.items():
        _within(part, measured)


def _within(part, measured):
    const = heapbudget.SIM_SHARE[part]
    assert measured <= const <= measured * 1.1 + 512, (part, measured, const)


@needs32
def test_the_repl_server_share_matches_what_it_takes(tmp_path):
    """The virtual unit's REPL server (host/mausbox/sim/replserver.py) idle at its prompt, nothing of the
    firmware loaded: its live heap less a bare interpreter's is SIM_SHARE["repl"], which a board, whose REPL
    is C, does not pay."""
    import subprocess

    from mausbox.link import UnitLink
    from mausbox.sim.serial import SerialUnit

    exe = INTERPS["32"].binary
    probe = "import gc\ngc.collect()\nprint(gc.mem_alloc())"
    bare = int(subprocess.run([exe, "-c", probe], capture_output=True, text=True, check=True).stdout)
    with SerialUnit(tmp_path, heapsize="1m", micropython=exe) as unit, UnitLink(unit.pty_path) as link:
        repl = link.repl()
        repl.enter_raw()
        served = int(repl._exec_plain(probe).decode())  # unchecked: the checker (maus.host.cexec) is a board's cost too
    _within("repl", served - bare)


def test_the_board_heap_is_the_stock_esp32_generic_image():
    # shared/micropython/README.md: 111,936 bytes after the heap's one planned growth
    assert heapbudget.BOARD_HEAP == 111936


def test_a_test_file_carries_the_sim_parts_it_imports():
    search = [FIRMWARE, FWTESTS]
    assert heapbudget.sim_parts(FWTESTS / "test_rfid.py", search) == ["rfid"]
    assert heapbudget.sim_parts(FWTESTS / "test_ticks.py", search) == []
    assert "flash" in heapbudget.sim_parts(FWTESTS / "test_gamelog.py", search)  # through logfs
    assert heapbudget.sim_parts(FWTESTS / "test_capture.py", search) == ["world"]


def test_the_suite_header_names_the_32_bit_build_and_its_heap(pytestconfig):
    line = INTERPS["32"].describe()
    assert "32-bit" in line and str(heapbudget.BOARD_HEAP) in line
    assert (ROOT / "host" / "mausbox" / "heapbudget.py").is_file()


def test_a_test_file_is_capped_by_its_heap_budget_marker(tmp_path, monkeypatch):
    # The suite (tests/conftest.py Interp.heap) and bench/bench_harness.py both cap a file at heapbudget.file_cap
    # with its HEAP_BUDGET marker: the harness once took every file's parts' cap and ran a "boot" file in 213,056
    # bytes instead of its 168,175.
    monkeypatch.delenv("MAUSBOX_MPY_HEAP", raising=False)
    assert heapbudget.file_budget(FWTESTS / "test_unit_heap_bites.py") == "boot"
    assert heapbudget.file_budget(FWTESTS / "test_unit_heap_mg.py") == "board"
    assert heapbudget.file_budget(FWTESTS / "test_ndef.py") is None
    assert heapbudget.file_cap(["rfid"], "boot") == heapbudget.budget_cap(heapbudget.BOOT_BUDGET)
    assert heapbudget.file_cap(["rfid"], "game") == heapbudget.budget_cap(heapbudget.GAME_BUDGET)
    assert heapbudget.file_cap(["rfid"], "board") == heapbudget.unit_heap()
    assert heapbudget.file_cap(["rfid"]) == heapbudget.heap_for(["rfid"])
    assert heapbudget.file_env("board") == {"MAUSBOX_BOARD_ONLY": str(heapbudget.BOARD_ONLY)}
    assert heapbudget.file_env(None) == heapbudget.file_env("boot") == {}
    it = INTERPS["32"]
    for path in sorted(FWTESTS.glob("test_*.py")):
        parts = heapbudget.sim_parts(path, [FIRMWARE, FWTESTS])
        budget = heapbudget.file_budget(path)
        assert it.heap(parts, budget) == heapbudget.file_cap(parts, budget), path.name
    bad = tmp_path / "test_bad.py"
    bad.write_text('HEAP_BUDGET = "huge"\n')
    with pytest.raises(ValueError, match="HEAP_BUDGET must be one of"):
        heapbudget.file_budget(bad)


def test_the_harness_bench_caps_a_file_as_the_suite_does(monkeypatch):
    import importlib.util

    monkeypatch.delenv("MAUSBOX_MPY_HEAP", raising=False)
    spec = importlib.util.spec_from_file_location("bench_harness", ROOT / "bench" / "bench_harness.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    it = INTERPS["32"]
    for path in sorted(FWTESTS.glob("test_*.py")):
        budget = heapbudget.file_budget(path)
        assert bench.cap(path) == (it.heap(heapbudget.sim_parts(path, [FIRMWARE, FWTESTS]), budget), budget), path.name
