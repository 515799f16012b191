# A unit that lives a season (issue 27; bench/bench_season.py, tests/host/test_season_fullflash.py), run on the
# 32-bit MicroPython build: one virtual unit at the board's heap plays a whole scenario without a reboot, on
# littlefs (vfs.VfsLfs2, 4 KiB blocks as the ESP32 port formats its partition) over a file-backed flash, with a
# host on its console line (tests/host/seasonhost.py). Not a test itself: run by those two.
#
#   micropython -X heapsize=H -m seasonunit WORK BLOCKS BALLAST [MODE]
#
# MODE: season (default: a fresh flash), again (the flash.img there, as it is), probe (set up, print the free
# heap, stop), plain (what tests/fw/unitheap.py's set-up leaves free, for comparison), fill:N:K (a fresh flash
# with N finished logs, all but every K-th marked pulled, the rest of it taken by a file, then stop).
# WORK holds season.jsonl (the scenario), flash.img (made here), board.json/board.ok (to copy onto the flash),
# the FIFOs to.host / from.host (the host's side: bench/seasonkit.py Host) and capture.bin (written here: per
# press, 6 bytes: polled or not, the game's number, the µs from the edge to the time the capture gave it).
# Console lines for the bench: "SEASON ..." (crashes, the end), and the unit's own (EV records, LOG, SIM).
import gc
import os
import sys

WORK = sys.argv[1]
BLOCKS = int(sys.argv[2])
BALLAST = int(sys.argv[3])
# The bytes of the qstr pool a board adds once the names of two games are interned (bench/bench_season.py sets it):
# held from the second game family since this process's boot on (SeasonHw.apply)
POOL = int(os.getenv("MAUSBOX_SEASON_POOL") or 0) if hasattr(os, "getenv") else 0
MODE = sys.argv[4] if len(sys.argv) > 4 else "season"
if MODE == "plain":  # what tests/fw/unitheap.py's set-up leaves the firmware (a host folder, no hooks)
    import json

    os.chdir(WORK)
    with open("board.json") as f:
        board = json.load(f)
    gc.collect()
    from maus.sim import hw as sim
    from maus.sim.world import qstr_room

    hw = sim.Hardware(board, scenario="plain.jsonl")
    board = None
    qstr_room(sim.FW_QSTRS)
    gc.collect()
    print("SEASON free", gc.mem_free())
    raise SystemExit(0)
