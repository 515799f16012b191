"""The virtual unit is a board as far as MicroPython's own clients can tell: checked with mpremote's
transport and pyserial (the clients the venv ships), byte for byte where a board's bytes are known
(shared/runtime/pyexec.c, shared/readline/readline.c, py/repl.c of the pinned MicroPython)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial
from mausbox.mpbuild import micropython_binary
from mausbox.sim.serial import SerialUnit
from mpremote.transport import TransportExecError
from mpremote.transport_serial import SerialTransport

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

MPREMOTE = str(Path(sys.executable).parent / "mpremote")
WAIT_S = 30  # a ceiling for a unit that never answers (the machine may be three times slower)


def read_until(port: serial.Serial, ending: bytes, timeout: float = WAIT_S) -> bytes:
    data = b""
    end = time.monotonic() + timeout
    while not data.endswith(ending):
        if time.monotonic() > end:
            raise AssertionError(f"timeout waiting for {ending!r}; got {data!r}")
        data += port.read(1)
    return data


def prompt(port: serial.Serial) -> None:
    """Interrupt whatever runs, and wait for the friendly prompt to settle."""
    port.write(b"\r\x03")
    read_until(port, b">>> ")
    time.sleep(0.3)
    port.reset_input_buffer()
    port.write(b"\r")
    read_until(port, b"\r\n>>> ")


@pytest.fixture
def unit(tmp_path):
    root = tmp_path / "unit"
    root.mkdir()
    with SerialUnit(root) as u:
        yield u


@pytest.fixture
def transport(unit):
    t = SerialTransport(unit.pty_path, baudrate=115200)
    t.enter_raw_repl(soft_reset=False)
    yield t
    t.close()


# -- the console's bytes ---------------------------------------------------------------------------------

def test_text_gets_crlf_in_the_raw_repl_binary_stdout_does_not(transport):
    assert transport.exec("print('a\\nb')") == b"a\r\nb\r\n"
    assert transport.exec("import sys\nsys.stdout.buffer.write(b'x\\ny\\r\\n')") == b"x\ny\r\n"
    out, err = transport.exec_raw("print(1)\n1/0")
    assert out == b"1\r\n"
    assert err == (b'Traceback (most recent call last):\r\n  File "<stdin>", line 2, in <module>\r\n'
                   b"ZeroDivisionError: divide by zero\r\n")


def test_stdout_and_stderr_are_one_console_in_order(transport):
    out, err = transport.exec_raw("import sys\nsys.stderr.write('e\\n')\nprint('a')\nprint('b', file=sys.stderr)")
    assert (out, err) == (b"e\r\na\r\nb\r\n", b"")


def test_raw_paste_with_flow_control_runs_a_large_block(transport):
    code = "s = 0\n" + "".join("s += %d\n" % i for i in range(600)) + "print(s)\n"
    assert len(code) > 10 * 128  # many flow-control windows
    assert transport.exec(code) == b"%d\r\n" % sum(range(600))
    assert transport.use_raw_paste  # the unit answered the raw-paste request


def test_main_is_the_repl_namespace_and_the_unit_looks_like_an_esp32(transport):
    transport.exec("x = 5")
    assert transport.eval("__import__('__main__').x") == 5
    assert transport.eval("__import__('sys').platform") == "esp32"
    assert transport.eval("repr(1/3)") == "0.33333334"  # the ESP32 image's single floats (tests/fw/test_floats.py)
    with pytest.raises(TransportExecError) as e:
        transport.exec("import termios")
    assert b"ImportError: no module named 'termios'" in e.value.error_output.encode()
    rtc = transport.eval("__import__('machine').RTC().datetime()")
    assert len(rtc) == 8 and rtc[0] >= 2024


def test_soft_reset_clears_ram_and_systemexit_stays_in_the_raw_repl(unit, transport):
    (unit.root / "main.py").write_text("open('main_ran', 'w').close()\n")
    transport.exec("kept = 1")
    transport.exec_raw_no_follow("raise SystemExit")
    out = transport.read_until(1, b"raw REPL; CTRL-B to exit\r\n", timeout=WAIT_S)  # the `>` is exec's
    # pyexec.c: the \x04 after the output and the one after the (empty) error output, then the reset
    assert out == b"\x04\x04MPY: soft reboot\r\nraw REPL; CTRL-B to exit\r\n", out
    assert not (unit.root / "main_ran").exists()  # a board in the raw REPL skips main.py after the reset
    with pytest.raises(TransportExecError) as e:
        transport.exec("kept")
    assert "NameError" in e.value.error_output



def test_mpremote_exec_of_sys_exit_returns(unit):
    # mpremote waits for both \x04s of a raw-REPL run; with one it waited for ever
    r = subprocess.run([MPREMOTE, "connect", unit.pty_path, "exec", "print(7); import sys; sys.exit()"],
                       capture_output=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, b"7\r\n"), (r.stdout, r.stderr)


class LateAfterEnd(SerialUnit):
    """A bridge that loses the CPU right after it answers E: the interpreter writes R and exits meanwhile, and
    the bridge then reads the end of its stdout before the R on its status pipe (seen under load)."""

    late = ended = False  # late: the next code's end is the one

    def _on_status(self, tag, rest, body):
        self.ended = self.ended or (self.late and tag == b"E")
        super()._on_status(tag, rest, body)

    def _read_status(self):
        super()._read_status()
        proc = self._proc
        if self.ended and proc is not None:
            self.late = self.ended = False
            proc.wait(timeout=WAIT_S)
            self._pump_output()


def test_systemexit_read_after_the_interpreter_ended_is_still_a_soft_reboot(tmp_path):
    root = tmp_path / "unit"
    root.mkdir()
    with LateAfterEnd(root) as unit, serial.Serial(unit.pty_path, timeout=0.2) as port:
        prompt(port)
        port.write(b"\x01")
        read_until(port, b"raw REPL; CTRL-B to exit\r\n>")
        unit.late = True
        port.write(b"print(7); import sys; sys.exit()\x04")
        # both \x04s (mpremote waits for them), then the soft reboot: not a crash and a hard reset
        assert read_until(port, b"raw REPL; CTRL-B to exit\r\n>") == (
            b"OK7\r\n\x04\x04MPY: soft reboot\r\nraw REPL; CTRL-B to exit\r\n>")
        port.write(b"print(8)\x04")
        assert read_until(port, b"\x04>") == b"OK8\r\n\x04\x04>"


# -- Ctrl-C and console input -----------------------------------------------------------------------------

def test_ctrl_c_interrupts_and_after_kbd_intr_off_it_is_data(transport):
    transport.exec_raw_no_follow("import time\nwhile True:\n    time.sleep_ms(1)")
    time.sleep(0.3)
    transport.serial.write(b"\x03\x03\x03")  # several before the check point: one KeyboardInterrupt
    out, err = transport.follow(WAIT_S)
    assert out == b"" and err.endswith(b"KeyboardInterrupt: \r\n")
    transport.exec_raw_no_follow("import micropython, sys\nmicropython.kbd_intr(-1)\n"
                                 "print(repr(sys.stdin.buffer.read(3)))")
    time.sleep(0.3)
    transport.serial.write(b"a\x03b")
    out, err = transport.follow(WAIT_S)
    assert (out, err) == (b"b'a\\x03b'\r\n", b"")
    assert transport.eval("1+1") == 2  # the interrupt char is Ctrl-C again for the next command


def test_code_reads_the_console_with_poll_and_input(transport):
    transport.exec_raw_no_follow(
        "import select, sys\np = select.poll()\np.register(sys.stdin, select.POLLIN)\n"
        "print(p.poll(0))\nprint('ready')\nwhile not p.poll(50):\n    pass\n"
        "print(repr(sys.stdin.buffer.read(3)))\nprint(input('? '))")
    assert transport.read_until(1, b"ready\r\n", timeout=WAIT_S).endswith(b"[]\r\nready\r\n")
    transport.serial.write(b"xyzhi there\r")
    out, err = transport.follow(WAIT_S)
    assert (out, err) == (b"b'xyz'\r\n? hi there\r\nhi there\r\n", b"")


def test_console_input_the_code_left_unread_goes_to_the_repl(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        prompt(port)
        port.write(b"import time; time.sleep_ms(300)\r1+1\r")
        assert read_until(port, b"2\r\n>>> ").endswith(b"1+1\r\n2\r\n>>> ")


def test_mpremote_mount_exec_import(tmp_path, unit):
    (tmp_path / "x.py").write_text("print('hello from x', __name__)\nimport sys\nprint(sys.platform)\n")
    r = subprocess.run([MPREMOTE, "connect", unit.pty_path, "mount", str(tmp_path), "exec", "import x"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith(b"hello from x x\r\nesp32\r\n"), r.stdout


# -- the friendly REPL ------------------------------------------------------------------------------------

def test_heap_locked_at_the_prompt_is_unlocked_before_the_next(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        prompt(port)
        port.write(b"import micropython; micropython.heap_lock()\r")
        read_until(port, b">>> ")
        port.write(b"len([1] * 100)\r")
        assert read_until(port, b">>> ") == b"len([1] * 100)\r\n100\r\n>>> "


def test_history_tab_completion_and_cursor_keys(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        prompt(port)
        port.write(b"6*7\r")
        read_until(port, b"42\r\n>>> ")
        port.write(b"\x1b[A")  # up: the last line again
        assert read_until(port, b"6*7") == b"6*7"
        port.write(b"\r")
        assert read_until(port, b">>> ") == b"\r\n42\r\n>>> "
        port.write(b"import micropython\r")
        read_until(port, b">>> ")
        port.write(b"micropython.heap_l\t")  # one match: completed in place
        assert read_until(port, b"heap_lock") == b"micropython.heap_lock"
        port.write(b"\x15")  # Ctrl-U: kill the line
        read_until(port, b"\x1b[K")
        port.write(b"micropython.heap_\t")  # two matches: listed, then the line drawn again
        out = read_until(port, b">>> micropython.heap_")
        assert b"heap_lock" in out and b"heap_unlock" in out
        port.write(b"\x03")
        read_until(port, b">>> ")
        port.write(b"12\x1b[D3\r")  # left arrow: 132
        assert read_until(port, b">>> ").endswith(b"\r\n132\r\n>>> ")
        port.write(b"45\x01\x0b6\r")  # Ctrl-A home, Ctrl-K kill to the end: 6
        assert read_until(port, b">>> ").endswith(b"\r\n6\r\n>>> ")


def test_auto_indent_is_cancelled_by_a_space_or_backspace(unit):
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        prompt(port)
        port.write(b"if 0:\r")
        assert read_until(port, b"...     ") == b"if 0:\r\n...     "
        port.write(b"  print(2)\r")  # a space right after the indent takes it back: 2 spaces
        read_until(port, b"... ")
        port.write(b"else:\r")
        read_until(port, b"... ")
        port.write(b"  print(3)\r\r")
        assert read_until(port, b">>> ").endswith(b"\r\n3\r\n>>> ")
        port.write(b"for i in (1,):\r")
        read_until(port, b"...     ")
        port.write(b"\x7f")  # backspace: the 4 spaces of the indent go at once
        assert read_until(port, b"\x1b[K") == b"\b\b\b\b\x1b[K"
        port.write(b"  print(i)\r\r")
        assert read_until(port, b">>> ").endswith(b"\r\n1\r\n>>> ")
        port.write(b"\x05def f():\r    return 7\r\x04")  # paste mode: no auto-indent
        read_until(port, b">>> ")
        port.write(b"f()\r")
        assert read_until(port, b">>> ") == b"f()\r\n7\r\n>>> "


# -- the board's machine module -----------------------------------------------------------------------

def test_machine_reset_restarts_the_app_and_keeps_rtc_memory(unit):
    (unit.root / "main.py").write_text("print('app started')\n")
    with serial.Serial(unit.pty_path, timeout=0.2) as port:
        prompt(port)
        port.write(b"import machine; machine.RTC().memory(b'kept'); ram = 1; machine.reset()\r")
        out = read_until(port, b">>> ")
        assert b"rst:0xc (SW_CPU_RESET)" in out and b"app started\r\n" in out and b"MPY: soft reboot" not in out
        port.write(b"import machine; (machine.RTC().memory(), machine.reset_cause(), 'ram' in globals())\r")
        assert read_until(port, b">>> ").endswith(b"(b'kept', 5, False)\r\n>>> ")


def test_each_virtual_unit_has_its_own_unique_id_and_keeps_it(tmp_path):
    ids = []
    for name in ("a", "b", "a"):
        (tmp_path / name).mkdir(exist_ok=True)
        with SerialUnit(tmp_path / name) as u:
            t = SerialTransport(u.pty_path, baudrate=115200)
            try:
                t.enter_raw_repl(soft_reset=False)
                ids.append(t.eval("__import__('machine').unique_id().hex()"))
            finally:
                t.close()
    assert ids[0] == ids[2] != ids[1] and all(len(i) == 12 for i in ids)


def test_pyserial_and_mpremote_find_a_running_unit(tmp_path, monkeypatch):
    import serial.tools.list_ports

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "u").mkdir()
    with SerialUnit(tmp_path / "u", register=True) as u:
        mine = [p for p in serial.tools.list_ports.comports() if p.device == u.pty_path]
        assert len(mine) == 1 and (mine[0].vid, mine[0].pid, mine[0].serial_number) == (0x1209, 1, u.unique_id)
        env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"))
        # bare `mpremote` auto-detects, also again after `disconnect` (mpremote's own test_resume.sh)
        r = subprocess.run([MPREMOTE, "eval", "1+2", "disconnect", "eval", "2+3"], capture_output=True,
                           timeout=60, env=env)
        assert (r.returncode, r.stdout) == (0, b"3\r\n5\r\n"), r.stderr
        r = subprocess.run([MPREMOTE, "connect", "id:" + u.unique_id, "eval", "7"], capture_output=True,
                           timeout=60, env=env)
        assert r.stdout == b"7\r\n", r.stderr
