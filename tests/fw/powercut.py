# Power cuts at the block-device level: littlefs on a RAM device that loses power after its Nth
# block write or erase; the surviving image is remounted and recovered, then checked.
# Used by test_gamelog.py (a few cuts, both interpreters), tests/host/test_powercut.py (every N and
# 1,000 random cuts, MicroPython) and bench/bench_logs.py. Run as a script: micropython powercut.py ...
import gc
import sys

import vfs
from fwtest import Rand
from maus.log import read as logread
from maus.log import repair as logrepair
from maus.log import start as logstart
from maus.log.store import LogStore
from maus.sim.ramblock import RAMBlockDev

BS = 512  # block size; the ESP32's flash has 4096 (set with the script's last argument)
MNT = "/pc"
DEBUG = False
PLAYERS = [(1, "red", False), (2, "blue", True), (3, "green", False), (4, "yellow", False)]
SETTINGS = {"lang": "de", "volume": 2, "tie_window_us": 2000, "lockout": True, "debounce_ms": 30,
            "settle_ms": 3, "claim_window_ms": 5000, "protection_timeout_ms": 3000, "sensitivity": 5}


class Clock:
    def __init__(self):
        self.ms = 1000

    def __call__(self):
        self.ms += 731
        return self.ms


def events(n, seed):
    # n deterministic game events (type, fields)
    r = Rand(seed)
    out = []
    for i in range(n):
        k = r.randint(0, 9)
        p = r.randint(1, 4)
        if k < 4:
            out.append(("press", {"player": p, "offset_us": r.randint(-50000, 900000), "false_start": k == 0}))
        elif k < 5:
            out.append(("reveal", {"card": "mg/mouse/%02d" % r.randint(1, 32), "n": i}))
        elif k < 6:
            out.append(("tap", {"identity": "mg/clothing/%02d" % r.randint(1, 58), "uid": "04a1%08x" % r.next()}))
        elif k < 7:
            out.append(("verdict", {"player": p, "ok": r.randint(0, 1) == 1, "reason": "item and colour match"}))
        elif k < 8:
            out.append(("score", {"player": p, "delta": r.choice((1, -1, -2)), "why": "mouse caught"}))
        elif k < 9:
            out.append(("claim", {"player": p}))
        else:
            out.append(("prompt", {"what": "show cheese", "player": p}))
    return out


def play(store, evs, dev=None):
    # Plays one game; returns (log, acks): acks[i] = device ops done when record i returned.
    # With a device that loses power, play stops at the cut (the CPU is off too).
    acks = []
    log = logstart.start_game(store, Clock(), "mausgeflippt", "classic", PLAYERS, "devkitc", "a4cf12fe0b10",
                             "0.1.0", SETTINGS, None, 123456, reserve=2048)
    acks.append(_ops(dev))
    for typ, f in evs:
        if dev is not None and dev.cut:
            log.close()  # power is off: the open file is gone, nothing more reaches the flash
            return log, acks
        log.record(typ, f)
        acks.append(_ops(dev))
    if dev is None or not dev.cut:
        log.end({1: 3, 2: 1, 3: 0, 4: -1}, [1], {1: {"mice": 3}, 2: {"mice": 1}, 3: {}, 4: {"cheeses": 1}},
                "last mouse caught")
        acks.append(_ops(dev))
    log.close()
    return log, acks


def _ops(dev):
    # ops done when a record returned; after the cut it never returned (the CPU was off)
    if dev is None:
        return 0
    return dev.ops if not dev.cut else 1 << 30


class JournalDev(RAMBlockDev):
    # Records every write and erase so any cut point's image can be rebuilt without replaying.
    def __init__(self, blocks, image):
        super().__init__(blocks, BS, image)
        self.journal = []

    def writeblocks(self, block, buf, offset=0):
        self.journal.append((block, offset, bytes(buf)))
        super().writeblocks(block, buf, offset)

    def ioctl(self, op, arg):
        if op == 6:
            self.journal.append((arg, 0, None))
        return super().ioctl(op, arg)


