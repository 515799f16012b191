"""The real firmware as a board runs it, reachable like a board: the MicroPython unix port runs main.py (the app)
with its console on a raw pseudo-terminal, in real time (the simulated hardware's RealWorld, driven through the
control FIFO), and a relay plays the UART between that console and a second pty whose path the host opens with
pyserial. No REPL machinery in between: what the host sends reaches the app's stdin as on a board's USB console,
and what the app prints nobody reads is dropped, as on a UART.

    with PtyUnit(tmp_path / "unit") as unit:
        unit.send({"tap": "game/mausgeflippt"})
        main(["doctor", "--port", unit.port])
"""

from __future__ import annotations

import errno
import json
import os
import select
import subprocess
import threading
import time
import tty
from pathlib import Path

from mausbox.cmd_sim import timeline, wait_ready
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun
from mausbox.sim import tui as simtui
from scenariokit import live_records


class PtyUnit:
    def __init__(self, root: Path, heap: str = simrun.DEFAULT_HEAP, env: dict | None = None, prepare: bool = True,
                 link: str | None = None):
        self.root = Path(root)
        self.link = link  # a symlink to the port, as `mausbox sim --serial --link` makes
        self.heap = heap
        self.env = env or {}
        self.prepare = prepare
        self.out = bytearray()  # everything the firmware printed (for diagnostics)
        self.rx = 0  # bytes the host sent
        self._stop = False
        self.proc: subprocess.Popen | None = None

    def start(self) -> str:
        exe = micropython_binary()
        assert exe, "the MicroPython unix port is needed"
        if self.prepare:
            simrun.prepare_root(self.root)
        self.fifo = simtui.Link(self.root)
        self._fw_m, fw_s = os.openpty()
        tty.setraw(fw_s)
        self._host_m, self._host_s = os.openpty()
        tty.setraw(self._host_s)
        self.port = os.ttyname(self._host_s)
        if self.link:
            if os.path.lexists(self.link):
                os.unlink(self.link)
            os.symlink(self.port, self.link)
            self.port = self.link
        since = time.time() - 1
        env = simrun.firmware_env(self.root, **self.fifo.env(), **self.env)
        self.proc = subprocess.Popen([exe, "-X", f"heapsize={self.heap}", "main.py"], cwd=self.root, env=env,
                                     stdin=fw_s, stdout=fw_s, stderr=fw_s, start_new_session=True)
        os.close(fw_s)
        for fd in (self._fw_m, self._host_m):
            os.set_blocking(fd, False)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._relay, daemon=True)
        self._thread.start()
        self._pumper = threading.Thread(target=self._pump, daemon=True)
        self._pumper.start()
        self.ready = wait_ready(self.root, since, timeout=120)
        return self.port

    def _relay(self) -> None:
        while not self._stop:
            try:
                r, _, _ = select.select([self._fw_m, self._host_m], [], [], 0.05)
            except (OSError, ValueError):
                return
            if self._fw_m in r:
                try:
                    data = os.read(self._fw_m, 65536)
                except OSError:
                    data = b""
                if not data:
                    if self.proc is not None and self.proc.poll() is not None:
                        return
                    continue
                self.out += data
                if not self._to_host(data):
                    return
            if self._host_m in r:
                try:
                    data = os.read(self._host_m, 65536)
                except OSError:
                    continue
                if data:
                    self.rx += len(data)
                    os.write(self._fw_m, data)

    def _to_host(self, data: bytes) -> bool:
        """The UART's way: a host that reads gets every byte at its pace; output nobody takes for 0.2 s is gone
        (as the virtual unit's bridge drops it). False if the port is broken."""
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._host_m, view)
                view = view[n:]
                continue
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                    return False
            _, w, _ = select.select([], [self._host_m], [], 0.2)
            if not w:
                return True  # nobody reads the port: the rest is dropped
        return True

    def send(self, act: dict) -> None:
        """One physical event now (a press, a card on the pad)."""
        with self._lock:
            self.fifo.send(act)

    def play(self, actions: list[dict], t0: float | None = None) -> None:
        """Play a scenario's actions in real time, from t0 (default now), by the pump thread."""
        with self._lock:
            now = time.monotonic()
            for t, act in timeline(actions):
                self.fifo.send(act, max((t0 or now) + t - now, 1e-6))

    def _pump(self) -> None:
        # The FIFO link's delayed events, and its peripheral output drained (a full pipe stalls the firmware).
        while not self._stop:
            with self._lock:
                self.fifo.pump()
            time.sleep(0.01)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def text(self) -> str:
        return self.out.decode("utf-8", "replace")

    def logs(self) -> list[Path]:
        return simrun.logs_in(self.root)

    def records(self, log: Path) -> list[dict]:
        return live_records(log)

    def register(self, data_home: Path) -> None:
        """Announce the unit as `mausbox sim --serial` does, so `mausbox ports` finds it."""
        reg = Path(data_home) / "mausbox" / "units"
        reg.mkdir(parents=True, exist_ok=True)
        (reg / f"pty-{os.getpid()}-{id(self)}.json").write_text(
            json.dumps({"pty": self.port, "link": None, "root": str(self.root), "pid": os.getpid()}))

    def stop(self) -> None:
        if self.link and os.path.lexists(self.link):
            os.unlink(self.link)
        self._stop = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if getattr(self, "_thread", None) is not None:
            self._thread.join(timeout=5)
        for fd in (getattr(self, "_fw_m", None), getattr(self, "_host_m", None), getattr(self, "_host_s", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def __enter__(self) -> PtyUnit:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
