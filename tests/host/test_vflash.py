"""The virtual unit's flash (host/mausbox/sim/vflash.py): its folder has the board's littlefs partition's
capacity and block accounting. Each check runs the same code on the virtual unit and on a real littlefs
(MicroPython's own VfsLfs2 on a RAM block device of 4 KiB blocks, as the ESP32 port formats its "vfs" partition)
and compares what statvfs, writes and ENOSPC say."""

from __future__ import annotations

import ast
import subprocess

import pytest
from conftest import INTERPS

needs32 = pytest.mark.skipif(INTERPS["32"].binary is None, reason="no 32-bit MicroPython built")

# littlefs on RAM: MicroPython 1.28's VfsLfs2 with the esp32 port's defaults (mkfs(bdev): readsize, progsize
# and lookahead 32) on 4 KiB blocks
LFS = """
import os, vfs
class RAM:
    def __init__(s, n):
        s.d = bytearray(n * 4096)
        s.n = n
    def readblocks(s, b, buf, off=0):
        a = b * 4096 + off
        buf[:] = s.d[a:a + len(buf)]
    def writeblocks(s, b, buf, off=0):
        a = b * 4096 + off
        s.d[a:a + len(buf)] = buf
    def ioctl(s, op, arg):
        if op == 4:
            return s.n
        if op == 5:
            return 4096
        if op == 6:
            s.d[arg * 4096:(arg + 1) * 4096] = b"\\xff" * 4096
            return 0
bd = RAM(%d)
vfs.VfsLfs2.mkfs(bd)
vfs.mount(vfs.VfsLfs2(bd), "/fl")
R = "/fl"
"""

SIZES = (0, 100, 128, 129, 4096, 4097, 5000, 8185, 12273)

STATVFS = """
def free():
    return os.statvfs(R or "/")[3]
out = [os.statvfs(R or "/")[0], os.statvfs(R or "/")[2], free()]
for n in %r:
    with open(R + "/f%%d" %% n, "wb") as f:
        f.write(b"x" * n)
    out.append(free())
os.mkdir(R + "/d")
out.append(free())
with open(R + "/d/g", "wb") as f:
    f.write(b"y" * 5000)
out.append(free())
for i in range(40):  # rewritten in place, as the unit's small files are: no block more, no pair more
    with open(R + "/f100", "wb") as f:
        f.write(b"z" * 100)
    with open(R + "/f5000", "wb") as f:
        f.write(b"z" * 5000)
out.append(free())
for n in %r:
    os.remove(R + "/f%%d" %% n)
os.remove(R + "/d/g")
os.rmdir(R + "/d")
out.append(free())
print("OUT", out)
""" % (SIZES, SIZES)

ENOSPC = """
def free():
    return os.statvfs(R or "/")[3]
out = [free()]
f = open(R + "/a.bin", "wb")
n = synced = 0
try:
    while True:
        f.write(b"x" * 1000)
        n += 1000
        if n % 3000 == 0:
            f.flush()
            synced = n
except OSError as e:
    out += [e.errno, n, synced]
try:
    f.write(b"y")
    out.append("wrote")
except OSError as e:
    out.append(e.errno)
f.close()
with open(R + "/a.bin", "rb") as f:
    data = f.read()
out += [len(data), data == b"x" * len(data), free()]
with open(R + "/small", "w") as f:  # a file that fits its directory's metadata: no block needed
    f.write("hello")
out.append(free())
try:
    os.mkdir(R + "/d")
    out.append("mkdir")
except OSError as e:
    out.append(e.errno)
with open(R + "/a.bin", "ab") as f:  # an append copies the last block first: one block must be free
    try:
        f.write(b"z" * 10)
        f.flush()
        out.append("appended")
    except OSError as e:
        out.append(e.errno)
out.append(os.stat(R + "/a.bin")[6])
os.remove(R + "/a.bin")
out.append(free())
os.mkdir(R + "/d")
out.append(free())
print("OUT", out)
"""

