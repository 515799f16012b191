"""`make check` catches firmware MicroPython cannot run: syntax it lacks, and `machine` calls the ESP32
port does not have, each reported with the file and line."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from mausbox.build import compile_file


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
