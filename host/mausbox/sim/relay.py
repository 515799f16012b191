"""A faulty cable for the virtual unit: a pty the host opens, relayed to the unit's pty, that damages a `rate`
share of the kilobytes it carries, in both directions (or only towards the unit, `both=False`). Each damaged
kilobyte (by its place in the stream: bytes [1024k, 1024k + 1024)) gets one fault, picked from `kinds`: a
flipped bit, the kilobyte dropped, or the kilobyte sent twice (each piece of it as it passes, so the relay
never holds bytes back). `flip_at(n)` also flips the byte n bytes ahead in the host's direction, for a test that
must hit one command. This is the one fault model of the reliability tests and of `make bench` (pull and
deploy); never between a real board and the host."""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty

KB = 1024
HOLD = 64 * 1024  # bytes held for a side that does not read, before the relay stops reading what goes there
KINDS = ("flip", "drop", "dup")


class _Way:
    """One direction's stream: which kilobyte it is in and what befalls it."""

    def __init__(self):
        self.pos = 0
        self.kb = -1
        self.fault: str | None = None
        self.flip = 0  # the byte of the kilobyte to flip


class FaultyRelay:
    def __init__(self, unit_port: str, rate: float = 0.01, chunk: int = 1024, seed: int = 0, both: bool = True,
                 kinds: tuple[str, ...] = KINDS):
        self.rate, self.chunk, self.both, self.kinds = rate, chunk, both, tuple(kinds)
        self.rng = random.Random(seed)
        self._m, self._s = os.openpty()
        tty.setraw(self._s)
        self.port = os.ttyname(self._s)
        self._u = os.open(unit_port, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self._u)
        self._ways = {True: _Way(), False: _Way()}
        self.chunks = 0  # reads relayed
        self.kilobytes = 0  # kilobytes begun, both ways
        self.flipped = self.dropped = self.duplicated = 0
        self._at: list[int] = []  # absolute host -> unit offsets to flip
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    @property
    def up(self) -> int:
        return self._ways[True].pos  # bytes host -> unit

    @property
    def down(self) -> int:
        return self._ways[False].pos

    @property
    def faults(self) -> int:
        return self.flipped + self.dropped + self.duplicated

    def flip_at(self, ahead: int) -> None:
        self._at.append(self.up + ahead)

    def _mangle(self, data: bytes, up: bool) -> bytes:
        """What of `data` (the next bytes of one direction) goes on, faults applied."""
        w = self._ways[up]
        self.chunks += 1
        out = bytearray()
        i = 0
        while i < len(data):
            kb = (w.pos + i) // KB
            if kb != w.kb:  # a new kilobyte: its fate
                w.kb = kb
                self.kilobytes += 1
                w.fault = None
                if (up or self.both) and self.rng.random() < self.rate:
                    w.fault = self.rng.choice(self.kinds)
                    w.flip = self.rng.randrange(KB)
                    self.flipped += w.fault == "flip"
                    self.dropped += w.fault == "drop"
                    self.duplicated += w.fault == "dup"
            end = min(len(data), (kb + 1) * KB - w.pos)
            piece = bytearray(data[i:end])
            base = w.pos + i
            if w.fault == "flip" and base <= kb * KB + w.flip < base + len(piece):
                piece[kb * KB + w.flip - base] ^= 1 << self.rng.randrange(8)
            if up:
                for a in [a for a in self._at if base <= a < base + len(piece)]:
                    piece[a - base] ^= 0x01
                    self._at.remove(a)
                    self.flipped += 1
            if w.fault != "drop":
                out += piece
            if w.fault == "dup":
                out += piece
            i = end
        w.pos += len(data)
        return bytes(out)

    def _run(self) -> None:
        # Each direction on its own: a side that does not read holds back only what goes to it (up to HOLD
        # bytes, then the relay stops reading what would go there), never the other way, as on a cable.
        from mausbox.sim.line import set_tty_speed, tty_speed

        for fd in (self._m, self._u):
            os.set_blocking(fd, False)
        pending = self._pending = {self._m: bytearray(), self._u: bytearray()}  # what waits for each side
        speed = 0
        while not self._stop:
            # A cable carries whatever rate the host set: the unit's end of it follows (the virtual unit's bridge
            # reads it there, host/mausbox/sim/serial.py).
            now = tty_speed(self._m)
            if now != speed and set_tty_speed(self._u, now):
                speed = now
            rl = [fd for fd, dst in ((self._m, self._u), (self._u, self._m)) if len(pending[dst]) < HOLD]
            wl = [fd for fd in pending if pending[fd]]
            try:
                r, w, _ = select.select(rl, wl, [], 0.05)
            except (OSError, ValueError):
                return
            for fd in w:
                try:
                    del pending[fd][:os.write(fd, pending[fd])]
                except BlockingIOError:
                    pass
                except OSError:
                    pending[fd].clear()  # the host side not open (between two sessions): nothing to carry
            for fd in r:
                try:
                    data = os.read(fd, self.chunk)
                except BlockingIOError:
                    continue
                except OSError:
                    time.sleep(0.01)  # the host side not open (between two sessions): nothing to carry
                    continue
                if not data:
                    continue
                up = fd == self._m
                pending[self._u if up else self._m] += self._mangle(data, up)

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
