"""End to end: `mausbox sim --serial --headless` runs the real firmware; the host reaches it through the pty.

Each test starts the virtual unit as a user does, drives its hardware through the control FIFO (the same
lines the terminal UI sends) and talks to it over the pseudo-terminal with the real mpremote, a serial
console, and the `mausbox` commands.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import serial
from mausbox.cli import main as mausbox_main
from mausbox.mpbuild import micropython_binary
from mausbox.sim.run import DEFAULT_HEAP, prepare_root
from scenariokit import live_records

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

MPREMOTE = str(Path(sys.executable).parent / "mpremote")
READY = b"MAUSBOX READY "
WAIT_S = 90  # the longest any console wait may take before the test fails (see Console.wait)
PROMPT = b"\r\n>>> "


class VirtualUnit:
    """`mausbox sim --serial --headless --root DIR`, its control FIFO and its flash folder."""

    def __init__(self, root: Path, data: Path):
        self.root = root
        env = dict(os.environ, XDG_DATA_HOME=str(data))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mausbox", "sim", "--serial", "--headless", "--root", str(root),
             "--heap", DEFAULT_HEAP], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        assert self.proc.stdout is not None
        self._ctl = -1
        first = self.proc.stdout.readline().decode()
        while first.startswith("sim: "):  # what the start-up is waiting for, said first
            first = self.proc.stdout.readline().decode()
        m = re.search(r"virtual unit on (\S+);", first)
        if not m:
            self.stop()
            raise AssertionError("mausbox sim did not start: " + first + self.proc.stdout.read().decode())
        self.pty = m.group(1)
        self._ctl = os.open(root / ".sim" / "ctl", os.O_WRONLY | os.O_NONBLOCK)

    def wait_ready(self) -> None:
        """Wait until the firmware has booted: it writes status.json just before `MAUSBOX READY`. The
        console line itself may be gone: like a board's UART, the unit drops output nobody reads, and
        the test's terminal opens after the unit has started."""
        end = time.monotonic() + WAIT_S
        while not (self.root / "status.json").exists():
            if self.proc.poll() is not None or time.monotonic() > end:
                raise AssertionError("the virtual unit did not boot: " + (self.proc.stdout.read().decode()
                                                                          if self.proc.poll() is not None else ""))
            time.sleep(0.05)

    def act(self, **action) -> None:
        """One hardware action, as the terminal UI sends it: {"press": 1}, {"tap": "game/mms"}, ..."""
        os.write(self._ctl, (json.dumps(dict(action, at_ms=0)) + "\n").encode())

    def click(self, p: int) -> None:
        self.act(press=p)
        time.sleep(0.15)  # a click, held long enough to count on a busy machine too
        self.act(release=p)
        time.sleep(0.15)

    def card(self, ident: str) -> None:
        """Put a card on the pad and take it off again."""
        self.act(tap=ident)
        time.sleep(0.3)
        self.act(remove=ident)
        time.sleep(0.4)  # the pad counts a card gone after 3 empty scans

    def logs(self) -> list[Path]:
        return sorted((self.root / "logs").glob("*.jsonl"))

    def records(self, log: Path) -> list[dict]:
        return live_records(log)

    def stop(self) -> None:
        if self._ctl >= 0:
            os.close(self._ctl)
            self._ctl = -1
        if self.proc.poll() is None:
            children = _children(self.proc.pid)
            self.proc.send_signal(signal.SIGINT)  # the CLI's own way out: it stops the interpreter too
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                for pid in children:  # the firmware process would outlive a killed CLI
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Console:
    """A terminal on the unit's serial port, read all the time (a UART drops what nobody reads)."""

    def __init__(self, pty: str):
        self.port = serial.Serial(pty, timeout=0.05)
        self.data = bytearray()
        self._run = True
        self._thread = threading.Thread(target=self._reader, daemon=True)
        self._thread.start()

    def _reader(self) -> None:
        while self._run:
            try:
                self.data += self.port.read(4096)
            except (OSError, serial.SerialException):
                return

    def mark(self) -> int:
        return len(self.data)

    def wait(self, pattern: bytes, since: int = 0, timeout: float = WAIT_S) -> int:
        """Wait for `pattern` after offset `since`; returns the offset just past it. The timeout is a
        ceiling for a unit that never answers, generous for a machine three times slower than usual."""
        end = time.monotonic() + timeout
        while True:
            i = self.data.find(pattern, since)
            if i >= 0:
                return i + len(pattern)
            if time.monotonic() > end:
                tail = bytes(self.data[since:])[-1500:].decode(errors="replace")
                raise AssertionError(f"no {pattern!r} on the console within {timeout} s; it shows:\n{tail}")
            time.sleep(0.02)

    def write(self, data: bytes) -> None:
        self.port.write(data)

    def text(self, since: int = 0) -> str:
        return bytes(self.data[since:]).decode(errors="replace")

    def close(self) -> None:
        self._run = False
        self._thread.join(timeout=2)
        self.port.close()


