# Shared set-up for the RFID tests: an emulated MFRC522 with tags, and a bus that answers at random.
from maus.drivers.mfrc522 import MFRC522
from maus.sim.mfrc522_emu import MFRC522Emu, Pin


def reader():
    """(emulator, driver) with the driver initialised against the emulator."""
    emu = MFRC522Emu()
    r = MFRC522(emu, Pin(), Pin(emu=emu))
    assert r.ok
    return emu, r


def uid(*b):
    return bytes(b)


class FuzzSPI:
    """A bus whose chip answers every register read with a random byte: random register values,
    FIFO contents and FIFO levels."""

    def __init__(self, rand):
        self.rand = rand
        self.transfers = 0

    def write(self, buf):
        self.transfers += 1

    def write_readinto(self, out, into):
        self.transfers += 1
        for i in range(len(out)):
            into[i] = self.rand.next() & 0xFF


class BrokenSPI:
    """A bus that fails every transfer, like a loose wire on a real board."""

    def write(self, buf):
        raise OSError(5)

    def write_readinto(self, out, into):
        raise OSError(5)


class Recorder:
    """on_card callback that records (uid hex, sak)."""

    def __init__(self):
        self.cards = []
        self.cb = self.card

    def card(self, u, n, sak):
        self.cards.append((bytes(u[:n]).hex(), sak))