# What a board holds and the virtual unit does not load (heapbudget.BOARD_ONLY, nothing since the virtual unit runs
# maus.hw.esp32 and the SSD1306 driver): held all through, in blocks of 1,000 bytes, as tests/fw/unitheap.py holds it
held = [bytearray(1000) for _ in range(-(-BALLAST // 1000))]

import time  # noqa: E402

import vfs  # noqa: E402

T0 = [time.ticks_ms()]


class FileFlash:
    """A block device on a host file (the extended interface VfsLfs2 uses: offset reads and writes, erase):
    the flash costs the heap what a board's partition object does, not its bytes."""

    def __init__(self, path, blocks, bs=4096, fresh=True):
        self.bs = bs
        self.blocks = blocks
        if not fresh:
            self.f = open(path, "r+b")
            return
        self.f = open(path, "w+b")
        ff = b"\xff" * bs  # (before the season: garbage by the time the unit starts)
        for _ in range(blocks):
            self.f.write(ff)
        ff = None

    def readblocks(self, block, buf, off=0):
        self.f.seek(block * self.bs + off)
        self.f.readinto(buf)

    def writeblocks(self, block, buf, off=0):
        self.f.seek(block * self.bs + off)
        self.f.write(buf)

    def ioctl(self, op, arg):
        if op == 4:
            return self.blocks
        if op == 5:
            return self.bs
        if op in (1, 2, 3, 6):  # erase (6): littlefs never reads an erased block before it writes it
            return 0
            return 0
        return None


def fill(n, k):
    # n finished logs in logs/ (a game_start and a game_end each, as tests/host/fullflash.py writes them), every
    # one but each k-th marked pulled; then a file takes the flash's room down to a block. Prints the unpulled.
    import binascii
    import hashlib

    from maus.log import writer as gamelog

    os.mkdir("logs")
    for i in range(1, n + 1):
        name = "logs/%05d-mms.jsonl" % i
        data = (gamelog.encode(0, 0, "game_start", {"v": 2, "game": "mms", "n": i})
                + gamelog.encode(1, 5000, "game_end", {"scores": {}, "winners": [], "breakdown": {}, "why": "x"}))
        with open(name, "wb") as f:
            f.write(data)
        if i % k:
            with open(name + ".pulled", "wb") as f:
                f.write(binascii.hexlify(hashlib.sha256(data).digest()))
        else:
            print("SEASON unpulled", name[5:])
    with open("logs/counter", "w") as f:
        f.write(str(n + 1))
    st = os.statvfs("/flash")
    room = (st[3] - 3) * (st[0] - 8)  # a block of a file holds its size less the skip-list's pointers
    buf = bytearray(4088)
    with open("filler.bin", "wb") as f:
        while room > 0:
            f.write(buf)
            room -= 4088
    st = os.statvfs("/flash")
    print("SEASON filled", st[3], "blocks free")


class RAMFlash(FileFlash):
    # fill's: the flash in RAM (its process has the heap for it), written to the file at the end
    def __init__(self, blocks, bs=4096):
        self.bs = bs
        self.blocks = blocks
        self.b = [bytearray(bs) for _ in range(blocks)]

    def readblocks(self, block, buf, off=0):
        buf[:] = memoryview(self.b[block])[off:off + len(buf)]

    def writeblocks(self, block, buf, off=0):
        self.b[block][off:off + len(buf)] = buf


dev = RAMFlash(BLOCKS) if MODE.startswith("fill:") else FileFlash(WORK + "/flash.img", BLOCKS, fresh=MODE != "again")
if MODE != "again":
    vfs.VfsLfs2.mkfs(dev)
vfs.mount(vfs.VfsLfs2(dev), "/flash")
os.chdir("/flash")
if MODE.startswith("fill:"):
    fill(*[int(x) for x in MODE.split(":")[1:]])
    vfs.umount("/flash")
    with open(WORK + "/flash.img", "wb") as f:
        for b in dev.b:
            f.write(b)
    raise SystemExit(0)
for n in ("board.json", "board.ok"):
    try:
        os.stat(n)
        continue  # a reset: on the flash since the first start, as a deployed unit's (a full flash takes no copy)
    except OSError:
        pass
    with open(WORK + "/" + n, "rb") as src:
        data = src.read()
    with open(n, "wb") as dst:
        dst.write(data)
data = None

import json  # noqa: E402

from maus.sim import hw as sim  # noqa: E402
from maus.sim.uart import Uart  # noqa: E402
from maus.ticks import ticks_diff  # noqa: E402

_to = open(WORK + "/to.host", "wb")  # the unit's frames, and the requests as they are put on the line
_from = open(WORK + "/from.host", "rb")  # the host's replies: one line per final answer
_cap = open(WORK + "/capture.bin", "ab")  # per press: polled flag, then the µs from edge to its capture time
_rec = bytearray(6)


class SeasonUart(Uart):
    """maus.sim.uart's line with the host's side outside this process: what the unit writes goes to the host as
    it is written; after each final answer the unit's time stands still until the host has said what it asks
    next ([[delay ms, request], ...]): the host's think time is no time on the line."""

    polls = 0  # `status` polls not asked: the poller was still waiting for its last one's answer
    _poll = False  # a `status` poll is queued or waits for its answer
    _line_status = False  # the request on the wire (or waiting for its answer) is a poll
    _echo = None  # requests asked while the unit was writing a frame: to the host once that frame has ended

    def request(self, req):
        if req.get("op") == "status":
            # A poller (mausbox status) asks again only once its last request is answered or given up: a poll
            # due meanwhile is not asked (queued here, unanswered polls piled up in the unit's heap).
            if self._poll:
                self.polls += 1
                return
            self._poll = True
        Uart.request(self, req)
        if self._hn:  # the unit is in the middle of a frame (its write sleeps while the FIFO drains): the host's
            if self._echo is None:  # copy of the request must not land inside that frame's bytes
                self._echo = []
            self._echo.append(self._queue[-1])
        else:
            _to.write(self._queue[-1])

    def _arrive(self):
        n = self.timeouts
        was = self._line_status
        q = self._queue[0] if self._queue else None
        Uart._arrive(self)
        if q is not None and (not self._queue or self._queue[0] is not q):  # q went on the wire
            self._line_status = q.find(b'"op": "status"') >= 0
        if self.timeouts != n:  # the host gave up waiting for an answer (maus.sim.uart _WAIT_US): it says so
            if was:
                self._poll = False
            _to.write(b"\n#SEASON timeout\n")
            self._reply()

    def write(self, b):
        self.tx(len(b))  # the time the write holds the unit in C (Uart.tx)
        _to.write(b)
        n0 = self.answers
        for c in b:
            self._byte(c)
            if self._echo and not self._hn:
                for q in self._echo:
                    _to.write(q)
                self._echo = None
            if self.answers != n0:
                n0 = self.answers
                if self._line_status:
                    self._poll = False
                self._reply()
        return len(b)

    def _reply(self):
        line = _from.readline()
        if not line:
            raise SystemExit("SEASON the host went away")
        w = self.world
        for delay, req in json.loads(line):
            if delay <= 0:
                self.request(req)
            else:
                w.at(w.now + delay * 1000, self.request, req)


PROBE = os.getenv("SEASON_PROBE") if hasattr(os, "getenv") else None
LATE_US = int(os.getenv("SEASON_LATE_US") or 1000) if PROBE else 0  # a first edge later than this is printed
CALL_US = int(os.getenv("SEASON_CALL_US") or 100) if PROBE else 0  # (=cause) with the C calls this long it met


def probe():
    # SEASON_PROBE set: the heap between games (its free bytes, the largest free block, the qstrs and modules)
    import micropython

    gc.collect()
    if PROBE == "map":
        micropython.mem_info(1)  # (any argument prints the block map)
    else:
        micropython.mem_info()
    micropython.qstr_info()
    print("SEASON modules", len(sys.modules), " ".join(sorted(k[5:] for k in sys.modules if k.startswith("maus."))))


class SeasonHw(sim.Hardware):
    polled = 0
    game = 0
    unit = None
    pool = None  # the board's qstr pool for a second game's names (POOL)
    families = ()  # the game families played since this process's boot

    def _uart(self):
        if self.uart is None:
            self.uart = SeasonUart(self.world)
            self._edge = [-1] * len(self.buttons)
        return self.uart

    def press(self, p):
        w = self._wires[p - 1]
        if self.wiring.buttons[w].level:  # an edge (a button held down again is none): the wire's level
            self._edge[w] = self.world.ticks_us()
        sim.Hardware.press(self, p)

    def apply(self, act):
        s = act.get("season")
        if s is None:
            sim.Hardware.apply(self, act)
        elif s == "polled":
            self.polled = act["on"]
        elif s == "game":
            self.game = act["n"]
            print("SEASON game", act["n"])
            if act.get("family") not in self.families:
                self.families += (act.get("family"),)
            if len(self.families) > 1 and POOL and not self.pool:
                # a second game since this boot: its names and the first's pass 1,260, and a board adds a pool of
                # 1,280 entries for them as the game is chosen, for good (host/mausbox/heapbudget.py
                # LONG_LIVED_QSTR_TABLES); held here from then on, in blocks of 1,000 bytes as BALLAST is
                self.pool = [bytearray(1000) for _ in range(-(-POOL // 1000))]

    def finished_and_idle(self, unit):
        if self.unit is not unit:
            self.unit = unit
            cap = unit.capture
            emit = cap.emit

            def timed(kind, i, t, emit=emit, hw=self):
                if kind == 1:  # maus.capture.irq.EV_PRESS
                    e = hw._edge[i]
                    if e >= 0:
                        hw._edge[i] = -1
                        d = ticks_diff(t, e)
                        if d < 0:
                            d = 0
                        if d > 0xFFFFFF:
                            d = 0xFFFFFF
                        r = _rec
                        r[0] = hw.polled
                        r[1] = hw.game & 255
                        r[2] = hw.game >> 8
                        r[3] = d & 255
                        r[4] = (d >> 8) & 255
                        r[5] = d >> 16
                        _cap.write(r)
                        if PROBE and d > LATE_US:  # a late first edge: when (virtual µs), for whom
                            print("SEASON late", d, "edge", e, "player", i + 1, "game", hw.game, "polled", hw.polled,
                                  _overlapping(e, t) if PROBE == "cause" else "")
                emit(kind, i, t)

            cap.emit = timed
        u = self.uart
        if u._queue or u._wire or u._asked >= 0:  # the host is still at it (a pull's next request)
            if self.finished() and self.world.now - self.scenario_end_us > 600000000:
                # ten virtual minutes past the last action and the host still not done (a pull the unit keeps
                # answering `nomem`): the season ends here, and what was not pulled counts as lost
                print("SEASON the host was still at it 600 s after the last action")
                return True
            return False
        return sim.Hardware.finished_and_idle(self, unit)


_CALLS = 32  # SEASON_PROBE=cause: the last C calls (start, end, kind), to say what held a late first edge off
_cs = [0] * _CALLS
_ce = [0] * _CALLS
_ck = [0] * _CALLS
_ci = [0]
_kind = [0]  # the kind of the C call being made (nested: flash and gc call World.spend)
_KINDS = ("spend", "bus", "flash", "gc", "write")


def _cause(hw):
    # Wraps the world's C calls (spend, the buses' block, flash, gc) and the unit's writes on the host's line to
    # record their virtual times; late presses print what overlapped their edge.
    w = hw.world
    wi = hw.wiring

    def rec(k, t0, t1):
        i = _ci[0]
        _cs[i] = t0
        _ce[i] = t1
        _ck[i] = k
        _ci[0] = (i + 1) % _CALLS

    def wrap(obj, name, k):
        orig = getattr(obj, name)

        def f(*a):
            outer = _kind[0]
            if not outer:
                _kind[0] = k
            t0 = w.ticks_us()
            try:
                return orig(*a)
            finally:
                if not outer:
                    _kind[0] = 0
                    t1 = w.ticks_us()
                    if t1 - t0 >= CALL_US:
                        rec(k, t0, t1)

        setattr(obj, name, f)

    wrap(w, "spend", 1)
    wrap(wi, "block", 2)
    wrap(w, "flash_write", 3)
    wrap(w, "collected", 4)
    u = hw.uart
    uw = u.write

    def write(b):
        n = uw(b)
        if b == b"\n":  # a frame's end: when its answer went out
            rec(5, w.ticks_us(), w.ticks_us())
        return n

    u.write = write


def _overlapping(e, t):
    out = []
    for i in range(_CALLS):
        if _ck[i] and (_ce[i] > e - 200 or _ck[i] == 5 and _ce[i] > e - 20000) and _cs[i] <= t:
            out.append("%s %d-%d(%d)" % (_KINDS[_ck[i] - 1], _cs[i] - e, _ce[i] - e, _ce[i] - _cs[i]))
    return " ".join(out)


with open(WORK + "/board.json") as f:
    board = json.load(f)
hw = SeasonHw(board, scenario=WORK + "/season.jsonl")
hw._uart()
board = None
if PROBE == "cause":
    _cause(hw)
from maus.sim.world import qstr_room  # noqa: E402

qstr_room(sim.FW_QSTRS)  # as the virtual unit does (maus.hw.open_hardware)
gc.collect()
print("SEASON free", gc.mem_free())
if MODE == "probe":
    raise SystemExit(0)

import maus  # noqa: E402

crashes = 0
err = None
try:
    import maus.unit

    if PROBE:  # the heap each time a game's players are joining (the phase before has gone)
        from maus.unit.core import Unit

        def _switch(self, orig=Unit._switch):
            nxt = self._next
            orig(self)
            if nxt is not None and nxt[0] == "join":
                probe()
                h = self.host
                print("SEASON held svc", h.svc is not None, "mod", h._mod is not None, "desk", h.desk is not None,
                      "game", self.game is not None, "log", self.log is not None, "det", self.detector is not None,
                      "mods", len(h._mods), "timers", len(self.timers))

        Unit._switch = _switch

        class moment(maus.moment):
            def __enter__(self, base=maus.moment):
                if "maus.unit.begin" in sys.modules and "maus.unit.start" not in sys.modules:
                    # the start's catalog step (maus.unit.begin.prepare), after the game module's import
                    import micropython

                    print("SEASON start free", gc.mem_free())
                    micropython.mem_info()  # (prints, allocates nothing: the largest free block)
                base.__enter__(self)

        maus.moment = moment  # (the modules that import it later take this one)
    maus.unit.main(hw=hw)
except KeyboardInterrupt:
    raise
except BaseException as e:  # noqa: BLE001 - a crash of the unit (a watchdog reset is a SystemExit): the host
    err = e  # side starts the unit again from its flash (a board's reset: a fresh heap), at the next game
if err is not None:
    # The unit is gone: room to say how (nothing of it stays reachable from the simulator). Each step may itself
    # run out of memory; whatever is not said, the host side restarts the unit all the same (any end without
    # "SEASON end crashes 0" is a crash: tests/host/seasonhost.py season).
    crashes = 1
    import micropython

    micropython.mem_info()  # the heap as the crash left it (prints, allocates nothing)
    held = None
    at = "?"
    try:
        _cap.flush()
        for b in hw.buttons:
            b.irq(handler=None)
        w = hw.world
        w.qlen = 0
        for i in range(len(w._qh)):
            w._qh[i] = None
        hw.unit = None
        maus.unload_since(())  # the firmware's modules (held by nothing now) go too
        gc.collect()
        at = (w.now + w.shifted) // 1000
    except MemoryError:
        gc.collect()
    try:
        print("SEASON crash", type(err).__name__, err)
        sys.print_exception(err)
    except MemoryError:
        pass
    err = None
    gc.collect()
    print("SEASON crashed at", at)
    _to.close()
    raise SystemExit(3)
print("SEASON ms", time.ticks_diff(time.ticks_ms(), T0[0]))
print("SEASON end crashes", crashes, "wdt", sim._wdt.bites, "uart", hw.uart.sent, hw.uart.answers,
      hw.uart.timeouts, hw.uart.dropped, json.dumps(hw.uart.results), "polls_not_asked", hw.uart.polls)
st = os.statvfs("/flash")
print("SEASON flash", st[0] * st[2], st[0] * st[3])
_cap.close()
_to.close()
