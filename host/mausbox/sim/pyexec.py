"""The board's REPL for the virtual unit: `shared/runtime/pyexec.c` as an ESP32 runs it, byte for byte.

The friendly REPL (banner, the `sys.ps1`/`sys.ps2` prompts, readline.py's line editor, `... ` continuation, paste
mode), the raw REPL (Ctrl-A, `OK`, output, `\\x04`, errors, `\\x04`, `>`), raw-paste mode with its flow-control
window, Ctrl-D's soft reboot. While code runs, what the host types goes to the code's stdin; what it leaves unread
goes back to the REPL when it ends, as a board's UART buffer does; the interrupt char (Ctrl-C, or what
`micropython.kbd_intr` set) interrupts it. A Ctrl-C that comes before the code has started is held for it; once
the code has ended it is a key for the REPL.

Pyexec is the state machine only. Its `port` (serial.SerialUnit) is the rest of the board: `emit(bytes)` to the
host, `drain()` (what the interpreter printed goes out first), `soft_reboot()`, `complete(text)` for Tab,
`interrupt()` (the interrupt char while code runs), `command(bytes)` to the interpreter and `exec_delay_ms`.
The interpreter's words arrive through `on_status` (replserver.py: B banner, S started, E ended, D done, R
SystemExit, K kbd_intr, Q a new prompt).
"""

from __future__ import annotations

import binascii
import struct
import time

from mausbox.sim.readline import Readline, continue_with_input

RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
HELP_LINE = b'Type "help()" for more information.\r\n'
PASTE_BANNER = b"\r\npaste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== "
SOFT_REBOOT = b"MPY: soft reboot\r\n"
PS1, PS2 = b">>> ", b"... "
WINDOW = 128  # raw-paste flow-control window: MICROPY_REPL_STDIN_BUFFER_MAX (256) / 2

# States: booting (boot.py and main.py run), the friendly REPL and its paste mode, the raw REPL and its raw-paste
# mode, code from the REPL running.
BOOT, FRIENDLY, PASTE_F, RAW, PASTE_RAW, EXEC = range(6)


