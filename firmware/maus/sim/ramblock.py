# A RAM block device for vfs.VfsLfs2 (extended interface: offset writes, ioctl 6 = erase)
# that can lose power: after `cut_after` block writes/erases, no later write or erase happens.
# One bytearray per block: no large contiguous allocation, so it fits a fragmented small heap.
from micropython import const

_INIT = const(1)
_SYNC = const(3)
_COUNT = const(4)
_SIZE = const(5)
_ERASE = const(6)


class RAMBlockDev:
    def __init__(self, blocks, block_size=512, image=None):
        # image: flash contents to start from (bytes, or a snapshot())
        self.block_size = block_size
        self.blocks = blocks
        self._ff = b"\xff" * block_size
        self.data = [bytearray(self._ff) for _ in range(blocks)]  # erased flash
        self.ops = 0  # block writes + erases that happened
        self.cut_after = -1  # -1: never; N: power fails at the (N+1)th write/erase
        self.tear = False  # the write hit by the cut lands half-way (a program cut mid-page)
        self.cut = False  # power is gone
        if image is not None:
            self.restore(image)

    def restore(self, image):
        # Load flash contents in place (no allocation) and switch the power back on.
        bs = self.block_size
        if isinstance(image, list):
            for b in range(self.blocks):
                self.data[b][:] = image[b]
        else:
            mv = memoryview(image)
            for b in range(self.blocks):
                self.data[b][:] = mv[b * bs:(b + 1) * bs]
        self.ops = 0
        self.cut_after = -1
        self.cut = False

    def snapshot(self):
        # The flash contents now (what survives a cut): one bytes object per block.
        return [bytes(b) for b in self.data]

    def image(self):
        return b"".join(self.data)

    def _power(self):
        # 1: the op happens; 0: lost; 2: the op the power cut hits
        if self.cut:
            return 0
        if self.ops == self.cut_after:
            self.cut = True
            return 2
        self.ops += 1
        return 1

    def readblocks(self, block, buf, offset=0):
        # Without the extended interface a read may span blocks.
        bs = self.block_size
        n = len(buf)
        mv = memoryview(buf)
        i = 0
        while i < n:
            k = min(n - i, bs - offset)
            mv[i:i + k] = memoryview(self.data[block])[offset:offset + k]
            i += k
            block += 1
            offset = 0

    def writeblocks(self, block, buf, offset=0):
        p = self._power()
        if p == 0 or (p == 2 and not self.tear):
            return
        n = len(buf) if p == 1 else len(buf) // 2  # a torn write: the first half got there
        bs = self.block_size
        mv = memoryview(buf)
        i = 0
        while i < n:
            k = min(n - i, bs - offset)
            self.data[block][offset:offset + k] = mv[i:i + k]
            i += k
            block += 1
            offset = 0

    def ioctl(self, op, arg):
        if op == _COUNT:
            return self.blocks
        if op == _SIZE:
            return self.block_size
        if op == _ERASE:
            if self._power() == 1:
                self.data[arg][:] = self._ff
            return 0
        if op == _INIT or op == _SYNC:
            return 0
        return None
