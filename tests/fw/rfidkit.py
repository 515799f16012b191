# Shared set-up for the RFID tests: an emulated MFRC522 with tags, buses that answer at random or not
# at all, and the loop that runs a test file under every emulated chip variant.
#
# Every RFID test builds its chip with chip() or reader(): they take the variant named in VARIANT.
# Each RFID test file ends with test_every_chip_variant(), which runs the file's other tests again under
# each variant whose behaviour differs from the default (the file's own run is the default variant).
import sys

from maus.drivers.mfrc522 import MFRC522
from maus.sim import mfrc522_emu as emu_mod
from maus.sim.mfrc522_emu import MFRC522Emu, Pin

VARIANT = emu_mod.DEFAULT_VARIANT


TRACE = None  # a list: chip() makes chips that record what they send on MISO (bench_rfid compares variants)


class _Traced(MFRC522Emu):
    # What the chip does, as the bus sees it: a checksum of every byte it answers, one per chip made.
    def __init__(self, **kw):
        MFRC522Emu.__init__(self, **kw)
        self.trace = 0
        TRACE.append(self)

    def write_readinto(self, out, into):
        MFRC522Emu.write_readinto(self, out, into)
        h = self.trace
        for b in into:
            h = (h * 31 + b) & 0xFFFFFF
        self.trace = h


def chip(**kw):
    """An emulated MFRC522 of the current variant."""
    if TRACE is not None:
        return _Traced(variant=VARIANT, **kw)
    return MFRC522Emu(variant=VARIANT, **kw)


def reader(**kw):
    """(emulator, driver) with the driver initialised against the emulator (its clock, its reset pin)."""
    emu = chip(**kw)
    r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
    assert r.ok, "the driver did not bring up the %s chip" % VARIANT
    return emu, r


def settle(emu):
    """The cards on the pad lie still: a card-flutter variant's first answer no longer breaks off (for tests
    whose injected faults count answers)."""
    for t in emu.tags:
        if t.bounce:
            t.bounce = False
            t.leave_in = -1


def classic_read_answer():
    """What a MIFARE Classic says to an unauthenticated READ under the current variant."""
    from maus.drivers.mfrc522 import NAK, NO_TAG

    return NAK if emu_mod.VARIANTS[VARIANT][4] else NO_TAG


def uid(*b):
    return bytes(b)


def rd(emu, reg):
    """One register read over the emulator's SPI (datasheet 8.1.2.1)."""
    out = bytearray((0x80 | (reg << 1) & 0x7E, 0))
    into = bytearray(2)
    emu.write_readinto(out, into)
    return into[1]


def wr(emu, reg, *data):
    """A register write (a burst if several bytes) over the emulator's SPI (8.1.2.2)."""
    emu.write(bytes(((reg << 1) & 0x7E,) + data))


class VClock:
    """A virtual clock for buses without an emulator: the driver's sleeps cost no real time."""

    def __init__(self):
        self.us = 0

    def sleep_us(self, us):
        self.us += us


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


def variants_to_run():
    """Every variant whose behaviour differs from the default's (the default is the files' own run)."""
    base = emu_mod.VARIANTS[emu_mod.DEFAULT_VARIANT]
    return [v for v in sorted(emu_mod.VARIANTS) if emu_mod.VARIANTS[v] != base]


def run_variant(ns, variant, skip=(), only=None):
    """Run the test functions of a module namespace under one chip variant. A test that builds no
    emulator does not depend on the variant and is left out (its name goes in skip, if a list).
    Returns [(test, error text)] of the failures."""
    global VARIANT
    failed = []
    names = sorted(k for k in ns if k.startswith("test_") and k != "test_every_chip_variant")
    old = VARIANT
    VARIANT = variant
    try:
        for name in names:
            if name in skip or (only is not None and name not in only):
                continue
            made = MFRC522Emu.made
            try:
                ns[name]()
            except Exception as e:  # noqa: BLE001 - every failure is collected
                failed.append((name, "%s: %s" % (type(e).__name__, e)))
            if MFRC522Emu.made == made and isinstance(skip, list):
                skip.append(name)  # no chip in it: the variant cannot change its result
    finally:
        VARIANT = old
    return failed


def every_variant(ns):
    """The body of each RFID file's test_every_chip_variant: the file's tests under every variant."""
    skip = []
    bad = []
    for v in variants_to_run():
        for name, err in run_variant(ns, v, skip):
            bad.append("%s under %s: %s" % (name, v, err))
    assert not bad, "\n".join(bad)


def _main():
    # Run the RFID suite under one variant (or all) in this interpreter: `python rfidkit.py [variant]`.
    import test_mfrc522
    import test_ndef
    import test_rfid
    import test_rfid_recovery

    names = sys.argv[1:] or sorted(emu_mod.VARIANTS)
    for v in names:
        bad = []
        for mod in (test_mfrc522, test_ndef, test_rfid, test_rfid_recovery):
            bad += run_variant(mod.__dict__, v)
        print("VARIANT", v, "failed", len(bad))
        for name, err in bad:
            print("  ", name, err)


if __name__ == "__main__":
    _main()