@pytest.fixture(scope="module")
def firmware(tmp_path_factory):
    """The firmware laid out once (compiled to .mpy); each unit starts from a copy, so `mausbox sim`
    finds it up to date and starts at once."""
    return prepare_root(tmp_path_factory.mktemp("firmware"))


@pytest.fixture
def vunit(tmp_path, firmware):
    shutil.copytree(firmware, tmp_path / "unit")
    u = VirtualUnit(tmp_path / "unit", tmp_path / "data")
    yield u
    u.stop()


@pytest.fixture
def console(vunit):
    c = Console(vunit.pty)
    yield c
    c.close()


def mpremote(pty: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([MPREMOTE, "connect", pty, *args], capture_output=True, timeout=timeout)


def start_mms(u: VirtualUnit, con: Console) -> int:
    """Tap the game card, players 1 and 2 join, tap it again to start: returns the console offset of
    the game_start record."""
    since = con.mark()
    u.card("game/mms")
    for n in (1, 2):
        # Each join seen on the console before the next step. A click can be lost on a machine busy with
        # other tests: the unit, stalled, reads its press and release in two passes back to back (a
        # glitch, not a press), so it is clicked again; a joined player's press changes nothing.
        for _ in range(4):
            u.click(n)
            try:
                con.wait(b"Joined: %d |" % n, since, timeout=20)
                break
            except AssertionError:
                continue
    u.act(tap="game/mms")
    at = con.wait(b'"type":"game_start"', since)
    u.act(remove="game/mms")
    time.sleep(0.4)
    return at


def event_records(text: str, rtype: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        if line.startswith("EV ") and f'"type":"{rtype}"' in line:
            out.append(json.loads(line[3:]))
    return out


# -- 1. mpremote lists and copies the unit's files -------------------------------------------------------

def test_mpremote_lists_and_copies_the_units_files(vunit, console, tmp_path):
    vunit.wait_ready()
    start_mms(vunit, console)
    since = console.mark()
    vunit.card("game/mms")  # the game card twice during a game: the players abort it
    vunit.act(tap="game/mms")
    console.wait(b'"reason":"aborted by players"', since)
    vunit.act(remove="game/mms")
    console.close()

    r = mpremote(vunit.pty, "fs", "ls")
    assert r.returncode == 0, r.stderr
    names = set(r.stdout.decode().split())
    assert {"main.py", "board.json", "maus/", "logs/", "status.json"} <= names, r.stdout
    r = mpremote(vunit.pty, "fs", "ls", ":logs")
    assert r.returncode == 0 and "00001-mms.jsonl" in r.stdout.decode(), r.stdout + r.stderr
    local = tmp_path / "copy.jsonl"
    r = mpremote(vunit.pty, "fs", "cp", ":logs/00001-mms.jsonl", str(local))
    assert r.returncode == 0, r.stderr
    on_flash = vunit.root / "logs" / "00001-mms.jsonl"
    assert local.read_bytes() == on_flash.read_bytes()
    recs = vunit.records(local)
    assert recs[0]["type"] == "game_start" and recs[-1]["type"] == "game_abort"
    r = mpremote(vunit.pty, "fs", "cat", ":board.json")
    assert json.loads(r.stdout)["name"] == "sim"
    # and `mausbox logs pull` fetches the same bytes, verified
    dest = tmp_path / "raw"
    assert mausbox_main(["logs", "pull", "--port", vunit.pty, "--store", str(tmp_path / "logs.sqlite"),
                         "--dest", str(dest)]) == 0
    pulled = list(dest.rglob("00001-mms.jsonl"))
    assert len(pulled) == 1 and pulled[0].read_bytes() == on_flash.read_bytes()


# -- 2. Ctrl-C stops a game, Ctrl-D restarts the firmware --------------------------------------------------

def test_ctrl_c_stops_the_game_and_soft_reboot_restarts_the_firmware(vunit, console):
    vunit.wait_ready()
    for round_ in (1, 2):
        start_mms(vunit, console)
        time.sleep(0.3)
        since = console.mark()
        console.write(b"\x03\x03")  # two: the app takes a lone one for a stray byte
        at = console.wait(PROMPT, since)
        shown = console.text(since)[: at - since]
        aborts = event_records(shown, "game_abort")
        assert [a["reason"] for a in aborts] == ["interrupted (Ctrl-C)"], shown
        assert "KeyboardInterrupt" in shown
        log = vunit.logs()[-1]
        assert log.name == "%05d-mms.jsonl" % round_
        last = vunit.records(log)[-1]
        assert last["type"] == "game_abort" and last["reason"] == "interrupted (Ctrl-C)"
        # the REPL is free, with main.py's globals: the firmware's modules are there to inspect
        console.write(b"maus.unit.CRASH_LIMIT\r")
        console.wait(b"3\r\n>>> ", at)
        # Ctrl-D: a soft reboot runs main.py again, a fresh boot
        since = console.mark()
        console.write(b"\x04")
        ready = console.wait(READY, since)
        assert console.text(since).startswith("\r\nMPY: soft reboot\r\n")
        assert console.text(since).count("MAUSBOX READY") == 1 and ready
    # the restarted firmware plays: a second game got its own log above
    assert [p.name for p in vunit.logs()] == ["00001-mms.jsonl", "00002-mms.jsonl"]


def test_ctrl_c_while_the_unit_boots_stops_the_firmware(vunit, console):
    """Ctrl-C right behind the Ctrl-D (same write, or while main.py is starting) stops main.py: the
    prompt comes and the REPL answers, whatever moment of the boot it hits."""
    vunit.wait_ready()
    since = console.mark()
    console.write(b"\x03\x03")
    console.wait(PROMPT, since)
    for k, delay in enumerate((0.0, 0.01, 0.03, 0.06, 0.1, 0.2)):
        since = console.mark()
        console.write(b"\x04")
        time.sleep(delay)
        console.write(b"\x03\x03")
        at = console.wait(PROMPT, console.wait(b"MPY: soft reboot\r\n", since))
        assert "KeyboardInterrupt" in console.text(since), console.text(since)
        console.write(b"%d*3\r" % k)
        console.wait(b"%d\r\n>>> " % (k * 3), at)
    assert "hard reset" not in console.text()


def test_a_late_ctrl_c_does_not_interrupt_the_next_command(vunit, console):
    """Ctrl-C typed right behind short commands: it interrupts the command or, once that has finished,
    is a keystroke for the REPL. The next command always runs, and the interpreter never dies."""
    vunit.wait_ready()
    since = console.mark()
    console.write(b"\x03\x03")
    since = console.wait(PROMPT, since)
    for i in range(12):
        console.write(b"import time; time.sleep_ms(%d)\r\x03" % (i % 4))
        time.sleep(0.01 * (i % 5))
        console.write(b"print('next', %d)\r" % i)
        since = console.wait(b"next %d\r\n>>> " % i, since)
    assert "hard reset" not in console.text()


class Port:
    """The rest of the board, as the REPL's state machine sees it (pyexec.Pyexec's port): what it emits and asks."""

    exec_delay_ms = 0

    def __init__(self):
        self.out = bytearray()
        self.interrupts = 0
        self.commands = []
        self.reboots = 0

    def emit(self, data):
        self.out += data

    def drain(self):
        pass

    def soft_reboot(self):
        self.reboots += 1

    def complete(self, text):
        return b""

    def interrupt(self):
        self.interrupts += 1  # the SIGINT the bridge would send
        return True

    def command(self, data):
        self.commands.append(data)


def test_the_bridge_turns_a_ctrl_c_after_the_code_into_a_keystroke():
    """The rule itself, on the REPL's state machine (no interpreter needed): between the code's end (`E`) and the
    prompt a Ctrl-C waits as input; before the code starts it is held for it."""
    from mausbox.sim import pyexec

    r = pyexec.Pyexec(Port())
    r.state, r.fenced, r.armed = pyexec.EXEC, True, False
    r.feed(b"\x03x")
    assert bytes(r.pend) == b"\x03x" and not r.queued
    r.fenced, r.pend = False, bytearray()  # sent, not started yet: the code gets it when it starts
    r.feed(b"\x03")
    assert bytes(r.queued) == b"\x03" and not r.pend


def test_a_late_ctrl_c_keeps_its_place_among_the_keys_typed_around_it():
    """CI run on ac2bcf7: `sleep_ms(0)\r\x03print('next', 0)\r` in one read. The Ctrl-C was sent to the short code
    but landed after its end (D ... L); the keys after it, which the code left unread, came back ahead of it, so
    the Ctrl-C interrupted the print instead. It goes back where it was typed: after "ab", before "print..."."""
    from mausbox.sim import pyexec

    for flushed in (True, False):  # the keys reached the interpreter's stdin pipe, or were still in the bridge
        r = pyexec.Pyexec(Port())
        r.on_status(b"B", b"banner", b"", False)
        r.feed(b"x\r")
        assert r.state == pyexec.EXEC
        r.on_status(b"S", b"1", b"", False)
        r.feed(b"ab\x03print(1)\r")
        assert r.port.interrupts == 1
        body = b""
        if flushed:
            body, r.stdin = bytes(r.stdin), bytearray()  # the code read none of it
        r.on_status(b"E", b"1", b"", True)
        r.fence()  # the pong
        r.on_status(b"D", b"1 L %d" % len(body), body, False)
        # The REPL read "ab", then the Ctrl-C (the line is dropped), then ran print(1) with nothing behind it.
        assert r.state == pyexec.EXEC and r.send.endswith(b"print(1)"), (flushed, r.send)
        assert not r.queued and not r.pend, (flushed, r.queued, r.pend)


def test_a_ctrl_c_that_lands_after_boot_py_ended_interrupts_main_py():
    """A Ctrl-C sent while boot.py ran but raised only after it ended (`D0 L 0`: a busy machine delays
    the signal) stays pending, as on a board, and interrupts main.py when it starts: it is never dropped."""
    from mausbox.sim import pyexec

    port = Port()
    r = pyexec.Pyexec(port)  # booting
    r.on_status(b"S", b"0", b"", False)  # boot.py starts
    r.on_status(b"E", b"0", b"", False)  # it ended; the Ctrl-C sent meanwhile landed after its end (L)
    r.on_status(b"D", b"0 L 0", b"", False)
    assert not port.interrupts
    r.on_status(b"S", b"0", b"", False)  # main.py starts: the pending Ctrl-C is raised in it
    assert port.interrupts == 1
    r.on_status(b"E", b"0 K", b"", False)  # an ordinary interrupted end leaves nothing pending
    r.on_status(b"D", b"0 0", b"", False)
    assert not r.pend


def test_the_repl_state_machine_speaks_pyexec_c_bytes():
    """pyexec.c's bytes for the friendly REPL, paste mode, the raw REPL and raw-paste flow control, driven key by key
    (the interpreter's words given as its status lines)."""
    from mausbox.sim import pyexec

    port = Port()
    r = pyexec.Pyexec(port)
    r.on_status(b"B", b"MicroPython v1.28.0 on 2026-01-01; Generic ESP32 module with ESP32", b"", False)
    assert bytes(port.out) == (b"MicroPython v1.28.0 on 2026-01-01; Generic ESP32 module with ESP32\r\n"
                               b'Type "help()" for more information.\r\n>>> ')
    del port.out[:]
    r.feed(b"for i in (1, 2):\r")  # a compound statement: `... ` and auto-indent
    assert bytes(port.out) == b"for i in (1, 2):\r\n...     "
    del port.out[:]
    r.feed(b"print(i)\r\r\r")  # two lines of auto-indent only: the third has none
    assert bytes(port.out) == b"print(i)\r\n...     \r\n...     \r\n... " and r.state == pyexec.FRIENDLY
    r.feed(b"\r")  # an empty line ends the statement: it runs
    assert r.state == pyexec.EXEC and r.send is not None and r.send.startswith(b"s1 ")
    assert r.send.split(b"\n", 1)[1].startswith(b"for i in (1, 2):\n    print(i)\n")
    r.send = None
    r.on_status(b"S", b"1", b"", False)
    r.on_status(b"E", b"1", b"", False)
    assert port.commands == [b"e\n"]  # the code ended, no interrupt in flight: the error may be printed
    del port.out[:]
    r.on_status(b"D", b"1 0", b"", False)
    assert bytes(port.out) == b">>> " and r.state == pyexec.FRIENDLY
    del port.out[:]
    r.feed(b"\x05")  # paste mode: every key echoed, a line's end as `=== `
    assert bytes(port.out) == b"\r\npaste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== "
    del port.out[:]
    r.feed(b"x = 1\r\x03")  # Ctrl-C leaves it
    assert bytes(port.out) == b"x = 1\r\n=== \r\n>>> " and r.state == pyexec.FRIENDLY
    del port.out[:]
    r.feed(b"\x01")  # the raw REPL
    assert bytes(port.out) == b"\r\nraw REPL; CTRL-B to exit\r\n>" and r.mode == "r"
    del port.out[:]
    r.feed(b"\x05A\x01")  # raw-paste: R, 1, the window (128, little-endian), then a window's go-ahead
    assert bytes(port.out) == b"R\x01\x80\x00\x01" and r.state == pyexec.PASTE_RAW
    del port.out[:]
    r.feed(b"#" * 300)
    assert bytes(port.out) == b"\x01\x01"  # one go-ahead each 128 bytes taken
    del port.out[:]
    r.feed(b"\x04")
    assert bytes(port.out) == b"\x04" and r.state == pyexec.EXEC and r.exec_raw
    r.send = None
    r.on_status(b"S", b"2", b"", False)
    r.on_status(b"E", b"2", b"", False)
    r.on_status(b"D", b"2 0", b"", False)
    assert bytes(port.out) == b"\x04\x04\x04>"  # the paste's end, the output's end, the error's end, the prompt
    del port.out[:]
    r.feed(b"\x04")  # Ctrl-D on an empty raw line: a soft reboot
    assert bytes(port.out) == b"OK\r\n" and port.reboots == 1


# -- 3. safe mode after three crashes in a row -----------------------------------------------------------

CRASH_HOOK = """# test hook: a firmware bug that crashes every boot after the crash counter is counted
import maus.checks.selftest


def _crash(unit):
    raise RuntimeError("boot self-test crashed (test hook)")


maus.checks.selftest.boot = _crash
"""


def rtc_counter(root: Path) -> int:
    data = (root / ".rtcmem").read_bytes()
    assert len(data) >= 2 and data[1] == 0xA5, data  # then the watchdog byte and the boot id (main.py)
    return data[0]


def soft_reboot(con: Console, until: bytes = PROMPT) -> str:
    since = con.mark()
    con.write(b"\x04")
    at = con.wait(until, con.wait(b"MPY: soft reboot\r\n", since))
    return con.text(since)[: at - since]


def test_three_crashes_in_a_row_start_safe_mode_until_cleared(vunit, console, capsys):
    vunit.wait_ready()
    since = console.mark()
    console.write(b"\x03\x03")
    console.wait(PROMPT, since)
    assert rtc_counter(vunit.root) == 0  # a clean stop (Ctrl-C) is not a crash
    (vunit.root / "boot.py").write_text(CRASH_HOOK)
    for n in (1, 2, 3):
        out = soft_reboot(console)
        assert "RuntimeError: boot self-test crashed" in out and "MAUSBOX READY" not in out, out
        assert rtc_counter(vunit.root) == n
    out = soft_reboot(console)
    assert "MAUSBOX SAFE MODE: 3 crashes in a row; games are disabled, the REPL is free." in out, out
    assert "maus.unit.clear_safe_mode()" in out and "RuntimeError" not in out
    status = json.loads((vunit.root / "status.json").read_text())
    assert status["safe_mode"] is True and status["crashes"] == 3
    # games are disabled: a game card on the pad starts nothing, the REPL answers
    vunit.card("game/mms")
    since = console.mark()
    console.write(b"1+1\r")
    console.wait(b"2\r\n>>> ", since)
    assert not (vunit.root / "logs").exists() or not vunit.logs()
    # the cause fixed, safe mode stays until it is cleared
    (vunit.root / "boot.py").unlink()
    assert "MAUSBOX SAFE MODE" in soft_reboot(console)
    console.close()
    # `mausbox doctor` tells what to do
    assert mausbox_main(["doctor", "--port", vunit.pty, "--json"]) == 1
    safe = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["check"] == "safe mode"]
    assert not safe[0]["ok"] and "3 crashes" in safe[0]["detail"] and "clear_safe_mode()" in safe[0]["fix"]
    console = Console(vunit.pty)
    since = console.mark()
    console.write(b"\r\x03")
    since = console.wait(PROMPT, since)
    console.write(b"import maus.unit; maus.unit.clear_safe_mode(); print('cleared')\r")
    console.wait(b"\r\ncleared\r\n>>> ", since)
    assert rtc_counter(vunit.root) == 0
    out = soft_reboot(console, READY)
    assert "SAFE MODE" not in out
    assert rtc_counter(vunit.root) == 1  # this boot counts until it runs healthy or stops cleanly
    assert json.loads((vunit.root / "status.json").read_text())["safe_mode"] is False
    start_mms(vunit, console)  # games are back
    since = console.mark()
    console.write(b"\x03\x03")
    console.wait(PROMPT, since)
    assert rtc_counter(vunit.root) == 0
    console.close()


# -- 6. mausbox doctor and config against the running firmware ---------------------------------------------

def test_doctor_reports_the_virtual_units_flash_not_the_host_disk(vunit, console, tmp_path, capsys):
    """The virtual unit's flash is its folder inside a stock ESP32's 2 MiB littlefs partition: statvfs on the
    unit (and so doctor, and `mpremote df`) says that partition less what the folder holds, in 4 KiB blocks by
    littlefs's accounting (host/mausbox/sim/vflash.py), and a file the unit writes counts at once."""
    vunit.wait_ready()
    console.close()

    def free():
        assert mausbox_main(["doctor", "--port", vunit.pty, "--json"]) == 0
        return json.loads(capsys.readouterr().out)["status"]["free_bytes"]

    def df():
        r = mpremote(vunit.pty, "df")
        rows = [ln.split() for ln in r.stdout.decode().splitlines() if ln.endswith(" /")]
        assert r.returncode == 0 and len(rows) == 1, r.stdout + r.stderr
        return int(rows[0][1]), int(rows[0][3])

    before = free()
    assert 0 < before < 2 * 1024 * 1024 and before % 4096 == 0
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 100_000)  # 25 blocks: 4,096 bytes in the first, then 4,092, 4,088, ... (CTZ pointers)
    r = mpremote(vunit.pty, "cp", str(big), ":logs/big.bin")
    assert r.returncode == 0, r.stdout + r.stderr
    assert free() == before - 25 * 4096
    assert df() == (2 * 1024 * 1024, before - 25 * 4096)
    r = mpremote(vunit.pty, "rm", ":logs/big.bin")
    assert r.returncode == 0, r.stdout + r.stderr
    assert free() == before == df()[1]
    assert mausbox_main(["doctor", "--port", vunit.pty]) == 0
    assert f"{before // 1024} KB free" in capsys.readouterr().out