def _apply(img, op, ff, tear=False):
    # one journal entry onto a list of block bytearrays (littlefs never writes across a block)
    b, off, data = op
    if data is None:
        if not tear:
            img[b][:] = ff
    else:
        n = len(data) // 2 if tear else len(data)
        img[b][off:off + n] = data[:n]


def setup(blocks, old_records=20):
    # A formatted device holding one older, pulled game: -> image bytes, old log name, its sha
    dev = RAMBlockDev(blocks, BS)
    vfs.VfsLfs2.mkfs(dev)
    vfs.mount(vfs.VfsLfs2(dev), MNT)
    try:
        st = LogStore(MNT)
        play(st, events(old_records, 99))
        name = st.names()[0]
        sha = st.sha256(name)
        st.mark_pulled(name, sha)
    finally:
        vfs.umount(MNT)
    return dev.snapshot(), name, sha


class Stats:
    def __init__(self):
        self.cuts = 0
        self.lost = 0  # flushed records missing after recovery
        self.mount_failures = 0
        self.crashes = 0
        self.bad = 0  # any other check that failed
        self.dropped = 0  # cuts where the record being written was dropped
        self.recovered = 0  # cuts after which recovery changed a log
        self.first = None  # the first failure, for the message
        self.failures = []  # the first few

    def fail(self, what, n):
        if self.first is None:
            self.first = "cut %d: %s" % (n, what)
        if len(self.failures) < 5:
            self.failures.append("cut %d: %s" % (n, what))

    def ok(self):
        return self.lost == 0 and self.mount_failures == 0 and self.crashes == 0 and self.bad == 0

    def __repr__(self):
        return ("cuts=%d lost=%d mount_failures=%d crashes=%d bad=%d dropped=%d recovered=%d first=%s"
                % (self.cuts, self.lost, self.mount_failures, self.crashes, self.bad, self.dropped,
                   self.recovered, self.first))


def check_after_cut(stats, n, dev, ref, flushed, old_name, old_sha):
    # Mount the surviving flash (dev, power back on), recover, and check: ref = the uncut game's
    # lines, flushed = how many records had been flushed before the cut.
    stats.cuts += 1
    dev.cut_after = -1
    dev.cut = False
    try:
        vfs.mount(vfs.VfsLfs2(dev), MNT)
    except Exception as e:  # noqa: BLE001
        stats.mount_failures += 1
        stats.fail("mount: %r" % e, n)
        return
    try:
        st = LogStore(MNT)
        if logrepair.recover(st):
            stats.recovered += 1
        if logrepair.recover(st):
            stats.bad += 1
            stats.fail("second recovery changed something", n)
        names = st.names()
        if old_name not in names or st.sha256(old_name) != old_sha or not st.is_pulled(old_name, old_sha):
            stats.lost += 1
            stats.fail("older log or its pulled marker damaged", n)
        names = [x for x in names if x != old_name]
        if not names:
            if flushed:
                stats.lost += flushed
                stats.fail("log missing, %d records flushed" % flushed, n)
            return
        if len(names) > 1:
            stats.bad += 1
            stats.fail("extra logs %r" % names, n)
        with open(st.path(names[0]), "rb") as f:
            _verify(stats, n, f, ref, flushed)
    except Exception as e:  # noqa: BLE001
        stats.crashes += 1
        stats.fail("recovery: %r" % e, n)
        if DEBUG:
            sys.print_exception(e)
    finally:
        vfs.umount(MNT)


