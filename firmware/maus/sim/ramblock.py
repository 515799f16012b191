# A RAM block device for vfs.VfsLfs2 (extended interface: offset writes, ioctl 6 = erase)
# that can lose power: after `cut_after` block writes/erases, no later write or erase happens.
from micropython import const

_INIT = const(1)
_SYNC = const(3)
_COUNT = const(4)
_SIZE = const(5)
_ERASE = const(6)


class RAMBlockDev:
    def __init__(self, blocks, block_size=512, image=None):
        self.block_size = block_size
        self.blocks = blocks
        self._ff = b"\xff" * block_size
        if image is not None:
            self.data = bytearray(image)
        else:
            self.data = bytearray(blocks * block_size)
            for b in range(blocks):
                self.data[b * block_size:(b + 1) * block_size] = self._ff  # erased flash
        self.ops = 0  # block writes + erases that happened
        self.cut_after = -1  # -1: never; N: power fails at the (N+1)th write/erase
        self.tear = False  # the write hit by the cut lands half-way (a program cut mid-page)
        self.cut = False  # power is gone

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
        a = block * self.block_size + offset
        buf[:] = memoryview(self.data)[a:a + len(buf)]

    def writeblocks(self, block, buf, offset=0):
        a = block * self.block_size + offset
        p = self._power()
        if p == 1:
            self.data[a:a + len(buf)] = buf
        elif p == 2 and self.tear:
            h = len(buf) // 2
            self.data[a:a + h] = memoryview(buf)[:h]

    def ioctl(self, op, arg):
        if op == _COUNT:
            return self.blocks
        if op == _SIZE:
            return self.block_size
        if op == _ERASE:
            if self._power() == 1:
                a = arg * self.block_size
                self.data[a:a + self.block_size] = self._ff
            return 0
        if op == _INIT or op == _SYNC:
            return 0
        return None

    def image(self):
        # The bytes that survived the cut.
        return bytes(self.data)
