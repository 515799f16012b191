"""A serial port whose far end is the firmware's host service (firmware/maus/host/service.py) running in this
process under CPython: the host's UnitLink and the unit's service, byte for byte, without a pty. Faults are
made at the bytes: a chunk of the unit's output flipped, dropped, repeated, or held back."""

from __future__ import annotations

import random
import time

from hostkit import Console, Ctx
from maus.host.service import HostService


class LoopSerial:
    def __init__(self, root, rng: random.Random | None = None, flip: float = 0.0, drop: float = 0.0,
                 dup: float = 0.0, stall: float = 0.0, ctx=None):
        self.con = Console()
        self.ctx = ctx or Ctx(str(root))
        self.svc = HostService(self.ctx, inp=self.con.inp, out=self.con.out, ready=self.con.ready)
        self.rng = rng or random.Random(0)
        self.flip, self.drop, self.dup, self.stall = flip, drop, dup, stall
        self.faults = {"flip": 0, "drop": 0, "dup": 0, "stall": 0}
        self.out = bytearray()  # what the unit sent, not read yet
        self.timeout = 0.0
        self.is_open = True
        self.gone = False  # unplugged: every call raises
        self.written = bytearray()

    # the unit's main loop: a few passes per read
    def _pump(self) -> None:
        if self.gone:
            if not self.out:  # what was on its way still arrives; then the port is dead
                raise OSError(5, "Input/output error")
            return
        for _ in range(4):
            self.svc.poll(0)
        got = self.con.take()
        if got:
            self.out += self._mangle(got)

    def _mangle(self, data: bytes) -> bytes:
        r = self.rng.random
        if self.flip and r() < self.flip:
            b = bytearray(data)
            b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
            self.faults["flip"] += 1
            return bytes(b)
        if self.drop and r() < self.drop:
            self.faults["drop"] += 1
            i = self.rng.randrange(len(data))
            return data[:i] + data[i + self.rng.randrange(1, 64):]
        if self.dup and r() < self.dup:
            self.faults["dup"] += 1
            return data + data
        if self.stall and r() < self.stall:
            self.faults["stall"] += 1
            return b""  # the unit's output never comes (a reset, a full buffer)
        return data

    @property
    def in_waiting(self) -> int:
        self._pump()
        return len(self.out)

    def read(self, n: int = 1) -> bytes:
        self._pump()
        if not self.out and self.timeout:
            end = time.monotonic() + self.timeout
            while not self.out and time.monotonic() < end:
                time.sleep(0.001)
                self._pump()
        out = bytes(self.out[:n])
        del self.out[:n]
        return out

    def write(self, data: bytes) -> int:
        if self.gone:
            raise OSError(5, "Input/output error")
        self.written += data
        self.con.send(bytes(data))
        return len(data)

    def close(self) -> None:
        self.is_open = False


def link(root, timeout: float = 0.5, **kw):
    from mausbox.link import UnitLink

    ser = LoopSerial(root, **kw)
    return UnitLink("loop", timeout=timeout, ser=ser, recover=False), ser
