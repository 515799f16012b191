"""A unit that lives a season (issue 27): the virtual unit of tests/fw/seasonunit.py (one process, the board's heap,
littlefs on a file) and the host on its console line (`maus.sim.uart`), for bench/bench_season.py and
tests/host/test_season_fullflash.py.

The host gets the unit's frames as the unit writes them (and each request as it is put on the line) through a
FIFO, and answers each final answer with its next requests through another, while the unit's virtual time stands
still: a pull is `mausbox logs pull`'s (hello, the listing, each log not marked pulled read whole and checked,
its sha256 against the unit's and its records with maus.log.read, then marked pulled with that digest; `copied`
at the end); told `game`, it asks again GAME_POLL_MS later, as the real host waits for the game's end.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
GAME_POLL_MS = 1000  # a pull told `game` asks again this much later (mausbox.link.bounds.GAME_POLL)


@dataclass
class Pulled:
    name: str
    data: bytes
    sha: str


class Host:
    """The host on the line: the unit's frames in (feed), its next requests out (each final answer gets a reply:
    [[delay_ms, request], ...]). A pull is `mausbox logs pull`'s: hello, the listing, each log not marked
    pulled read whole and checked (its sha256 against the unit's, its records with maus.log.read), then marked
    pulled with that digest; `copied` at the end. Told `game`, it asks again GAME_POLL_MS later."""

    def __init__(self):
        from mausbox.link.frame import Parser

        self.parser = Parser()
        self.reqs: dict[int, dict] = {}  # seq -> request
        self.results: dict[str, int] = {}
        self.pulled: dict[str, Pulled] = {}
        self.bad: list[str] = []  # what a check refused
        self.nomem: list[str] = []  # the requests answered `nomem` (op and name)
        self.pulls = 0
        self.timeouts = 0  # requests the unit did not answer in time (asked again)
        self.waits = 0  # answers `game` to a pull's request
        self.pull_in_game = 0  # pulls that had to wait for a game's end
        self._job: list[str] | None = None  # names left to read in the pull under way
        self._listing: list[tuple[str, int]] = []
        self.listing: list[tuple[str, int]] = []  # the last listing whole: (name, size)
        self._data = bytearray()
        self._waited = False
        self._new = 0
        self._pulling = False

    def reset(self) -> None:
        """The unit was reset: what was on the line is gone (a pull under way is taken up by the next)."""
        from mausbox.link.frame import Parser

        self.parser = Parser()
        self.reqs.clear()
        self._job = None
        self._pulling = False

    def feed(self, data: bytes) -> list[list]:
        """Bytes the unit wrote (and the requests put on the wire, as Q frames); -> replies, one per final
        answer, in order."""
        from mausbox.link.frame import DATA, PART, REQUEST, RESPONSE, Frame

        out = []
        for f in self.parser.feed(data):
            if not isinstance(f, Frame):
                for _ in range(f.count(b"#SEASON timeout")):  # no answer in time: ask again, as mausbox does
                    self.timeouts += 1
                    seq = next(iter(self.reqs)) if self.reqs else None  # the oldest unanswered
                    req = self.reqs.pop(seq, {}) if seq is not None else {}
                    out.append([[250, req]] if req.get("op") in ("logs", "read", "mark", "copied") else [])
                continue
            if f.kind == REQUEST:
                self.reqs[f.seq] = json.loads(f.payload)
                if self.reqs[f.seq].get("op") == "logs":
                    self._listing = []
                    if not self._pulling:  # a pull begins (the scenario's request; asked again: the same pull)
                        self._pulling, self._waited, self._new = True, False, 0
                        self.pulls += 1
                elif self.reqs[f.seq].get("op") == "read":
                    self._data = bytearray()
            elif f.kind == PART:
                req = self.reqs.get(f.seq, {})
                if req.get("op") == "logs":
                    lines = f.payload.decode().splitlines()
                    if lines and lines[0].startswith("+"):
                        lines = lines[1:]
                    for line in lines:
                        name, _, size = line.rpartition(" ")
                        self._listing.append((name, int(size)))
            elif f.kind == DATA:
                off = int(f.payload[:8], 16)
                if off != len(self._data):
                    self.bad.append("read: a chunk at %d, expected %d" % (off, len(self._data)))
                self._data += f.payload[8:]
            elif f.kind == RESPONSE:
                out.append(self._answer(self.reqs.pop(f.seq, {}), json.loads(f.payload)))
        return out

    def _answer(self, req: dict, doc: dict) -> list:
        op = req.get("op")
        if op is None:
            return []  # a late answer to a request given up on (asked again meanwhile)
        key = "ok" if doc.get("ok") else str(doc.get("error"))
        if key == "nomem":
            self.nomem.append("%s %s" % (op, req.get("name", "")))
        self.results[key] = self.results.get(key, 0) + 1
        if op == "copied":
            self._pulling = False
        if op in ("status", "hello", "copied"):
            return []
        if not doc.get("ok"):
            if doc.get("error") in ("game", "nomem"):
                self.waits += 1
                if not self._waited:
                    self._waited = True
                    self.pull_in_game += 1
                return [[GAME_POLL_MS if doc.get("error") == "game" else 250, req]]
            self.bad.append("%s: %s" % (op, doc))
            return self._next()
        if op == "logs":
            self.listing = list(self._listing)
            marked = {n[:-7] for n, _ in self._listing if n.endswith(".pulled")}
            self._job = [n for n, _ in self._listing if n.endswith(".jsonl") and n not in marked]
            return self._next()
        if op == "read":
            name = req["name"]
            data = bytes(self._data)
            sha = hashlib.sha256(data).hexdigest()
            if len(data) != doc.get("size") or sha != doc.get("sha256"):
                self.bad.append("%s: %d bytes, sha256 %s; the unit: %s" % (name, len(data), sha, doc))
                return self._next()
            from mausbox.pulldest import verify_log

            damage, finished = verify_log(data)
            if damage or not finished:
                self.bad.append("%s: damaged %s, finished %s" % (name, damage[:2], finished))
                return self._next()
            self.pulled[name] = Pulled(name, data, sha)
            self._new += 1
            return [[0, {"op": "mark", "name": name, "sha256": sha}]]
        if op == "mark":
            if not doc.get("marked"):
                self.bad.append("mark %s refused" % req.get("name"))
            return self._next()
        return []

    def _next(self) -> list:
        if self._job:
            name = self._job.pop(0)
            return [[0, {"op": "read", "name": name, "off": 0}]]
        if self._job is not None:
            self._job = None
            return [[0, {"op": "copied", "n": self._new}]]
        return []


def prepare(work: Path, exe: str) -> Path:
    """The firmware and seasonunit compiled into work/tree (as a unit holds them), the sim board with its board.ok
    beside; -> the tree."""
    from mausbox.build import board_ok, compile_file, compile_tree
    from mausbox.mpbuild import sim_march

    tree = compile_tree([ROOT / "firmware"], work / "tree", sim_march(exe), ROOT)
    err = compile_file(ROOT / "tests" / "fw" / "seasonunit.py", tree / "seasonunit.mpy", march=sim_march(exe),
                       shown=Path("tests/fw/seasonunit.py"))
    if err:
        raise RuntimeError(err)
    board = (ROOT / "boards" / "sim.json").read_bytes()
    (work / "board.json").write_bytes(board)
    ok = board_ok(board, (tree / "maus" / "hw" / "board.mpy").read_bytes())
    assert ok is not None
    (work / "board.ok").write_bytes(ok)
    (work / "plain.jsonl").write_text('{"at_ms": 1000, "noise": 0}\n')
    return tree


def _env(tree: Path) -> dict:
    env = dict(os.environ, MICROPYPATH=f"{tree}:.frozen", MAUSBOX_REPO=str(ROOT))
    for k in ("MAUSBOX_SIM_SCENARIO", "MAUSBOX_SIM_CTL", "MAUSBOX_SIM_OUT"):
        env.pop(k, None)
    return env


def unit(exe: str, work: Path, tree: Path, heap: int, blocks: int, ballast: int, mode: str,
         timeout: float = 3000) -> subprocess.CompletedProcess:
    """One run of the unit's process that needs no host (probe, plain, fill:N:K)."""
    return subprocess.run([exe, "-X", f"heapsize={heap}", "-m", "seasonunit", str(work), str(blocks), str(ballast),
                           mode], cwd=work, env=_env(tree), capture_output=True, text=True, timeout=timeout)


def fair_heap(exe: str, work: Path, tree: Path, heap: int, blocks: int) -> int:
    """`heap` plus what seasonunit's own set-up takes beyond tests/fw/unitheap.py's (the littlefs mount over its
    file, the hooks on the line and the capture), measured: in it the firmware starts with what the whole-game
    heap tests give it."""

    def free(mode: str) -> int:
        if mode == "probe":
            if not (work / "season.jsonl").exists():
                (work / "season.jsonl").write_text((work / "plain.jsonl").read_text())
            for n in ("to.host", "from.host"):
                (work / n).unlink(missing_ok=True)
                (work / n).write_bytes(b"")
        out = unit(exe, work, tree, heap, blocks, 0, mode)
        got = [x for x in out.stdout.splitlines() if x.startswith("SEASON free")]
        assert got, f"the unit ({mode}) said no free figure:\n{out.stdout[-1500:]}{out.stderr[-1500:]}"
        return int(got[0].split()[2])

    plain, mine = free("plain"), free("probe")
    for n in ("to.host", "from.host", "capture.bin", "flash.img"):
        (work / n).unlink(missing_ok=True)
    return heap + plain - mine


@dataclass
class Run:
    console: list[str]
    marks: list[float]  # wall s as each game began ("SEASON game")
    host: Host
    rc: int
    wall: float
    crashes: int = 0  # the unit's processes that ended in a crash (each restarted at the next game)


def season(exe: str, work: Path, tree: Path, heap: int, blocks: int, ballast: int, actions: list[dict],
           mode: str = "season", timeout: float = 3000) -> Run:
    """The unit plays `actions` (scenario actions by time; {"season": ...} ones are seasonunit's marks) with the
    Host on its line; -> its console, the host, exit code and wall time. A unit that crashes (a MemoryError out
    of its main loop, a watchdog reset, or any other end without its "SEASON end" line: it may have run out of
    memory while saying how it crashed) is started again on its flash, as a board resets: a new process, a fresh
    heap, the scenario going on at the game after the last one it began ({"season": "game"})."""
    host = Host()
    console: list[str] = []
    marks: list[float] = []
    t0 = time.monotonic()
    rc = 0
    crashes = 0
    last = 0  # the game number the last process began at (0: the first)
    while True:
        n0 = len(console)
        rc = _once(exe, work, tree, heap, blocks, ballast, actions, mode, timeout, host, console, marks, t0)
        if rc == 0 and any(x.startswith("SEASON end crashes 0") for x in console[n0:]):
            break
        crashes += 1
        if not any(x.startswith("SEASON crashed at") for x in console[n0:]):
            console.append("SEASON crashed at ? (the unit's process ended with %d, saying nothing of it)" % rc)
        began = [int(x.split()[2]) for x in console[n0:] if x.startswith("SEASON game")]
        last = max(began[-1] if began else 0, last + (not began))  # no game begun: go on past the one it was at
        nxt = [i for i, a in enumerate(actions) if a.get("season") == "game" and a["n"] > last]
        if not nxt:
            break
        base = actions[nxt[0]]["at_ms"] - 3000  # the new boot's time before the next game's card
        actions = [dict(a, at_ms=a["at_ms"] - base) for a in actions[nxt[0]:]]
        last = actions[0]["n"] - 1
        mode = "again"
        host.reset()
    return Run(console, marks, host, rc, time.monotonic() - t0, crashes)


STALL_S = float(os.environ.get("SEASON_STALL_S") or 300)


def _once(exe, work, tree, heap, blocks, ballast, actions, mode, timeout, host, console, marks, t0) -> int:
    from mausbox.sim.run import scenario_text

    (work / "season.jsonl").write_text(scenario_text(actions))
    for n in ("to.host", "from.host"):
        (work / n).unlink(missing_ok=True)
        os.mkfifo(work / n)
    failure: list[BaseException] = []

    def serve() -> None:
        try:
            with open(work / "to.host", "rb", buffering=0) as inp, open(work / "from.host", "wb") as out:
                while True:
                    data = inp.read(65536)
                    if not data:
                        return
                    for reply in host.feed(data):
                        out.write(json.dumps(reply).encode() + b"\n")
                        out.flush()
        except BaseException as e:  # noqa: BLE001 - reported after the run
            failure.append(e)
            raise

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    proc = subprocess.Popen([exe, "-X", f"heapsize={heap}", "-m", "seasonunit", str(work), str(blocks), str(ballast),
                             mode], cwd=work, env=_env(tree), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    tee = os.environ.get("SEASON_TEE")  # a file the console goes to as it comes (a season that hangs)
    out = open(tee, "a") if tee else None
    heard = [time.monotonic(), False]  # the last console line's time; whether the unit was stopped for silence

    def stall_watch() -> None:
        # A unit that says nothing for STALL_S of wall time is stuck (it runs in virtual time and prints a line every
        # few virtual seconds; once, after a crash had put it out of step with the scenario, it waited for a host
        # reply and the host for its line): stopped, it counts as a crash, and the season goes on at the next game.
        while proc.poll() is None:
            time.sleep(1)
            if time.monotonic() - heard[0] > STALL_S and proc.poll() is None:
                heard[1] = True
                proc.kill()

    threading.Thread(target=stall_watch, daemon=True).start()
    try:
        for raw in proc.stdout:
            heard[0] = time.monotonic()
            line = raw.decode("utf-8", "replace").rstrip("\n")
            console.append(line)
            if out is not None:
                out.write(line + "\n")
            if line.startswith("SEASON game"):
                marks.append(time.monotonic() - t0)
        rc = proc.wait(timeout=timeout)
        if heard[1]:
            console.append("SEASON stalled: no console line for %d s, the unit's process stopped" % STALL_S)
    finally:
        if out is not None:
            out.close()
        if proc.poll() is None:
            proc.kill()
    t.join(30)
    if failure:
        raise failure[0]
    return rc


def records(console: list[str]) -> list[list[str]]:
    """The unit's records of each game as it wrote them (its console's EV lines), from a game_start on."""
    return [recs for _, recs in games(console)]


def games(console: list[str]) -> list[tuple[int, list[str]]]:
    """(the scenario's game number, or 0, and its records) for each game the unit started, in order."""
    ev: list[tuple[int, list[str]]] = []
    n = 0
    for line in console:
        if line.startswith("SEASON game"):
            n = int(line.split()[2])
        elif line.startswith("EV "):
            rec = line[3:]
            if '"type":"game_start"' in rec:
                ev.append((n, []))
            if ev:
                ev[-1][1].append(rec)
    return ev
