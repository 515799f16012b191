"""The app frozen into the image (`make image`, docs/build.md section 7): the firmware frozen into the 32-bit unix
port by its own manifest (firmware/manifest.py, mausbox.mpbuild.ensure_frozen), the data files alone on the unit's
flash in maus-data/ (maus.data_dir), plays each game exactly as the app deployed as .mpy files does: the same log,
byte for byte, and the same console. No ESP32 image is built here (no ESP-IDF): the manifest, the frozen package's
way of finding its data and a deploy's layout are what this proves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from mausbox.mpbuild import micropython_binary, micropython_words
from mausbox.sim import run as simrun

ON_32 = micropython_binary() is not None and micropython_words(micropython_binary() or "") == "32"
UID = "5e1d00000031"  # one unit: its id is in every log line


@pytest.fixture(scope="module")
def frozen() -> str:
    if not ON_32:
        pytest.skip("no 32-bit MicroPython unix port (make setup)")
    from mausbox.mpbuild import ensure_frozen

    return str(ensure_frozen(log=lambda m: None))  # the toolchain built the plain port: a failure here is one


def _play(root: Path, scenario: Path, binary: str | None = None) -> tuple[int, list[str], bytes]:
    shutil.rmtree(root, ignore_errors=True)
    (root / ".sim").mkdir(parents=True)
    (root / ".sim" / "unique_id").write_text(UID + "\n")
    rc, lines = simrun.run_scenario(scenario, root, heap=simrun.board_heap(), binary=binary, frozen=binary is not None)
    return rc, lines, b"".join(p.read_bytes() for p in simrun.logs_in(root))


@pytest.mark.parametrize("name", ["mg-6p-ties", "mim-c-4p", "mms-4p-full"])
def test_the_frozen_app_plays_each_game_as_the_deployed_one(tmp_path, frozen, name):
    scenario = ROOT / "tests" / "scenarios" / f"{name}.jsonl"
    root = tmp_path / "unit"
    rc, console, log = _play(root, scenario)
    assert rc == 0 and log
    rc_f, console_f, log_f = _play(root, scenario, frozen)
    assert not (root / "maus").exists() and (root / "maus-data" / "texts").is_dir()  # the code came from the image
    assert rc_f == 0, "\n".join(console_f[-30:])
    assert log_f == log
    assert console_f == console


def test_a_maus_folder_on_the_flash_hides_the_frozen_app(tmp_path, frozen):
    # Why a deploy onto a frozen image writes the data to maus-data/ and removes /maus: sys.path has "" before
    # ".frozen", and a folder named maus, even one of data only, is a package that has none of the modules.
    root = tmp_path / "unit"
    simrun.prepare_root(root, binary=frozen, frozen=True)
    (root / "maus" / "texts").mkdir(parents=True)
    import subprocess

    proc = subprocess.run([frozen, "-c", "import maus.text"], cwd=root, capture_output=True, text=True,
                          env=simrun.firmware_env(root), timeout=60)
    assert proc.returncode != 0 and "no module named 'maus.text'" in proc.stdout + proc.stderr
    shutil.rmtree(root / "maus")
    proc = subprocess.run([frozen, "-c", "import maus, maus.text; print(maus.data_dir(), maus.text._HERE)"], cwd=root,
                          capture_output=True, text=True, env=simrun.firmware_env(root), timeout=60)
    assert proc.stdout.split() == ["maus-data", "maus-data"], proc.stdout + proc.stderr


def test_the_data_folder_is_the_packages_own_where_it_is_a_folder():
    import maus

    assert Path(maus.data_dir()) == Path(maus.__file__).parent
    assert (Path(maus.data_dir()) / "catalogs" / "mg.json").is_file()


def test_a_deploy_onto_a_frozen_image_writes_the_data_alone_and_the_unit_boots(tmp_path, frozen):
    # `mausbox deploy` to a unit flashed with an image built by `make image`: the probe finds the app frozen in,
    # the data files go to maus-data/, an earlier deploy's /maus (which would hide the frozen app) goes whole, and
    # the unit boots its frozen app. Deployed again: nothing to send.
    from maus import VERSION
    from mausbox.deploy import deploy
    from mausbox.link import UnitLink
    from mausbox.paths import FIRMWARE_PKG
    from mausbox.sim.serial import SerialUnit

    root = tmp_path / "unit"
    (root / "maus" / "unit").mkdir(parents=True)
    (root / "maus" / "unit" / "core.mpy").write_bytes(b"an earlier deploy's")
    said: list[str] = []
    with SerialUnit(root, heapsize="512k", extra_path=[], micropython=frozen) as unit:
        with UnitLink(unit.pty_path) as link:
            report = deploy(link, say=said.append, confirm_s=60)
        assert report.ready == VERSION and report.compiled.startswith("data only: the app is frozen in the image")
        assert not (root / "maus").exists() and not (root / "board.ok").exists()
        assert report.removed == ["maus/unit/core.mpy"]
        for rel in ("texts/unit.en.json", "catalogs/mg.json", "catalogs/mg.cat"):
            assert (root / "maus-data" / rel).read_bytes() == (FIRMWARE_PKG / rel).read_bytes(), rel
        assert not [p for p in report.sent if p.startswith("maus-data/") and not p.endswith((".json", ".cat"))]
        assert any("the app's code is the image's" in n for n in report.notes)
        with UnitLink(unit.pty_path) as link:
            again = deploy(link, say=said.append, confirm_s=0)
        assert again.sent == [] and again.removed == []
