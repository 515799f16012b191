"""The virtual unit's pseudo-terminal speaks the MicroPython REPL: checked byte for byte, and with the real mpremote."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial
from mausbox.mpbuild import micropython_binary
from mausbox.sim.ports import running_units
from mausbox.sim.readline import continue_with_input
from mausbox.sim.serial import SerialUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

MPREMOTE = str(Path(sys.executable).parent / "mpremote")


def mpremote(unit: SerialUnit, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    assert unit.pty_path
    return subprocess.run([MPREMOTE, "connect", unit.pty_path, *args], capture_output=True, timeout=timeout)


def read_until(port: serial.Serial, ending: bytes, timeout: float = 10) -> bytes:
    data = b""
    end = time.monotonic() + timeout
    while not data.endswith(ending):
        if time.monotonic() > end:
            raise AssertionError(f"timeout waiting for {ending!r}; got {data!r}")
        data += port.read(1)
    return data


def open_at_boot(unit: SerialUnit) -> serial.Serial:
    """A terminal that sees the boot: opened, then the board's EN button pressed (what a unit prints
    while no terminal is open is gone, as from a UART)."""
    port = serial.Serial(unit.pty_path, timeout=0.2)
    unit.reset()
    read_until(port, b"rst:0xc (SW_CPU_RESET)")
    return port


def sync(port: serial.Serial) -> None:
    """Interrupt whatever runs and wait for the unit to go quiet at a prompt."""
    port.write(b"\r\x03")
    read_until(port, b">>> ")
    time.sleep(0.3)
    port.reset_input_buffer()


@pytest.fixture
def unit(tmp_path):
    (tmp_path / "boot.py").write_text("print('boot ran')\n")
    with SerialUnit(tmp_path) as u:
        yield u


def test_continue_with_input_matches_micropython_rules():
    assert not continue_with_input(b"1+2")
    assert continue_with_input(b"for i in range(3):")
    assert continue_with_input(b"for i in range(3):\n    print(i)")
    assert not continue_with_input(b"for i in range(3):\n    print(i)\n")
    assert continue_with_input(b"x = (1,")
    assert not continue_with_input(b"x = '('")
    assert continue_with_input(b"s = '''abc")
    assert continue_with_input(b"x = 1 + \\")
    assert continue_with_input(b"@decorator")
    assert not continue_with_input(b"iffy = 3")


def test_friendly_repl_bytes(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        sync(port)
        port.write(b"1+2\r")
        assert read_until(port, b">>> ") == b"1+2\r\n3\r\n>>> "
        port.write(b"for i in range(2):\r")
        assert read_until(port, b"...     ") == b"for i in range(2):\r\n...     "
        port.write(b"print(i*10)\r\r\r\r")
        out = read_until(port, b"10\r\n>>> ")
        assert out.endswith(b"\r\n... \r\n0\r\n10\r\n>>> ")
        port.write(b"nope\r")
        assert read_until(port, b">>> ") == (b"nope\r\nTraceback (most recent call last):\r\n"
                                             b"  File \"<stdin>\", line 1, in <module>\r\n"
                                             b"NameError: name 'nope' isn't defined\r\n>>> ")
        port.write(b"ab\x7fc\r")  # backspace
        assert b"NameError: name 'ac'" in read_until(port, b">>> ")
        port.write(b"\x05")  # paste mode: no auto-indent, runs on Ctrl-D
        read_until(port, b"=== ")
        port.write(b"def f():\r    return 7\r\x04")
        read_until(port, b">>> ")
        port.write(b"f()\r")
        assert read_until(port, b">>> ") == b"f()\r\n7\r\n>>> "


def test_sys_ps1_ps2_and_help_are_the_boards(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        sync(port)
        port.write(b"import sys; sys.ps1 = 'mau' + 's> '; sys.ps2 = '..' + ' '\r")  # its echo holds neither
        assert read_until(port, b"maus> ").endswith(b"' '\r\nmaus> ")  # pyexec.c reads sys.ps1 at each prompt
        port.write(b"if 1:\r")
        assert read_until(port, b".. ").endswith(b"if 1:\r\n.. ")
        port.write(b"\x03")
        read_until(port, b"maus> ")
        port.write(b"help()\r")
        out = read_until(port, b"maus> ")  # ports/esp32/help.c's text
        assert b"Welcome to MicroPython on the ESP32!\r\n" in out and b"pin12 = machine.Pin(12, machine.Pin.OUT)" in out
        assert b"unix" not in out.lower()
        port.write(b"\x04")  # a soft reset: mp_init sets the prompts back
        read_until(port, b"soft reboot\r\n")
        sync(port)
        port.write(b"1\r")
        assert read_until(port, b">>> ") == b"1\r\n1\r\n>>> "


def test_raw_repl_and_raw_paste_bytes(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        sync(port)
        port.write(b"\x01")
        read_until(port, b"raw REPL; CTRL-B to exit\r\n>")
        port.write(b"print('hi')\x04")
        assert read_until(port, b"\x04>") == b"OKhi\r\n\x04\x04>"
        port.write(b"1/0\x04")
        out = read_until(port, b"\x04>")
        assert out.startswith(b"OK\x04Traceback") and b"ZeroDivisionError" in out and out.count(b"\x04") == 2
        # raw paste: header, window size, flow control
        port.write(b"\x05A\x01")
        assert port.read(5) == b"R\x01\x80\x00\x01"
        code = b"x = 0\n" + b"x += 1\n" * 100 + b"print(x)\n"
        acks = 0
        for i in range(0, len(code), 128):
            port.write(code[i:i + 128])
            if i + 128 <= len(code):
                assert port.read(1) == b"\x01"
                acks += 1
        port.write(b"\x04")
        assert read_until(port, b"\x04>") == b"\x04" + b"100\r\n\x04\x04>"
        assert acks == len(code) // 128
        # Ctrl-D on an empty raw line: soft reset, boot.py runs, back in the raw REPL without main.py
        port.write(b"\x04")
        assert read_until(port, b"raw REPL; CTRL-B to exit\r\n>") == (
            b"OK\r\nMPY: soft reboot\r\nboot ran\r\nraw REPL; CTRL-B to exit\r\n>")
        port.write(b"\x02")
        assert b"Type \"help()\" for more information.\r\n>>> " in read_until(port, b">>> ")


def test_binary_output_passes_unmodified(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        sync(port)
        port.write(b"\x01")
        read_until(port, b"raw REPL; CTRL-B to exit\r\n>")
        port.write(b"import sys\nsys.stdout.buffer.write(bytes(range(256)))\x04")
        assert read_until(port, b"\x04>") == b"OK" + bytes(range(256)) + b"\x04\x04>"


def test_mpremote_fs_exec_eval(unit, tmp_path):
    assert mpremote(unit, "exec", "print(6*7)").stdout == b"42\r\n"
    assert mpremote(unit, "eval", "2**10").stdout == b"1024\r\n"
    blob = os.urandom(150_000) + bytes(range(256)) * 4 + b"\r\n\x04\x03\x01" * 50
    src = tmp_path / "blob.bin"
    src.write_bytes(blob)
    r = mpremote(unit, "fs", "cp", str(src), ":copy.bin", timeout=300)
    assert r.returncode == 0, r.stderr
    assert (Path(unit.root) / "copy.bin").read_bytes() == blob
    back = tmp_path / "back.bin"
    r = mpremote(unit, "fs", "cp", ":copy.bin", str(back), timeout=300)
    assert r.returncode == 0, r.stderr
    assert back.read_bytes() == blob
    ls = mpremote(unit, "fs", "ls")
    assert b"copy.bin" in ls.stdout and b"boot.py" in ls.stdout
    # "/" on the unit is its folder, never the host's root
    assert b"copy.bin" in mpremote(unit, "fs", "ls", ":/").stdout


def test_mpremote_resume_keeps_globals_and_soft_reset_clears_them(unit):
    assert mpremote(unit, "exec", "kept = 5").returncode == 0
    assert mpremote(unit, "resume", "eval", "kept").stdout == b"5\r\n"
    # without `resume` mpremote soft-resets first: a fresh interpreter
    r = mpremote(unit, "eval", "kept")
    assert r.returncode != 0 and b"NameError" in r.stdout + r.stderr
    before = unit.resets
    assert mpremote(unit, "soft-reset").returncode == 0
    assert unit.resets > before


def test_ctrl_c_interrupts_main_and_soft_reboot_reruns_it(tmp_path):
    (tmp_path / "main.py").write_text(
        "import time\nn = 0\nprint('main started')\nwhile True:\n    n += 1\n    time.sleep_ms(5)\n")
    with SerialUnit(tmp_path) as unit, open_at_boot(unit) as port:
        read_until(port, b"main started\r\n")
        time.sleep(0.2)
        port.write(b"\x03")
        out = read_until(port, b">>> ")
        assert b"KeyboardInterrupt" in out and b'File "main.py"' in out
        port.write(b"n > 0\r")
        assert read_until(port, b">>> ").endswith(b"True\r\n>>> ")
        port.write(b"\x04")  # soft reboot: main.py runs again
        assert read_until(port, b"main started\r\n").startswith(b"\r\nMPY: soft reboot\r\n")
        # mpremote interrupts the running main.py by itself
    r = None
    with SerialUnit(tmp_path) as unit:
        time.sleep(0.3)
        r = mpremote(unit, "exec", "print('n' in globals())")
    assert r.returncode == 0 and r.stdout == b"False\r\n"  # mpremote soft-reset into the raw REPL: main.py skipped


def test_console_output_of_running_main_flows_in_friendly_mode(tmp_path):
    (tmp_path / "main.py").write_text(
        "import time\nfor i in range(3):\n    print('EV {\"i\":%d}' % i)\n    time.sleep_ms(20)\n")
    with SerialUnit(tmp_path) as unit, open_at_boot(unit) as port:
        out = read_until(port, b">>> ")
    assert b'EV {"i":0}\r\nEV {"i":1}\r\nEV {"i":2}\r\n' in out


def test_baud_and_exec_delay_keep_the_protocol_intact(tmp_path):
    with SerialUnit(tmp_path, baud=115200, exec_delay_ms=20) as unit:
        data = bytes(range(32, 127)) * 20  # text: mpremote's console holds back bytes that are not UTF-8
        r = mpremote(unit, "exec", "import sys\nsys.stdout.buffer.write(bytes(range(32, 127))*20)")
        assert r.returncode == 0, r.stderr
        assert r.stdout == data
        assert unit.tx_bytes >= 2048 and unit.rx_bytes > 0


def test_crashing_interpreter_restarts(tmp_path):
    with SerialUnit(tmp_path) as unit, serial.Serial(unit.pty_path, timeout=0.2) as port:
        sync(port)
        port.write(b"raise SystemExit\r")  # on a board: soft reset
        assert b"MPY: soft reboot\r\n" in read_until(port, b">>> ")
        port.write(b"import _vunit\r")  # the unit's os has no system(): the simulator's own reset line
        read_until(port, b">>> ")
        port.write(b"_vunit.die()\r")  # the interpreter dies: the unit restarts
        out = read_until(port, b">>> ")
        assert b"hard reset" in out and b"MicroPython v" in out
        port.write(b"1+1\r")
        assert read_until(port, b">>> ").endswith(b"2\r\n>>> ")


def test_symlink_and_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    link = tmp_path / "ttyMAUS"
    root = tmp_path / "root"
    root.mkdir()
    with SerialUnit(root, link=str(link), register=True) as unit:
        assert os.path.realpath(link) == unit.pty_path
        units = running_units()
        assert [u["pty"] for u in units] == [unit.pty_path]
        assert mpremote(unit, "eval", "1").stdout == b"1\r\n"
    assert not link.exists() and running_units() == []


def test_the_real_firmware_stops_on_ctrl_c_and_restarts_on_soft_reboot(tmp_path):
    from mausbox.deploy import deploy
    from mausbox.link import UnitLink

    # 512 KB: the firmware with the simulated hardware does not boot in 96 KB on the unix port yet
    with SerialUnit(tmp_path, heapsize="512k") as unit:
        with UnitLink(unit.pty_path) as link:
            assert deploy(link, say=lambda *a: None, confirm_s=30).ready
        with serial.Serial(unit.pty_path, timeout=0.2) as port:
            time.sleep(1)  # deploy saw the boot line; the game runs
            port.reset_input_buffer()
            out = b""
            for _ in range(10):  # a loaded machine may still be starting the game: Ctrl-C again, as a user would
                port.write(b"\x03\x03")  # two: the app takes a lone one for a stray byte
                end = time.monotonic() + 1.5
                while not out.endswith(b">>> ") and time.monotonic() < end:
                    out += port.read(1)
                if out.endswith(b">>> "):
                    break
            assert b"KeyboardInterrupt" in out, out[-500:]
            port.write(b"\x04")
            out = read_until(port, b"MAUSBOX READY ", timeout=30)
            assert out.startswith(b"\r\nMPY: soft reboot\r\n")
