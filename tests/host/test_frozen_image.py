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


def _manifest_tool(tmp_path: Path):
    # MicroPython's own manifest reader (tools/manifestfile.py of the pinned source), as the port's build runs it
    import importlib.util
    import tarfile

    from mausbox.mpbuild import tarball_candidates

    tarball = next((c for c in tarball_candidates() if c.is_file()), None)
    if tarball is None:
        pytest.skip("no pinned MicroPython tarball")
    with tarfile.open(tarball) as tf:
        member = next(m for m in tf.getmembers() if m.name.endswith("/tools/manifestfile.py"))
        (tmp_path / "manifestfile.py").write_bytes(tf.extractfile(member).read())  # type: ignore[union-attr]
    spec = importlib.util.spec_from_file_location("manifestfile", tmp_path / "manifestfile.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_the_image_manifest_keeps_the_ports_frozen_modules_and_freezes_the_app_without_the_simulator(tmp_path):
    # FROZEN_MANIFEST replaces ports/esp32/boards/manifest.py, which freezes _boot.py (it mounts the filesystem and
    # runs boot.py and main.py) and neopixel: an image without them boots no app. Here a port folder whose board
    # manifest freezes a _boot.py stands in for ports/esp32.
    mf = _manifest_tool(tmp_path)
    port = tmp_path / "port"
    (port / "boards").mkdir(parents=True)
    (port / "modules").mkdir()
    (port / "boards" / "manifest.py").write_text('freeze("$(PORT_DIR)/modules")\n')
    (port / "modules" / "_boot.py").write_text("import vfs\n")
    m = mf.ManifestFile(mf.MODE_FREEZE, {"MPY_DIR": str(tmp_path), "MPY_LIB_DIR": str(tmp_path), "PORT_DIR": str(port)})
    m.execute(str(ROOT / "firmware" / "manifest_esp32.py"))
    got = {r.target_path: r for r in m.files()}
    app = {p for p in got if p.startswith("maus/")}
    assert "_boot.py" in got
    assert {"maus/__init__.py", "maus/unit/core.py", "maus/hw/esp32_loops.py"} <= app
    assert not [p for p in app if p.startswith("maus/sim/")]
    want = {"maus/" + p.relative_to(ROOT / "firmware" / "maus").as_posix()
            for p in (ROOT / "firmware" / "maus").rglob("*.py") if "sim" not in p.relative_to(ROOT / "firmware").parts}
    assert app == want
    assert {got[p].opt for p in app} == {3}  # as a deploy compiles the firmware
    m = mf.ManifestFile(mf.MODE_FREEZE, {"MPY_DIR": str(tmp_path), "MPY_LIB_DIR": str(tmp_path)})
    m.execute(f'include("{ROOT / "firmware" / "manifest.py"}", sim=True)')  # the unix port's frozen build
    assert "maus/sim/hw.py" in {r.target_path for r in m.files()}
