"""A one-line progress bar on the terminal (bytes, rate, time left) for `logs pull` and `deploy`; silent
when standard error is not a terminal or the command prints JSON. The line stays one column short of the
terminal's width (a full line wraps on many terminals and leaves a broken line behind)."""

from __future__ import annotations

import shutil
import sys
import threading
import time


def wanted(json_output: bool) -> bool:
    return not json_output and sys.stderr.isatty()


class Bar:
    def __init__(self, label: str, total: int, enabled: bool = True, stream=None, min_interval: float = 0.1,
                 scope: str = ""):
        self.label = label
        self.scope = scope  # what the byte counter counts, e.g. "all logs" when the label names one file
        self.total = max(0, total)
        self.enabled = enabled
        self.out = stream or sys.stderr
        self.done = 0
        self.t0 = time.monotonic()
        self._shown = 0.0
        self._min = min_interval
        self._lock = threading.Lock()
        self._width = 0

    def add(self, n: int) -> None:
        self.set(self.done + n)

    def set(self, done: int, total: int | None = None) -> None:
        with self._lock:
            self.done = done
            if total is not None:
                self.total = total
            now = time.monotonic()
            if self.enabled and (now - self._shown >= self._min or done >= self.total):
                self._shown = now
                self._draw(now)

    def line(self, now: float | None = None, width: int | None = None) -> str:
        """The bar's text, at most `width` characters (default: one less than the terminal's columns)."""
        now = time.monotonic() if now is None else now
        width = (shutil.get_terminal_size((80, 24)).columns - 1) if width is None else width
        dt = max(now - self.t0, 1e-6)
        rate = self.done / dt
        frac = min(1.0, self.done / self.total) if self.total else 1.0
        left = (self.total - self.done) / rate if rate > 0 and self.total > self.done else 0.0
        scope = f" {self.scope}" if self.scope else ""
        tail = f" {_size(self.done)}/{_size(self.total)}{scope} {_size(rate)}/s {_clock(left)} left"
        room = width - len(tail) - 1  # for the label, a space and [bar]
        bar_w = max(4, min(24, room - len(self.label) - 2))
        label = _fit(self.label, max(0, room - bar_w - 2))
        bar = "#" * int(frac * bar_w)
        text = f"{label} [{bar:<{bar_w}}]{tail}" if label else f"[{bar:<{bar_w}}]{tail}"
        return text[:max(0, width)]

    def _draw(self, now: float) -> None:
        text = self.line(now)
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.out.write("\r" + text + " " * pad)  # spaces wipe what a longer line drawn before left
        self.out.flush()

    def close(self) -> None:
        if self.enabled and self._width:
            self.out.write("\r" + " " * self._width + "\r")
            self.out.flush()
            self._width = 0


def _fit(text: str, n: int) -> str:
    """text in n characters: its end kept (a file name's number and game), the start elided."""
    if len(text) <= n:
        return text
    return "" if n < 4 else "…" + text[-(n - 1):]


def _size(n: float) -> str:
    if n < 1024:
        return f"{n:.0f} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} kB"
    return f"{n / 1024 / 1024:.1f} MB"


def _clock(s: float) -> str:
    s = int(s + 0.5)
    return f"{s // 60}:{s % 60:02d}"
