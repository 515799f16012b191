# A fresh, empty filesystem directory for log and settings tests, on both interpreters:
# MicroPython: littlefs (vfs.VfsLfs2) on a RAM block device; CPython: a temp directory.
import sys

MPY = sys.implementation.name == "micropython"
_n = [0]


class Fs:
    def __init__(self, blocks=32, block_size=512):
        if MPY:
            import vfs
            from maus.sim.ramblock import RAMBlockDev

            _n[0] += 1
            self.dev = RAMBlockDev(blocks, block_size)
            vfs.VfsLfs2.mkfs(self.dev)
            self.root = "/t%d" % _n[0]
            vfs.mount(vfs.VfsLfs2(self.dev), self.root)
        else:
            import tempfile

            self.dev = None
            self.root = tempfile.mkdtemp(prefix="maus")

    def close(self):
        if MPY:
            import vfs

            vfs.umount(self.root)
            self.dev = None
        else:
            import shutil

            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()
