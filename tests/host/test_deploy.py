"""`mausbox deploy`: compile to match the unit, copy only what changed, atomically, confirm the boot."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from mausbox.build import mpy_compatible, parse_mpy_info
from mausbox.cli import UserError, main
from mausbox.deploy import MAIN_PY, confirm_boot, deploy, firmware_files, make_plan
from mausbox.link import UnitLink
from mausbox.mpbuild import micropython_binary, sim_march
from mausbox.paths import FIRMWARE_DIR, FIRMWARE_PKG
from mausbox.sim.serial import SerialUnit

needs_mpy = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")
# The firmware with the simulated hardware needs more than the 96 KB an ESP32 has to boot on the unix
# port today; the deploy mechanics do not depend on it.
SIM_HEAP = "512k"
ESP32_MPY = (10 << 10) | (3 << 8) | 6  # xtensawin, v6.3


def test_mpy_info_of_units():
    assert parse_mpy_info(2822) == (6, 3, "x64")  # the virtual unit (unix port 1.29)
    assert parse_mpy_info(ESP32_MPY) == (6, 3, "xtensawin")
    assert parse_mpy_info(None) == (0, 0, "")
    assert mpy_compatible((6, 3, "xtensawin")) and not mpy_compatible((5, 0, "xtensawin"))


def test_board_files_leave_out_the_simulator():
    files, how = firmware_files("esp32", ESP32_MPY, "esp32-devkitc")
    assert how == "mpy v6.3 for xtensawin"
    assert files["main.py"] == MAIN_PY
    assert json.loads(files["board.json"])["name"] == "esp32-devkitc"
    assert "maus/unit/core.mpy" in files and "maus/unit/core.py" not in files
    assert not any(p.startswith("maus/sim/") for p in files)
    old, how = firmware_files("esp32", (10 << 10) | 5, "esp32-devkitc")  # .mpy v5: ship the sources
    assert how == "source (.py)" and "maus/unit/core.py" in old
    with pytest.raises(UserError):
        firmware_files("esp32", ESP32_MPY, "no-such-board")


def test_plan_sends_only_changes_and_removes_stale_files():
    files = {"maus/a.mpy": b"A", "maus/b.mpy": b"B", "main.py": MAIN_PY}
    remote = {"maus/a.mpy": hashlib.sha256(b"A").hexdigest(), "maus/b.mpy": "00" * 32, "main.py": None,
              "maus/old.py": "11" * 32, "settings.json": "22" * 32}
    plan = make_plan(files, remote)
    assert plan.send == ["main.py", "maus/b.mpy"]
    assert plan.unchanged == ["maus/a.mpy"]
    assert plan.remove == ["maus/old.py"]  # never anything outside /maus (logs, settings)


@needs_mpy
def test_full_then_incremental_deploy_over_the_virtual_unit(tmp_path, monkeypatch):
    # a snapshot of the firmware: other work on the tree must not change it between the two deploys
    snap = tmp_path / "fw" / "maus"
    shutil.copytree(FIRMWARE_PKG, snap, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr("mausbox.deploy.FIRMWARE_PKG", snap)
    tmp_path = tmp_path / "unit"
    tmp_path.mkdir()
    (tmp_path / "settings.json").write_text("{}")
    with SerialUnit(tmp_path, heapsize=SIM_HEAP, extra_path=[]) as unit:
        with UnitLink(unit.pty_path) as link:
            full = deploy(link, say=lambda *a: None, confirm_s=30)
        assert full.ready and full.board == "sim" and full.compiled == f"mpy v6.3 for {sim_march()}"
        assert (tmp_path / "main.py").read_bytes() == MAIN_PY
        assert (tmp_path / "boot.py").read_bytes() == (FIRMWARE_DIR / "boot.py").read_bytes()
        assert (tmp_path / "maus" / "unit" / "core.mpy").is_file()
        assert not list(tmp_path.rglob("*.tmp"))
        # a changed file on the unit, and a stale one: only those are touched
        (tmp_path / "maus" / "ticks.mpy").write_bytes(b"damaged")
        (tmp_path / "maus" / "stale.py").write_text("raise RuntimeError")
        with UnitLink(unit.pty_path) as link:
            inc = deploy(link, say=lambda *a: None, confirm_s=30)
        assert inc.sent == ["maus/ticks.mpy"] and inc.removed == ["maus/stale.py"]
        assert inc.bytes_sent < full.bytes_sent / 10
        assert (tmp_path / "settings.json").read_text() == "{}"
        with UnitLink(unit.pty_path) as link:
            again = deploy(link, say=lambda *a: None, confirm_s=0)
        assert again.sent == [] and again.removed == []


@needs_mpy
def test_confirm_boot_reads_the_ready_line_or_reports_the_traceback(tmp_path):
    (tmp_path / "main.py").write_text("print('hello')\nprint('MAUSBOX READY 9.8.7')\n")
    with SerialUnit(tmp_path) as unit, UnitLink(unit.pty_path) as link:
        link.repl().enter_raw()
        assert confirm_boot(link, 10) == "9.8.7"
    (tmp_path / "main.py").write_text("import nothing_here\n")
    with SerialUnit(tmp_path) as unit, UnitLink(unit.pty_path) as link:
        link.repl().enter_raw()
        with pytest.raises(UserError) as e:
            confirm_boot(link, 10)
        assert "nothing_here" in str(e.value) and "MAUSBOX READY" in str(e.value)


@needs_mpy
def test_deploy_command_json(tmp_path, capsys):
    with SerialUnit(tmp_path, heapsize=SIM_HEAP) as unit:
        assert main(["deploy", "--port", unit.pty_path, "--json", "--no-confirm"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["board"] == "sim" and "maus/unit/core.mpy" in report["sent"] and report["bytes_sent"] > 10_000


def test_deploy_command_without_a_unit(capsys):
    assert main(["deploy", "--port", "/dev/no-such-port"]) == 3
    assert "does not exist" in capsys.readouterr().err


def test_a_unit_in_a_game_is_left_alone_unless_forced(tmp_path):
    import loopback
    from mausbox.deploy import precheck

    link, ser = loopback.link(tmp_path)
    ser.ctx.mode = "play"
    ser.ctx.game = type("G", (), {"GAME": "mg"})()
    with pytest.raises(UserError) as e:
        precheck(link)
    assert "in a game (mg)" in str(e.value) and "--force" in str(e.value) and e.value.code == 1
    assert b"\x03" not in ser.written  # asked, never interrupted
    assert precheck(link, force=True)["mode"] == "play"
    ser.ctx.mode = "menu"
    assert precheck(link)["mode"] == "menu"


def test_romfs_deploy_is_refused_where_the_micropython_has_no_romfs(tmp_path):
    # The virtual unit's MicroPython (unix port) has no ROMFS partition: deploy --romfs says so and
    # changes nothing; the app's tree for mpremote holds exactly the maus/ files of a deployment.
    from mausbox.deploy import firmware_files, romfs_tree

    files, _ = firmware_files("esp32", 0, "esp32-devkitc")
    app = romfs_tree(files, tmp_path)
    assert app and all(p.startswith("maus/") for p in app)
    assert "maus/unit/core.py" in app and "maus/texts/unit.de.json" in app
    assert not any(p.startswith("maus/sim/") for p in app)  # the simulator is never deployed
    assert (tmp_path / "maus" / "catalogs" / "mg.json").read_bytes() == files["maus/catalogs/mg.json"]


def test_romfs_probe_reads_the_partition_count():
    from mausbox.deploy import romfs_partitions

    class Link:
        def __init__(self, out):
            self.out = out

        def exec(self, code):
            assert "rom_ioctl" in code
            return self.out

    assert romfs_partitions(Link(b"0\r\n")) == 0
    assert romfs_partitions(Link(b"1\r\n")) == 1
    assert romfs_partitions(Link(b"Traceback...\r\nImportError: no module named 'vfs'\r\n")) == 0
