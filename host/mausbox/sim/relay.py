"""A faulty cable for the virtual unit: a pty the host opens, relayed to the unit's pty chunk by chunk (reads of
at most `chunk` bytes, as a USB bridge hands them over), flipping one random bit in a `rate` share of the
chunks, either way. `flip_at(n)` also flips the byte n bytes ahead in the host's direction, for a test that
must hit one command. For the reliability tests and `make bench`; never between a real board and the host."""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty


class FaultyRelay:
    def __init__(self, unit_port: str, rate: float = 0.01, chunk: int = 1024, seed: int = 0, both: bool = True):
        self.rate, self.chunk, self.both = rate, chunk, both
        self.rng = random.Random(seed)
        self._m, self._s = os.openpty()
        tty.setraw(self._s)
        self.port = os.ttyname(self._s)
        self._u = os.open(unit_port, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self._u)
        self.up = 0  # bytes host -> unit
        self.down = 0
        self.chunks = 0
        self.flipped = 0
        self._at: list[int] = []  # absolute host -> unit offsets to flip
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def flip_at(self, ahead: int) -> None:
        self._at.append(self.up + ahead)

    def _mangle(self, data: bytes, base: int, up: bool) -> bytes:
        b = bytearray(data)
        self.chunks += 1
        if (up or self.both) and self.rng.random() < self.rate:
            b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
            self.flipped += 1
        if up:
            for a in [a for a in self._at if base <= a < base + len(b)]:
                b[a - base] ^= 0x01
                self._at.remove(a)
                self.flipped += 1
        return bytes(b)

    def _run(self) -> None:
        while not self._stop:
            try:
                r, _, _ = select.select([self._m, self._u], [], [], 0.05)
            except (OSError, ValueError):
                return
            for fd in r:
                try:
                    data = os.read(fd, self.chunk)
                except OSError:
                    time.sleep(0.01)  # the host side not open (between two sessions): nothing to carry
                    continue
                if not data:
                    continue
                up = fd == self._m
                if up:
                    out, dst = self._mangle(data, self.up, True), self._u
                    self.up += len(data)
                else:
                    out, dst = self._mangle(data, self.down, False), self._m
                    self.down += len(data)
                while out:
                    try:
                        out = out[os.write(dst, out):]
                    except OSError:
                        break

    def close(self) -> None:
        self._stop = True
        self._t.join(timeout=3)
        for fd in (self._m, self._s, self._u):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> FaultyRelay:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