def _verify(stats, n, f, ref, flushed):
    # The file: k reference lines (flushed <= k <= flushed + 1), then recovered + game_abort
    # unless the game is complete. Read line by line: no copy of the file in RAM.
    k = 0
    line = f.readline()
    while k < len(ref) and line == ref[k]:
        k += 1
        line = f.readline()
    if k < flushed:
        stats.lost += flushed - k
        stats.fail("only %d of %d flushed records" % (k, flushed), n)
        return
    if k > flushed + 1:
        stats.bad += 1  # impossible: a record that was never flushed
        stats.fail("%d records, only %d flushed" % (k, flushed), n)
    if k == flushed and flushed < len(ref):
        stats.dropped += 1
    types = []
    while line:
        rec, err = logread.check_line(line[:-1]) if line.endswith(b"\n") else (None, "torn")
        if err is not None or rec["seq"] != k + len(types):
            stats.bad += 1
            stats.fail("bad line after recovery: %r %r" % (err, line[:60]), n)
            return
        types.append(rec["type"])
        line = f.readline()
    if types != ([] if k == len(ref) else ["recovered", "game_abort"]):
        stats.bad += 1
        stats.fail("records after the game's own: %r" % types, n)


def play_journal(image, blocks, evs):
    # -> (lines of the uncut game's log, acks, journal)
    dev = JournalDev(blocks, image)
    vfs.mount(vfs.VfsLfs2(dev), MNT)
    try:
        st = LogStore(MNT)
        log, _ = play(st, evs)
        with open(st.path(log.name), "rb") as f:
            data = f.read()
    finally:
        vfs.umount(MNT)
    return data, dev.journal


def every_cut(blocks, n_events, seed=1, pick=None, tear_every=3):
    # Every cut point of one game (or those pick(number of ops) chooses), rebuilt from the journal.
    # Which records were flushed before each cut comes from re-running the game on a counting device.
    image, old_name, old_sha = setup(blocks)
    evs = events(n_events, seed)
    data, journal = play_journal(image, blocks, evs)
    ref = _lines(data)
    acks = _acks(image, blocks, evs)
    if acks[-1] != len(journal):
        raise AssertionError("runs differ: %d ops vs %d journalled" % (acks[-1], len(journal)))
    stats = Stats()
    img = [bytearray(b) for b in image]
    work = RAMBlockDev(blocks, BS)
    ff = b"\xff" * BS
    todo = pick(len(journal)) if pick is not None else range(len(journal) + 1)
    done = 0
    r = 0  # records flushed before the cut
    for n in todo:
        while done < n:
            _apply(img, journal[done], ff)
            done += 1
        while r < len(acks) and acks[r] <= n:
            r += 1
        work.restore(img)
        if n < len(journal) and tear_every and n % tear_every == 0:
            _apply(work.data, journal[n], ff, True)  # the write hit by the cut lands half-way
        check_after_cut(stats, n, work, ref, r, old_name, old_sha)
    return stats, len(journal), len(ref)


def recovery_cuts(blocks, n_events, points, seed=1):
    # Power cuts during boot recovery: for each game cut point n, every write/erase m of the recovery
    # that follows; then the next boot recovers again. -> (Stats, recovery runs)
    image, old_name, old_sha = setup(blocks)
    evs = events(n_events, seed)
    data, journal = play_journal(image, blocks, evs)
    ref = _lines(data)
    acks = _acks(image, blocks, evs)
    stats = Stats()
    ff = b"\xff" * BS
    dev = RAMBlockDev(blocks, BS)
    img = [bytearray(b) for b in image]
    done = 0
    runs = 0
    for n in points:
        while done < n:
            _apply(img, journal[done], ff)
            done += 1
        flushed = sum(1 for a in acks if a <= n)
        snap = [bytearray(b) for b in img]
        if n < len(journal) and n % 3 == 0:
            _apply(snap, journal[n], ff, True)  # the game's cut tore a write
        total = _recovery_ops(dev, snap)
        for m in range(total):
            runs += 1
            dev.restore(snap)
            vfs.mount(vfs.VfsLfs2(dev), MNT)
            dev.cut_after = m
            dev.tear = m % 2 == 0
            try:
                logrepair.recover(LogStore(MNT))
            except Exception as e:  # noqa: BLE001 - recovery must not crash, even losing power itself
                stats.crashes += 1
                stats.fail("recovery cut at %d: %r" % (m, e), n)
            try:
                vfs.umount(MNT)
            except OSError:
                pass
            check_after_cut(stats, n, dev, ref, flushed, old_name, old_sha)
    return stats, runs


