"""A one-line progress bar on the terminal (bytes, rate, time left) for `logs pull` and `deploy`; silent
when standard error is not a terminal or the command prints JSON."""

from __future__ import annotations

import sys
import threading
import time


def wanted(json_output: bool) -> bool:
    return not json_output and sys.stderr.isatty()


class Bar:
    def __init__(self, label: str, total: int, enabled: bool = True, stream=None, min_interval: float = 0.1):
        self.label = label
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

    def line(self, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        dt = max(now - self.t0, 1e-6)
        rate = self.done / dt
        frac = min(1.0, self.done / self.total) if self.total else 1.0
        left = (self.total - self.done) / rate if rate > 0 and self.total > self.done else 0.0
        bar = "#" * int(frac * 24)
        return (f"{self.label} [{bar:<24}] {_size(self.done)}/{_size(self.total)} {_size(rate)}/s "
                f"{_clock(left)} left")

    def _draw(self, now: float) -> None:
        text = self.line(now)
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.out.write("\r" + text + " " * pad)
        self.out.flush()

    def close(self) -> None:
        if self.enabled and self._width:
            self.out.write("\r" + " " * self._width + "\r")
            self.out.flush()
            self._width = 0


def _size(n: float) -> str:
    if n < 1024:
        return f"{n:.0f} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} kB"
    return f"{n / 1024 / 1024:.1f} MB"


def _clock(s: float) -> str:
    s = int(s + 0.5)
    return f"{s // 60}:{s % 60:02d}"
