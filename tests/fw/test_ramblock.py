import sys

from maus.sim.ramblock import RAMBlockDev

MPY = sys.implementation.name == "micropython"


def test_power_cut_drops_every_later_write():
    dev = RAMBlockDev(4, 128)
    dev.cut_after = 2
    dev.writeblocks(0, b"\x01" * 128)
    dev.ioctl(6, 1)
    dev.writeblocks(1, b"\x02" * 16, 32)  # the cut: never happens
    dev.writeblocks(2, b"\x03" * 128)
    dev.ioctl(6, 0)
    assert dev.cut and dev.ops == 2
    img = dev.image()
    assert img[:128] == b"\x01" * 128 and img[128:256] == b"\xff" * 128 and img[256:384] == b"\xff" * 128


def test_torn_write_lands_half_way():
    dev = RAMBlockDev(2, 128)
    dev.tear = True
    dev.cut_after = 0
    dev.writeblocks(1, b"\x00" * 64, 16)
    dev.writeblocks(0, b"\x00" * 128)
    blk = bytearray(128)
    dev.readblocks(1, blk)
    assert blk == b"\xff" * 16 + b"\x00" * 32 + b"\xff" * 80
    dev.readblocks(0, blk)
    assert blk == b"\xff" * 128


def test_snapshot_restore_and_reads_across_blocks():
    dev = RAMBlockDev(3, 128)
    dev.writeblocks(0, bytes(range(256)))  # without the extended interface a write may span blocks
    snap = dev.snapshot()
    dev.ioctl(6, 0)
    buf = bytearray(100)
    dev.readblocks(0, buf, 78)
    assert buf == b"\xff" * 50 + bytes(range(128, 178))
    dev.restore(snap)
    dev.readblocks(0, buf, 78)
    assert buf == bytes(range(78, 178)) and dev.ops == 0 and not dev.cut
    assert dev.ioctl(4, 0) == 3 and dev.ioctl(5, 0) == 128


def test_live_power_cuts_on_littlefs():
    # The game runs on littlefs while the power goes at op N; the surviving flash is remounted and
    # recovered. A sample here; tests/host/test_powercut.py runs every N and 1,000 random cuts.
    if not MPY:
        try:
            import vfs  # noqa: F401
        except ImportError:
            return  # CPython has no littlefs
        raise AssertionError("vfs on CPython?")
    import powercut

    for tear, first, step in ((True, 0, 9), (False, 4, 13)):
        s = powercut.live_cuts(20, 25, range(first, 190, step), tear=tear, old_records=5)  # 2 blocks: logs/reserve
        assert s.ok(), s.failures
        assert s.cuts == len(range(first, 190, step)) and s.dropped > 0 and s.recovered > 0, s