def _recovery_ops(dev, snap):
    dev.restore(snap)
    vfs.mount(vfs.VfsLfs2(dev), MNT)
    try:
        logrepair.recover(LogStore(MNT))
    finally:
        vfs.umount(MNT)
    return dev.ops


def _acks(image, blocks, evs):
    dev = RAMBlockDev(blocks, BS, image)
    vfs.mount(vfs.VfsLfs2(dev), MNT)
    try:
        _, acks = play(LogStore(MNT), evs, dev)
    finally:
        vfs.umount(MNT)
    return acks


def _read_lines(path):
    out = []
    with open(path, "rb") as f:
        while True:
            line = f.readline()
            if not line:
                return out
            out.append(line)


def _lines(data):
    out = []
    pos = 0
    while pos < len(data):
        nl = data.index(b"\n", pos) + 1
        out.append(data[pos:nl])
        pos = nl
    return out


def live_cuts(blocks, n_events, points, seed=1, tear=False, old_records=20):
    # The real thing: the game runs on a device that loses power at op n; writes after it never
    # happen and the game stops (the CPU is off too); then the surviving image is checked.
    # Buffers are made once: this runs in a 96 KB MicroPython heap.
    image, old_name, old_sha = setup(blocks, old_records)
    dev = RAMBlockDev(blocks, BS)
    evs = events(n_events, seed)
    stats = Stats()
    ref = None
    for n in [-1] + list(points):
        gc.collect()  # littlefs takes 1 KB caches per open file: start each boot from a clean heap
        dev.restore(image)
        vfs.mount(vfs.VfsLfs2(dev), MNT)
        dev.cut_after = n
        dev.tear = tear
        try:
            st = LogStore(MNT)
            log, acks = play(st, evs, dev)
            if n < 0:
                ref = _read_lines(st.path(log.name))
        except Exception as e:  # noqa: BLE001 - game code must never see an exception
            stats.crashes += 1
            stats.fail("game: %r" % e, n)
            continue
        finally:
            try:
                vfs.umount(MNT)
            except OSError:
                pass
        if n >= 0:
            flushed = sum(1 for a in acks if a <= n) if dev.cut else len(acks)
            log = acks = None
            gc.collect()
            check_after_cut(stats, n, dev, ref, flushed, old_name, old_sha)
    return stats


def random_cuts(blocks, n_events, count, seed=7, games=4):
    # `count` random cut points spread over several longer games.
    r = Rand(seed)
    total = Stats()
    for g in range(games):
        k = count // games + (1 if g < count % games else 0)
        s, _, _ = every_cut(blocks, n_events, seed + g, lambda ops, k=k: sorted(r.randint(0, ops) for _ in range(k)), 2)
        for a in ("cuts", "lost", "mount_failures", "crashes", "bad", "dropped", "recovered"):
            setattr(total, a, getattr(total, a) + getattr(s, a))
        if total.first is None:
            total.first = s.first
    return total


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "every" and len(sys.argv) > 4:
        BS = int(sys.argv[4])
    elif mode == "random" and len(sys.argv) > 5:
        BS = int(sys.argv[5])
    if mode == "every":
        s, ops, recs = every_cut(int(sys.argv[2]), int(sys.argv[3]))
        print("every: block_size=%d ops=%d records=%d %r" % (BS, ops, recs, s))
    elif mode == "recovery":
        n_events = int(sys.argv[3])
        s, runs = recovery_cuts(int(sys.argv[2]), n_events, range(0, 6 * n_events, int(sys.argv[4])))
        print("recovery: runs=%d %r" % (runs, s))
    elif mode == "random":
        s = random_cuts(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
        print("random: block_size=%d %r" % (BS, s))