def test_doctor_and_config_against_the_running_firmware(vunit, console, capsys):
    import maus

    vunit.wait_ready()
    console.close()
    assert mausbox_main(["doctor", "--port", vunit.pty, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"], out["findings"]
    st = out["status"]
    assert st["version"] == maus.VERSION and st["board"] == "sim" and st["rfid_version"] == 0x92
    assert {f["check"] for f in out["findings"]} >= {"port", "firmware", "board", "rfid", "piezo", "buttons"}
    assert mausbox_main(["config", "--port", vunit.pty, "set", "lang", "en"]) == 0
    assert mausbox_main(["config", "--port", vunit.pty, "set", "volume", "1"]) == 0
    capsys.readouterr()
    assert mausbox_main(["config", "--port", vunit.pty, "get", "lang"]) == 0
    assert capsys.readouterr().out.strip() == '"en"'
    saved = json.loads((vunit.root / "settings.json").read_text())
    assert saved["lang"] == "en" and saved["volume"] == 1
    # config restarted the firmware, which now speaks English
    con = Console(vunit.pty)
    try:
        since = con.mark()
        vunit.card("game/mms")
        con.wait(b"SAY Mucks Maeuschen | Press to join", since)
    finally:
        con.close()


def test_a_killed_cli_takes_the_firmware_with_it(vunit, console):
    vunit.wait_ready()
    children = _children(vunit.proc.pid)
    assert len(children) == 1
    vunit.proc.kill()  # SIGKILL: no clean-up code of the CLI runs
    vunit.proc.wait()
    end = time.monotonic() + 5
    while _alive(children[0]) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(children[0]), "the firmware process outlived its CLI"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie waiting for init to reap it is gone


def test_a_unit_in_safe_mode_for_a_corrupt_board_file_is_reached_and_its_logs_pulled(vunit, console, tmp_path,
                                                                                     capsys):
    """A corrupt board.json crashes every boot until safe mode; the host still gets hello, status and the
    logs (none of them needs the hardware), and doctor says why (issue 27 item 4)."""
    vunit.wait_ready()
    start_mms(vunit, console)
    since = console.mark()
    console.write(b"\x03\x03")
    console.wait(PROMPT, since)
    (vunit.root / "board.json").write_text('{"name": "sim", "pins": ')  # cut off mid-write
    for _ in range(3):
        assert "MAUSBOX READY" not in soft_reboot(console)
    out = soft_reboot(console)
    assert "MAUSBOX SAFE MODE: 3 crashes in a row" in out, out
    console.close()
    assert mausbox_main(["doctor", "--port", vunit.pty, "--json"]) == 1
    safe = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["check"] == "safe mode"]
    assert not safe[0]["ok"] and "board:" in safe[0]["detail"], safe
    dest = tmp_path / "raw"
    assert mausbox_main(["logs", "pull", "--port", vunit.pty, "--store", str(tmp_path / "logs.sqlite"),
                         "--dest", str(dest)]) == 0
    pulled = list(dest.rglob("00001-mms.jsonl"))
    assert len(pulled) == 1 and pulled[0].read_bytes() == (vunit.root / "logs" / "00001-mms.jsonl").read_bytes()
