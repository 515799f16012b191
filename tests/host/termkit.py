"""A real terminal for the terminal simulator: `mausbox sim` runs in a pseudo-terminal (pexpect), its output
is rendered by a VT emulator (pyte), and the screen is read back as a person sees it, the OLED included: the
braille or block pixels are turned back into the 128x64 frame and read with the firmware's own 8x8 font.

Nothing here knows the simulator's internals: keys go in as bytes, text comes out as screen cells."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pexpect
import pyte

WAIT_S = 240.0  # an event's bound: generous, a busy machine stalls the unit for seconds (never a figure)
_FONT: dict[str, str] | None = None


def font(binary: str) -> dict[str, str]:
    """{8 column bytes as hex: character} of MicroPython's framebuf font (the one the unit's OLED text uses),
    drawn by the MicroPython the unit runs on."""
    global _FONT
    if _FONT is None:
        code = ("import framebuf\nb=bytearray(8)\nf=framebuf.FrameBuffer(b,8,8,framebuf.MONO_VLSB)\n"
                "for c in range(33,127):\n f.fill(0);f.text(chr(c),0,0,1);print(bytes(b).hex())\n")
        out = subprocess.run([binary, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        _FONT = {h: chr(33 + i) for i, h in enumerate(out)}
    return _FONT


def braille_pixels(cells: list[str], width: int = 128, height: int = 64) -> list[list[int]]:
    """Pixels back from the screen's OLED cells: braille (2x4 dots a cell) or quadrant blocks (2x2)."""
    from mausbox.sim.tui import _QUAD

    px = [[0] * width for _ in range(height)]
    braille = len(cells) <= height // 4  # 16 rows of braille, or 32 of blocks
    for r, row in enumerate(cells):
        for c, ch in enumerate(row[: width // 2]):
            o = ord(ch)
            if braille:
                bits = o - 0x2800 if 0x2800 <= o <= 0x28FF else 0
                for bit, (dx, dy) in enumerate(((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (0, 3), (1, 3))):
                    if bits >> bit & 1 and 4 * r + dy < height:
                        px[4 * r + dy][2 * c + dx] = 1
            else:
                q = _QUAD.find(ch)
                for bit, (dx, dy) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
                    if q > 0 and q >> bit & 1 and 2 * r + dy < height:
                        px[2 * r + dy][2 * c + dx] = 1
    return px


def read_text(px: list[list[int]], glyphs: dict[str, str]) -> list[str]:
    """The unit's 8 text lines of 16 characters (maus.unit.feedback draws text at x=0, y=8*line)."""
    lines = []
    for ln in range(len(px) // 8):
        s = ""
        for k in range(len(px[0]) // 8):
            cols = bytes(sum(px[8 * ln + y][8 * k + x] << y for y in range(8)) for x in range(8))
            s += " " if not any(cols) else glyphs.get(cols.hex(), "?")
        lines.append(s.rstrip())
    return lines


class SimTerm:
    """`mausbox sim ...` (or any command) in a pty of cols x rows, its screen kept by pyte."""

    def __init__(self, argv: list[str], cols: int = 80, rows: int = 24, cwd: str | Path | None = None,
                 env: dict | None = None, binary: str | None = None, console_log: Path | None = None):
        self.cols, self.rows = cols, rows
        self.console_log = console_log  # the unit's console as `mausbox sim` keeps it (MAUSBOX_SIM_CONSOLE_LOG)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()  # everything the program wrote, for tty-state checks
        self.lock = threading.Lock()
        self.binary = binary
        base = dict(os.environ, TERM="xterm-256color", LANG="en_US.UTF-8", LC_ALL="", COLUMNS=str(cols),
                    LINES=str(rows))
        base.update(env or {})
        self.child = pexpect.spawn(argv[0], argv[1:], dimensions=(rows, cols), cwd=str(cwd) if cwd else None,
                                   env=base, echo=True)  # a terminal as a person has it
        self.eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.2)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError, ValueError):
                self.eof = True
                return
            with self.lock:
                self.raw += data
                self.stream.feed(data)

    # reading ------------------------------------------------------------------------------------------
    def lines(self) -> list[str]:
        with self.lock:
            return list(self.screen.display)

    def text(self) -> str:
        return "\n".join(self.lines())

    def cursor_hidden(self) -> bool:
        with self.lock:
            return bool(self.screen.cursor.hidden)

    def oled(self) -> list[str]:
        """The OLED's text lines as the screen shows them (the box under the title line)."""
        lines = self.lines()
        top = next((i for i, s in enumerate(lines) if s.startswith("+" + "-" * 64 + "+")), None)
        if top is None:
            return []
        cells = []
        for s in lines[top + 1:]:
            if s.startswith("+" + "-" * 64):
                break
            cells.append(s[1:65])
        assert self.binary, "SimTerm(binary=...) reads the OLED with the unit's font"
        return read_text(braille_pixels(cells), font(self.binary))

    def oled_text(self) -> str:
        return " ".join(s.strip() for s in self.oled() if s.strip())

    # waiting and typing -------------------------------------------------------------------------------
    def wait(self, pred, what: str, timeout: float = WAIT_S):
        """Poll the screen until pred(self) is truthy; on timeout fail with the screen in the message."""
        end = time.monotonic() + timeout
        while True:
            got = pred(self)
            if got:
                return got
            if self.eof or time.monotonic() > end:
                raise AssertionError(f"waited for {what} ({'the program ended' if self.eof else 'timed out'});"
                                     f" OLED: {self.oled_text() if self.binary else '?'!r}\nscreen:\n{self.text()}"
                                     f"{self.console_tail()}")
            time.sleep(0.1)

    def console_tail(self, n: int = 60) -> str:
        if self.console_log is None or not self.console_log.exists():
            return ""
        lines = self.console_log.read_text(errors="replace").splitlines()
        return "\nthe unit's console (last %d lines):\n" % n + "\n".join(lines[-n:])

    def wait_oled(self, *words: str, timeout: float = WAIT_S) -> str:
        def seen(t):
            txt = t.oled_text().lower()
            return txt if all(w.lower() in txt for w in words) else None
        return self.wait(seen, f"the OLED to show {words}", timeout)

    def wait_screen(self, *words: str, timeout: float = WAIT_S) -> str:
        def seen(t):
            txt = t.text()
            return txt if all(w in txt for w in words) else None
        return self.wait(seen, f"the screen to show {words}", timeout)

    def type(self, keys: str | bytes, rate: float = 20.0) -> None:
        """Type keys one at a time, `rate` keys a second, as a person at a keyboard."""
        data = keys.encode() if isinstance(keys, str) else keys
        for i in range(len(data)):
            self.child.send(data[i:i + 1])
            time.sleep(1.0 / rate)

    def _alive(self) -> bool:
        try:
            return self.child.isalive()
        except pexpect.ExceptionPexpect:  # the reader's read at EOF reaped it first: both threads call waitpid()
            return False

    def close(self) -> int | None:
        if self._alive():
            # the whole terminal's process group: the shell, and the `mausbox sim` it started (killing the shell
            # alone leaves the simulator running on, a game in real time, after a failed test)
            try:
                os.killpg(self.child.pid, signal.SIGTERM)
            except OSError:
                pass
            self.child.terminate(force=True)
        try:
            self.child.wait() if not self.child.closed else None
        except pexpect.ExceptionPexpect:  # reaped by the reader thread (above)
            pass
        return self.child.exitstatus