LOGS = """
def free():
    return os.statvfs(R or "/")[3]
os.mkdir(R + "/logs")
out = []
for i in range(1, 301):
    with open(R + "/logs/%05d-mms.jsonl" % i, "wb") as f:
        f.write(b"y" * (150 + (i * 37) % 900))
    if i % 3 == 0:
        with open(R + "/logs/%05d-mms.jsonl.pulled" % i, "wb") as f:
            f.write(b"a" * 64)
    if i % 25 == 0:
        out.append(free())
i = 300
try:
    while True:
        i += 1
        with open(R + "/logs/%05d-mms.jsonl" % i, "wb") as f:
            f.write(b"z" * 2000)
except OSError as e:
    out += [e.errno, i]
for k in range(1, 151):  # the oldest with their markers, as make_room deletes them
    os.remove(R + "/logs/%05d-mms.jsonl" % k)
    if k % 3 == 0:
        os.remove(R + "/logs/%05d-mms.jsonl.pulled" % k)
out.append(free())
print("OUT", out)
"""


def _out(text: str) -> list:
    line = [ln for ln in text.splitlines() if ln.startswith("OUT ")]
    assert line, text
    return ast.literal_eval(line[-1][4:])


def on_littlefs(tmp_path, body: str, blocks: int) -> list:
    script = tmp_path / "lfs.py"
    script.write_text(LFS % blocks + body)
    p = subprocess.run([INTERPS["32"].binary, "-X", "heapsize=%d" % (blocks * 4096 * 2 + (1 << 20)), str(script)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return _out(p.stdout)


def on_unit(root, body: str, flash: int | None = None) -> list:
    from mausbox.link import UnitLink
    from mausbox.sim.serial import SerialUnit

    env = {"MAUSBOX_FLASH_BYTES": str(flash)} if flash else {}
    with SerialUnit(root, heapsize="1m", micropython=INTERPS["32"].binary, env=env) as unit, \
            UnitLink(unit.pty_path) as link:
        repl = link.repl()
        repl.enter_raw()
        return _out(repl._exec_plain("import os\nR = ''\n" + body).decode())


def blocks(n):
    """littlefs 2.11 (lfs2_ctz_index), block size 4096: a file of n bytes takes 0 blocks up to the inline limit
    (min(cache_size 128, attr_max, block_size / 8) = 128), else its CTZ skip-list's blocks."""
    if n <= 128:
        return 0
    b, i = 4096 - 8, (n - 1) // (4096 - 8)
    if i:
        i = (n - 1 - 4 * (bin(i - 1).count("1") + 2)) // b
    return i + 1


@needs32
def test_statvfs_counts_blocks_as_littlefs_does(tmp_path):
    unit = on_unit(tmp_path / "unit", STATVFS)
    assert unit == on_littlefs(tmp_path, STATVFS, 512)
    bsize, total, empty = unit[:3]
    assert (bsize, total, empty) == (4096, 512, 510)  # 2 MiB; the root directory's metadata pair
    frees = unit[3:3 + len(SIZES)]
    steps = [a - b for a, b in zip([empty, *frees], frees)]
    assert steps == [blocks(n) for n in SIZES] == [0, 0, 0, 1, 1, 2, 2, 2, 3]
    # a directory: its metadata pair, which statvfs counts twice (lfs2_fs_traverse: once in its parent's entry)
    assert frees[-1] - unit[3 + len(SIZES)] == 4
    assert unit[-2] == unit[-3]  # files rewritten: the same room
    assert unit[-1] == empty  # everything removed: every block back


@needs32
def test_a_write_past_the_capacity_raises_enospc_and_writes_nothing_more(tmp_path):
    unit = on_unit(tmp_path / "unit", ENOSPC, flash=10 * 4096)
    assert unit == on_littlefs(tmp_path, ENOSPC, 10)
    (free0, err, n, synced, again, size, clean, free1, free_small, mkdir, append, size2, freed, after_dir) = unit
    assert free0 == 8 and err == 28 and again == 28
    assert size == synced < n and clean  # the file as of its last flush: nothing of the failed writes
    assert free1 == 8 - blocks(size) and free_small == free1
    assert mkdir == 28  # a directory needs its pair
    assert append == "appended" and size2 == size + 10  # one block was still free for the copy
    assert freed == free0 and after_dir == free0 - 4


@needs32
def test_many_logs_take_the_room_they_take_on_littlefs(tmp_path):
    """300 logs and 100 markers in logs/: directory entries spill into more metadata pairs; the virtual unit's
    estimate stays within one pair (2 blocks) of littlefs, both run out of room within 2 one-block logs, and
    after the oldest half is deleted within two pairs (littlefs drops a directory's pair only once it is empty)."""
    unit = on_unit(tmp_path / "unit", LOGS)
    lfs = on_littlefs(tmp_path, LOGS, 512)
    assert unit[12] == lfs[12] == 28 and abs(unit[13] - lfs[13]) <= 2, (unit, lfs)
    assert all(abs(a - b) <= 2 for a, b in zip(unit[:12], lfs[:12])), repr((unit, lfs))
    assert abs(unit[14] - lfs[14]) <= 4, repr((unit, lfs))


@needs32
def test_the_count_is_made_again_at_boot_from_the_folder(tmp_path):
    root = tmp_path / "unit"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "00001-mms.jsonl").write_bytes(b"x" * 5000)  # 2 blocks
    (root / "boot.txt").write_bytes(b"y" * 100)  # inline
    (root / ".sim").mkdir()
    (root / ".sim" / "notes").write_bytes(b"z" * 50000)  # the simulator's own: not on the unit's flash
    probe = "print('OUT', [os.statvfs('/')[3]])"
    assert on_unit(root, probe) == [510 - 4 - 2]
    on_unit(root, "with open('logs/new', 'wb') as f:\n    f.write(b'n' * 9000)\nprint('OUT', [])")
    assert on_unit(root, probe) == [510 - 4 - 2 - 3]  # a new boot counts what the last one wrote


COUNT = """
import sys
sys.path.insert(0, %r)
import vflash
R = %r
out = []
for cap in (512, %d):
    n = [0, 0, 0, 0]
    vflash.count("/", n, cap, lambda d: os.ilistdir(R + d), lambda p: os.stat(R + p))
    out.append(n)
print("OUT", out)
"""


@needs32
def test_the_bridge_counts_the_folder_as_the_unit_would(tmp_path):
    """The bridge (CPython) counts the folder while the interpreter starts (vflash.host_count): the same blocks,
    entry bytes, directories and extra pairs as the interpreter's own count, on a full flash too (where the
    pairs a directory spills into are capped by the room left); the simulator's own files are not counted."""
    from mausbox.sim import vflash

    root = tmp_path / "unit"
    logs = root / "logs"
    logs.mkdir(parents=True)
    for i in range(1, 401):  # a large folder: entries spill into more pairs
        (logs / ("%05d-mms.jsonl" % i)).write_bytes(b"y" * (100 + (i * 97) % 9000))
        if i % 3 == 0:
            (logs / ("%05d-mms.jsonl.pulled" % i)).write_bytes(b"a" * 64)
    (root / "maus" / "games").mkdir(parents=True)
    (root / "maus" / "games" / "mg.mpy").write_bytes(b"m" * 20000)
    (root / "maus" / "x.mpy").write_bytes(b"m" * 128)
    (root / "settings.json").write_bytes(b"{}")
    (root / "empty").mkdir()
    (root / ".sim").mkdir()
    (root / ".sim" / "notes").write_bytes(b"z" * 50000)
    full = 300  # fewer blocks than the logs take: the extra pairs are capped
    got = [vflash.host_count(str(root), cap) for cap in (512, full)]
    body = COUNT % (str(vflash.__file__).rsplit("/", 1)[0], str(root), full)
    script = tmp_path / "count.py"
    script.write_text("import os\n" + body)
    p = subprocess.run([INTERPS["32"].binary, "-X", "heapsize=4m", str(script)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert _out(p.stdout) == got, got
    assert got[0][2] == 4 and got[0][0] > full and got[1][3] < got[0][3], got  # logs, maus, games, empty
