"""`make check` catches firmware MicroPython cannot run: syntax it lacks, and `machine` calls the ESP32
port does not have, each reported with the file and line; and modules that import each other in a circle."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from mausbox.build import compile_file
from mausbox.devcheck import circles


def test_mpy_cross_names_file_and_line(tmp_path):
    src = tmp_path / "bad.py"
    src.write_text("def f(x):\n    match x:\n        case 1:\n            return 2\n")
    err = compile_file(src, tmp_path / "bad.mpy")
    assert err is not None and "bad.py" in err and "line 2" in err and "SyntaxError" in err


def test_mpy_cross_accepts_viper_for_the_esp32(tmp_path):
    src = tmp_path / "ok.py"
    src.write_text("import micropython\n@micropython.viper\ndef f(a: int) -> int:\n    return a + 1\n")
    assert compile_file(src, tmp_path / "ok.mpy") is None


def test_esp32_stubs_reject_a_machine_call_the_port_lacks(tmp_path):
    typings = ROOT / "typings"
    src = tmp_path / "uses_machine.py"
    src.write_text("import machine\n\nmachine.Pin(4).irq(handler=None)\nmachine.deepsleep_forever()\n")
    env = dict(os.environ, MYPYPATH=str(typings))
    proc = subprocess.run([str(Path(sys.executable).parent / "mypy"), "--custom-typeshed-dir", str(typings),
                           "--no-site-packages", "--no-strict-optional", "--cache-dir", str(tmp_path / "c"),
                           str(src)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 1
    assert "uses_machine.py:4" in proc.stdout and "deepsleep_forever" in proc.stdout
    assert "uses_machine.py:3" not in proc.stdout


def _tree(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_lazy_import_back_is_a_circle_named_with_its_lines(tmp_path):
    _tree(tmp_path, {"circdemo/__init__.py": "",
                     "circdemo/top.py": "def later():\n    import circdemo.part\n\n    return circdemo.part.X\n",
                     "circdemo/part.py": "from circdemo.top import later\n\nX = 1\n",
                     "circdemo/leaf.py": "X = 1\n"})
    assert circles(tmp_path, "circdemo") == [[("circdemo.part", "circdemo.top", [1]),
                                              ("circdemo.top", "circdemo.part", [2])]]
    (tmp_path / "circdemo/part.py").write_text("from circdemo.leaf import X\n")  # the leaf both import
    assert circles(tmp_path, "circdemo") == []


def test_circles_are_found_in_folders_without_init_and_through_a_package_init(tmp_path):
    _tree(tmp_path, {"circdemo2/__init__.py": "",
                     "circdemo2/game/rules.py": "from circdemo2.game.cards import N\n",  # no __init__.py here
                     "circdemo2/game/cards.py": "def load():\n    import circdemo2.game.rules\n\nN = 3\n",
                     "circdemo2/unit/__init__.py": "def main():\n    from circdemo2.unit.core import run\n",
                     "circdemo2/unit/core.py": "from circdemo2.unit import main\n\ndef run():\n    pass\n"})
    found = sorted(sorted({a for a, _, _ in ring}) for ring in circles(tmp_path, "circdemo2"))
    assert found == [["circdemo2.game.cards", "circdemo2.game.rules"], ["circdemo2.unit", "circdemo2.unit.core"]]


def test_an_import_for_the_type_checker_alone_is_no_circle(tmp_path):
    _tree(tmp_path, {"circdemo3/__init__.py": "",
                     "circdemo3/a.py": "from circdemo3.b import B\n",
                     "circdemo3/b.py": "TYPE_CHECKING = 0\nif TYPE_CHECKING:\n    from circdemo3.a import A\nB = 1\n"})
    assert circles(tmp_path, "circdemo3") == []


def test_the_firmware_and_the_host_have_no_import_circle():
    assert circles(ROOT / "firmware", "maus") == []
    assert circles(ROOT / "host", "mausbox") == []


def test_a_copy_of_the_firmware_compiles_as_the_firmware(tmp_path):
    # A bench run from a `git archive` copy with another checkout's tools compiled the copy's firmware as test
    # code (-O0, its path as its name: about 30 interned bytes a module more), so its heap figures were not the
    # unit's. The name and level come from where the file sits, not from which checkout the tools belong to.
    from mausbox.build import FIRMWARE_OPT, module_name

    for rel, name in (("firmware/maus/unit/core.py", "maus.unit.core"), ("firmware/maus/unit/__init__.py", "maus.unit"),
                      ("firmware/maus/__init__.py", "maus"), ("tests/fw/unitheap.py", None), ("host/maus/x.py", None)):
        src = tmp_path / "copy" / rel
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text("assert 1\nx = 1\n")
        assert module_name(src) == name, rel
    src = tmp_path / "copy" / "firmware" / "maus" / "unit" / "core.py"
    out = tmp_path / "core.mpy"
    assert compile_file(src, out) is None
    data = out.read_bytes()
    assert b"maus.unit.core" in data and b"firmware/" not in data and FIRMWARE_OPT == 3