class Pyexec:
    """The console's side of the REPL (module docstring)."""

    def __init__(self, port) -> None:
        self.port = port
        self.rl = Readline(port.emit, port.complete)
        self.pend = bytearray()  # keys for the REPL that came while code ran or the unit booted
        self.boot("f")

    def boot(self, mode: str) -> None:
        """A new interpreter boots (boot.py, main.py), then enters `mode`'s REPL: "f" friendly, "r" raw
        (pyexec_mode_kind, which a soft reboot keeps)."""
        self.mode = mode
        self.state = BOOT
        self.armed = False  # code runs (between S and E): keys go to its stdin, the interrupt char interrupts
        self.fenced = False  # the code has ended (E seen): keys wait for the REPL
        self.kbd = 3  # the interrupt char (micropython.kbd_intr)
        self.ps = {b"1": PS1, b"2": PS2}  # sys.ps1 and sys.ps2 as the interpreter has them (mp_init's)
        self.banner = b""
        self.queued = bytearray()  # keys that came after the command was sent, before it started
        self.stdin = bytearray()  # keys on their way to the code's stdin
        self.coded = 0  # keys the running code was sent (its stdin's and its Ctrl-C's), in order
        self.kbd_at = -1  # where among them the Ctrl-C that interrupted it came (-1: none did)
        self.moved = 0  # of them, how many never left the bridge (fence gave them back to the REPL)
        self.fence_due = False  # the code ended while an interrupt was in flight: the REPL waits for it
        self.cid = 0
        self.exec_raw = False
        self.send: bytes | None = None  # the command for the interpreter, due at send_at
        self.send_at = 0.0
        self.line = bytearray()
        self.cont = False
        self.paste_n = 0

    @property
    def raw(self) -> bool:
        """A tool speaks the raw REPL (its output is never dropped: mpremote waits for it)."""
        return self.state == EXEC and self.exec_raw or self.state in (RAW, PASTE_RAW)

    # -- keys from the host ----------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Keys from the host, in order, to whoever reads the console now."""
        for i, c in enumerate(data):
            st = self.state
            if st in (BOOT, EXEC):
                if self.fenced:
                    self.pend.append(c)
                elif not self.armed:
                    self.queued.append(c)  # sent, not started yet: the code gets it when it starts
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
            if self.state in (BOOT, EXEC):  # a command started: the rest waits for it
                self.queued += data[i + 1:]
                return

    def _to_code(self, c: int) -> None:
        if c == self.kbd:
            if self.port.interrupt():
                self.kbd_at = self.coded
        else:
            self.stdin.append(c)
        self.coded += 1

    def _friendly_banner(self) -> None:
        self.port.emit(self.banner + b"\r\n" + HELP_LINE)
        self.state = FRIENDLY
        self._prompt()

    def _prompt(self) -> None:
        self.line = bytearray()
        self.cont = False
        self.rl.init(self.line, self.ps[b"1"])

    def _raw_banner(self) -> None:
        self.state = RAW
        self.line = bytearray()
        self.port.emit(RAW_BANNER + b">")

    def _friendly(self, c: int) -> None:
        ev = self.rl.process(c)
        if ev < 0:
            return
        emit = self.port.emit
        line = self.line
        if not self.cont:
            if ev == 1:
                emit(b"\r\n")
                self.mode = "r"
                self._raw_banner()
            elif ev == 2:
                emit(b"\r\n")
                self._friendly_banner()
            elif ev == 3:
                emit(b"\r\n")
                self._prompt()
            elif ev == 4:
                emit(b"\r\n")
                self.port.soft_reboot()
            elif ev == 5:
                emit(PASTE_BANNER)
                self.line = bytearray()
                self.state = PASTE_F
            elif not line:
                self._prompt()
            elif continue_with_input(bytes(line)):
                self._newline()
            else:
                self._exec(b"s", bytes(line), raw=False)
            return
        if ev == 3:
            emit(b"\r\n")
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
        self.line += b"\n"
        self.cont = True
        self.rl.note_newline(self.ps[b"2"])

    def _friendly_paste(self, c: int) -> None:
        if c == 3:
            self.port.emit(b"\r\n")
            self.state = FRIENDLY
            self._prompt()
        elif c == 4:
            self.port.emit(b"\r\n")
            self._exec(b"x", bytes(self.line), raw=False)
        else:
            self.line.append(c)
            self.port.emit(b"\r\n=== " if c == 13 else bytes((c,)))

    def _raw(self, c: int) -> None:
        emit = self.port.emit
        line = self.line
        if c == 1:
            if len(line) == 2 and line[0] == 5:
                if line[1] == ord("A"):
                    emit(b"R\x01" + struct.pack("<H", WINDOW) + b"\x01")
                    self.line = bytearray()
                    self.paste_n = 0
                    self.state = PASTE_RAW
                    return
                emit(b"R\x00>")
                self.line = bytearray()
                return
            self._raw_banner()
        elif c == 2:
            emit(b"\r\n")
            self.mode = "f"
            self._friendly_banner()
        elif c == 3:
            self.line = bytearray()
        elif c == 4:
            emit(b"OK")
            if not line:
                emit(b"\r\n")
                self.port.soft_reboot()
            else:
                self._exec(b"x", bytes(line), raw=True)
        else:
            line.append(c)

    def _raw_paste(self, c: int) -> None:
        if c == 4:
            self.port.emit(b"\x04")
            self._exec(b"x", bytes(self.line), raw=True)
        elif c == 3:
            self.port.emit(b"\x04\x04KeyboardInterrupt: \r\n\x04>")
            self.line = bytearray()
            self.state = RAW
        else:
            self.line.append(c)
            self.paste_n += 1
            if self.paste_n % WINDOW == 0:
                self.port.emit(b"\x01")

    def _exec(self, kind: bytes, src: bytes, raw: bool) -> None:
        self.state = EXEC
        self.exec_raw = raw
        self.cid += 1
        self.armed = self.fenced = False
        self.send = b"%s%d %d\n" % (kind, self.cid, len(src)) + src
        self.send_at = time.monotonic() + (self.port.exec_delay_ms / 1000 if raw else 0)

    def _exec_done(self, left: bytes) -> None:
        self.port.drain()
        if self.state == BOOT:
            self.fenced = False
            self.pend[:0] = left
            return
        if self.exec_raw:
            self.port.emit(b"\x04>")
            self.state = RAW
            self.line = bytearray()
        else:
            self.state = FRIENDLY
            self._prompt()
        pend, self.pend = left + bytes(self.pend), bytearray()
        if pend:
            self.feed(pend)

    def fence(self) -> None:
        """The code has ended and no interrupt is in flight: the unit may print its error."""
        self.fence_due = False
        self.moved = len(self.stdin)
        self.pend[:0] = self.stdin  # never reached the code: the REPL reads it
        self.stdin.clear()
        self.port.command(b"e\n")

    # -- words from the interpreter --------------------------------------------------------------------

    def on_status(self, tag: bytes, rest: bytes, body: bytes, interrupting: bool) -> None:
        """One of the interpreter's status lines that concern the REPL (B, K, Q, S, E, D, R); `interrupting`: an
        interrupt is in flight (its end is fenced once the interpreter confirms it)."""
        port = self.port
        if tag == b"K":
            self.kbd = int(rest)
            return
        if tag == b"Q":  # sys.ps1 = ... or sys.ps2 = ...: pyexec.c prints it at the next prompt
            k, _, v = rest.partition(b" ")
            if k in self.ps:
                try:
                    self.ps[k] = binascii.unhexlify(v)
                except (ValueError, binascii.Error):
                    pass
            return
        if tag == b"B":
            port.drain()
            self.banner = rest
            if self.mode == "f":
                self._friendly_banner()
            else:
                self._raw_banner()
            keys = bytes(self.pend + self.queued)
            self.pend.clear()
            self.queued.clear()
            self.feed(keys)
            return
        try:
            int(rest.split()[0])  # the command's id
        except (ValueError, IndexError):
            return
        if tag == b"S":
            self.armed, self.fenced, self.kbd = True, False, 3
            self.coded, self.kbd_at, self.moved = 0, -1, 0
            keys = bytes(self.pend + self.queued)  # all of it waited in the UART buffer for this code
            self.pend.clear()
            self.queued.clear()
            for c in keys:
                self._to_code(c)
        elif tag == b"E":
            self.armed, self.fenced = False, True
            self.queued.clear()
            port.drain()
            if self.exec_raw and self.state == EXEC:
                port.emit(b"\x04")
            self.fence_due = True
            if not interrupting:
                self.fence()
        elif tag == b"D":
            self.fenced = False
            if b"L" in rest.split()[1:]:
                # Its Ctrl-C landed after its end: a key for the next reader, in the place it was typed. What is
                # left of the code's keys (the unread `body`, then those `fence` gave back) came partly before it.
                left = len(body) + self.moved
                at = min(max(self.kbd_at - (self.coded - left), 0), left) if self.kbd_at >= 0 else 0
                keys = body + bytes(self.pend)
                self.pend = bytearray(keys[:at] + bytes((self.kbd,)) + keys[at:])
                body = b""
            self._exec_done(body)
        elif tag == b"R":
            if self.exec_raw and self.state == EXEC:
                # pyexec.c parse_compile_execute: the \x04 that ends the (empty) error output comes before
                # pyexec_raw_repl returns for the soft reset, so the host reads both of its \x04s
                port.drain()
                port.emit(b"\x04")
            port.soft_reboot()  # SystemExit: in the raw REPL too (pyexec_mode_kind stays raw)
