# MFRC522 driver against the register-level emulator (and against random and broken buses).
import rfidkit
from rfidkit import (  # first: the emulator is the biggest compile (96 KB heap)
    BrokenSPI,
    FuzzSPI,
    Recorder,
    VClock,
    chip,
    classic_read_answer,
    reader,
    uid,
)

# isort: split
import gc
import sys

from fwtest import Rand, raises
from maus.drivers import mfrc522, mfrc522_setup
from maus.drivers.mfrc522 import ERROR, MFRC522, NAK, NO_TAG, OK
from maus.drivers.tagwrite import write
from maus.sim import mfrc522_emu as emu_mod
from maus.sim.mfrc522_emu import NTAG, MifareClassic1K, Pin, Tag

MPY = sys.implementation.name == "micropython"
U7 = uid(0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6)
U7B = uid(0x04, 0xA1, 0xB3, 0xC3, 0xD4, 0xE5, 0xF7)
U4 = uid(0xDE, 0xAD, 0xBE, 0xEF)


def test_version_and_init():
    emu, r = reader()
    assert r.version() == emu.version  # any version the chip answers: a clone's too, or one no list has
    assert r.self_test()
    assert emu.regs[emu_mod.TModeReg] & 0x80  # TAuto
    assert emu.regs[emu_mod.TxControlReg] & 0x03 == 0x03  # antenna on


def test_gain_setting():
    emu, r = reader()
    mfrc522_setup.set_gain(r, 7)
    assert emu.regs[emu_mod.RFCfgReg] == 0x70
    mfrc522_setup.set_gain(r, 99)
    assert r.gain == 7
    mfrc522_setup.set_gain(r, -3)
    assert emu.regs[emu_mod.RFCfgReg] == 0x00


def test_a_card_above_the_pad_is_heard_with_the_gain_up():
    # A card a few mm above the pad (half the strength of one lying on it): the driver's 48 dB hear it in any
    # field; at 33 dB (the chip's reset gain) a weak field (field-weak: a detuned antenna) loses it.
    emu, r = reader()
    t = NTAG(U7)
    t.strength = 50
    emu.add_tag(t)
    rfidkit.settle(emu)
    assert r.gain == 7 and r.scan(Recorder().cb) == 1
    mfrc522_setup.set_gain(r, 4)
    heard = 50 * min(100, emu.field.field_pct) // 100 >= emu.field.min_amp
    assert r.scan(Recorder().cb) == (1 if heard else 0)
    assert heard == (emu.field.field_pct == 100)


def test_empty_poll_ends_on_chip_timer():
    emu, r = reader()
    t0 = emu.elapsed_ns()
    b0 = emu.spi_bytes
    assert r.request(wake=True) == NO_TAG
    waited_us = (emu.elapsed_ns() - t0) // 1000
    assert 1000 <= waited_us < 1400, waited_us  # the 1 ms TReload window plus bus traffic
    assert emu.spi_bytes - b0 < 1800
    assert r.errors == 0


def test_four_byte_uid_classic():
    emu, r = reader()
    emu.add_tag(MifareClassic1K(U4))
    rec = Recorder()
    assert r.scan(rec.cb) == 1
    assert rec.cards == [("deadbeef", 0x08)]
    assert r.atqa == 0x0004


def test_seven_byte_uid_ntag():
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    rec = Recorder()
    assert r.scan(rec.cb) == 1
    assert rec.cards == [("04a1b2c3d4e5f6", 0x00)]
    assert r.atqa == 0x0044
    # Halted after the scan; WUPA wakes it for the next one.
    assert emu.tags[0].state == emu_mod.HALT
    assert r.request() == NO_TAG  # REQA: halted tags stay silent
    assert r.scan(rec.cb) == 1


def test_ten_byte_uid():
    emu, r = reader()
    u10 = uid(0x04, 1, 2, 3, 4, 5, 6, 7, 8, 9)
    t = Tag(u10)
    assert t.atqa == 0x0084  # UID size: triple
    emu.add_tag(t)
    rec = Recorder()
    assert r.scan(rec.cb) == 1
    assert rec.cards == [("04010203040506070809", 0x00)]


def test_two_ntags_both_found():
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    emu.add_tag(NTAG(U7B))
    rec = Recorder()
    assert r.scan(rec.cb) == 2
    assert sorted(rec.cards) == [("04a1b2c3d4e5f6", 0), ("04a1b3c3d4e5f7", 0)]
    rec.cards = []
    assert r.scan(rec.cb) == 2  # and again from HALT
    assert r.errors == 0


def test_mixed_tags_and_shared_first_level():
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    emu.add_tag(NTAG(uid(0x04, 0xA1, 0xB2, 0x10, 0x20, 0x30, 0x40)))  # same CL1 as U7: collides at CL2
    emu.add_tag(MifareClassic1K(U4))
    rec = Recorder()
    assert r.scan(rec.cb) == 3
    assert sorted(rec.cards) == [("04a1b210203040", 0), ("04a1b2c3d4e5f6", 0), ("deadbeef", 8)]


def test_more_tags_than_slots():
    emu, r = reader()
    for k in range(6):
        emu.add_tag(NTAG(uid(0x04, k, 0x11, 0x22, 0x33, 0x44, k)))
    rec = Recorder()
    assert r.scan(rec.cb) == 4
    assert len(rec.cards) == 4


def test_ntag_read_write_verify():
    emu, r = reader()
    tag = NTAG(U7, 215)
    emu.add_tag(tag)
    done = []

    def use(u, n, sak):
        assert r.read(3) == OK
        assert bytes(r.page[0:4]) == bytes((0xE1, 0x10, 0x3E, 0x00))  # CC of an NTAG215
        assert write(r, 4, b"\x03\x02\xd1\x01") == OK
        assert write(r, 5, b"abcdXXXX", 0) == OK
        assert r.read(4) == OK
        done.append(bytes(r.page[0:8]))
        assert write(r, 0, b"\x00\x00\x00\x00") == NAK  # UID pages are read-only
        assert r.read(4) == NO_TAG  # after a NAK the tag has left the session

    assert r.scan(use) == 1
    assert done == [b"\x03\x02\xd1\x01abcd"]
    assert tag.mem[16:24] == b"\x03\x02\xd1\x01abcd"
    assert r.scan(lambda u, n, sak: done.append(r.read(200))) == 1
    assert done[1] == NAK  # beyond the memory


def test_read_rolls_over_at_end():
    emu, r = reader()
    tag = NTAG(U7)  # 45 pages
    emu.add_tag(tag)
    got = []

    def use(u, n, sak):
        assert r.read(44) == OK
        got.append(bytes(r.page))

    r.scan(use)
    assert got == [bytes(tag.mem[176:180]) + bytes(tag.mem[0:12])]


def test_classic_read_is_refused_cleanly():
    emu, r = reader()
    emu.add_tag(MifareClassic1K(U4))
    st = []
    r.scan(lambda u, n, sak: st.append(r.read(4)))
    assert st == [classic_read_answer()]  # a NAK, or silence: the chip variant says which


def _faulted_scan(kind, n=1):
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    rfidkit.settle(emu)  # the faults count answers
    emu.inject(kind, n)
    rec = Recorder()
    found = r.scan(rec.cb)
    return emu, r, found, rec


def test_fault_collision_is_no_card_this_time():
    emu, r, found, rec = _faulted_scan(emu_mod.FAULT_COLLISION)
    assert found == 1  # a collision in the ATQA only says "several tags": harmless
    emu, r, found, rec = _faulted_scan(emu_mod.FAULT_COLLISION, 2)
    assert found == 0 and rec.cards == []  # anticollision with no valid position: no card now
    assert r.scan(Recorder().cb) == 1  # next poll is fine


def test_fault_crc_error_is_rejected():
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    res = []

    def use(u, n, sak):
        emu.inject(emu_mod.FAULT_CRC)
        res.append(r.read(4))  # one corrupted answer: asked for again
        emu.inject(emu_mod.FAULT_CRC, 2)
        res.append(r.read(4))  # corrupted twice: rejected
        res.append(r.read(4))

    assert r.scan(use) == 1
    assert res == [OK, ERROR, OK]  # the tag is still selected after a corrupted answer


def _fault_during_read(kind):
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    res = []

    def use(u, n, sak):
        emu.inject(kind, 2)  # the READ and its retry
        res.append(r.read(4))

    assert r.scan(use) == 1
    assert res[0] in (ERROR, NO_TAG), (kind, res)
    # Faults during the anticollision itself: no card this time, never an exception.
    for n in range(1, 8):
        emu.inject(kind, n)
        assert r.scan(Recorder().cb) in (0, 1)
        emu.inject(0, 0)


def test_fault_timeout_and_truncation():
    _fault_during_read(emu_mod.FAULT_TIMEOUT)
    _fault_during_read(emu_mod.FAULT_TRUNCATE)


def test_fault_tag_removed_mid_read():
    emu, r = reader()
    tag = NTAG(U7)
    emu.add_tag(tag)
    res = []

    def use(u, n, sak):
        emu.inject(emu_mod.FAULT_REMOVE)
        res.append(r.read(4))

    assert r.scan(use) == 1
    assert res == [NO_TAG]
    assert r.scan(Recorder().cb) == 0
    emu.add_tag(tag)  # back on the pad
    assert r.scan(Recorder().cb) == 1


def test_fault_write_nak_and_lost():
    emu, r = reader()
    tag = NTAG(U7)
    emu.add_tag(tag)
    res = []

    def nak(u, n, sak):
        emu.inject(emu_mod.FAULT_WRITE_NAK)
        res.append(write(r, 6, b"wxyz"))
        res.append(write(r, 6, b"wxyz"))  # the NAK ended the session

    def lost(u, n, sak):
        emu.inject(emu_mod.FAULT_WRITE_LOST)
        res.append(write(r, 6, b"wxyz"))
        r.read(6)
        res.append(bytes(r.page[0:4]))

    r.scan(nak)
    r.scan(lost)
    assert res == [NAK, NO_TAG, OK, b"\x00\x00\x00\x00"]


def _fault_at(kind, skip):
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    emu.add_tag(MifareClassic1K(U4))
    for _ in range(skip):
        r.request(True)
    emu.inject(kind, 1 + skip % 3)

    def use(u, n, sak):
        r.read(4)
        write(r, 8, b"abcd")

    assert 0 <= r.scan(use) <= 2


def test_every_fault_at_every_frame_is_clean():
    # Each fault kind spoiling answers at several points of a scan that also reads and writes.
    for kind in range(1, 8):
        for skip in range(12):
            _fault_at(kind, skip)


def test_broken_bus_never_raises():
    r = MFRC522(BrokenSPI(), Pin(), Pin(), VClock().sleep_us)
    assert not r.ok
    assert r.version() == 0
    assert r.scan(Recorder().cb) == 0
    assert r.read(4) == ERROR
    assert write(r, 4, b"abcd") == ERROR
    assert r.request() == ERROR
    r.halt()
    mfrc522_setup.antenna(r, False)
    mfrc522_setup.set_gain(r, 3)


def test_no_chip_on_the_bus():
    class Silent:
        def write(self, buf):
            pass

        def write_readinto(self, out, into):
            for i in range(len(into)):
                into[i] = 0

    clock = VClock()
    r = MFRC522(Silent(), Pin(), Pin(), clock.sleep_us)
    assert not r.ok
    assert 150000 <= clock.us < 200000  # waited the bounded start-up time (datasheet 8.8.2 + margin), no longer
    assert r.scan(Recorder().cb) == 0


def test_fuzz_random_register_answers():
    # 10,000 operations against a chip answering every register read with a random byte (random
    # IRQ flags, error bits, FIFO levels and contents, collision positions, CRC results).
    # Under MicroPython the same 10,000 run; they are cheap because the random bus answers fast.
    rand = Rand(2026)
    bus = FuzzSPI(rand)
    r = MFRC522(bus, Pin(), Pin(), VClock().sleep_us)
    rec = Recorder()
    statuses = (OK, NO_TAG, ERROR, mfrc522.COLLISION, NAK)
    for i in range(10000):
        op = i % 5
        if op == 0:
            n = r.scan(rec.cb)
            assert 0 <= n <= 4
        elif op == 1:
            assert r.read(rand.next() & 0xFF) in statuses
        elif op == 2:
            assert write(r, rand.next() & 0xFF, b"\x01\x02\x03\x04") in statuses
        elif op == 3:
            assert r.request(i & 8 != 0) in statuses
        else:
            r.halt()
    assert bus.transfers > 100000
    for u, _ in rec.cards:
        assert len(u) in (8, 14, 20)


def test_host_time_per_call_is_modelled():
    # The same scan with a host that spends 20 us per SPI call (MicroPython on an ESP32) takes longer
    # by about that much per call, and needs no more register reads while it waits.
    times = []
    reads = []
    for per_call in (0, 20000):
        emu, r = reader()
        emu.ns_per_call = per_call
        emu.add_tag(NTAG(U7))
        r.scan(Recorder().cb)  # (the first scan after set-up settles the tag)
        t0 = emu.elapsed_ns()
        b0 = emu.spi_bytes
        w0 = emu.wait_reads
        assert r.scan(Recorder().cb) == 1
        times.append(emu.elapsed_ns() - t0)
        reads.append(emu.wait_reads - w0)
        calls = (emu.spi_bytes - b0) // 3  # transfers of 2-3 bytes mostly
    assert times[1] - times[0] > calls * 20000 // 2
    assert reads[1] <= reads[0]


def _spi_read(emu, reg):
    out = bytearray((0x80 | (reg << 1) & 0x7E, 0))
    into = bytearray(2)
    emu.write_readinto(out, into)
    return into[1]


def _spi_write(emu, reg, *data):
    emu.write(bytes(((reg << 1) & 0x7E,) + data))


def test_emulator_spi_framing_and_crc_coprocessor():
    emu = chip()
    assert _spi_read(emu, emu_mod.VersionReg) == emu.version
    assert _spi_read(emu, emu_mod.CommandReg) == 0x20  # reset value: RcvOff
    # A burst write puts every data byte into the FIFO; FIFOLevelReg counts them.
    _spi_write(emu, emu_mod.FIFODataReg, 0x12, 0x34)
    assert _spi_read(emu, emu_mod.FIFOLevelReg) == 2
    # CalcCRC with ModeReg CRCPreset 01 (0x6363): ISO 14443-3 annex B example 12 34 -> 26 CF.
    _spi_write(emu, emu_mod.ModeReg, 0x3D)
    _spi_write(emu, emu_mod.CommandReg, emu_mod.CMD_CALC_CRC)
    emu.sleep_us(100)  # the coprocessor's time
    assert _spi_read(emu, emu_mod.DivIrqReg) & 0x04  # CRCIRq
    assert _spi_read(emu, emu_mod.CRCResultRegL) == 0x26
    assert _spi_read(emu, emu_mod.CRCResultRegH) == 0xCF
    assert _spi_read(emu, emu_mod.FIFOLevelReg) == 0  # the coprocessor took the bytes
    # A read burst: each address byte clocks out the previous register's value.
    _spi_write(emu, emu_mod.CommandReg, emu_mod.CMD_IDLE)
    _spi_write(emu, emu_mod.FIFODataReg, 7, 8, 9)
    a = 0x80 | (emu_mod.FIFODataReg << 1)
    into = bytearray(4)
    emu.write_readinto(bytes((a, a, a, 0)), into)
    assert into[1:] == b"\x07\x08\x09"
    # ComIrqReg: Set1 = 0 clears the marked bits, Set1 = 1 sets them.
    _spi_write(emu, emu_mod.ComIrqReg, 0x7F)
    assert _spi_read(emu, emu_mod.ComIrqReg) == 0
    _spi_write(emu, emu_mod.ComIrqReg, 0x81)
    assert _spi_read(emu, emu_mod.ComIrqReg) == 0x01


def test_emulator_timer_fires_without_answer():
    emu = chip()
    emu.ns_per_call = 0  # bus time only: the loop below samples the timer every 2 bytes
    _spi_write(emu, emu_mod.TModeReg, 0x80)  # TAuto
    _spi_write(emu, emu_mod.TPrescalerReg, 0x43)
    _spi_write(emu, emu_mod.TReloadRegL, 100)  # ~1 ms
    _spi_write(emu, emu_mod.TxControlReg, 0x83)  # antenna on, no tag
    _spi_write(emu, emu_mod.FIFODataReg, 0x26)
    _spi_write(emu, emu_mod.CommandReg, emu_mod.CMD_TRANSCEIVE)
    _spi_write(emu, emu_mod.BitFramingReg, 0x87)  # StartSend, 7 bits: REQA
    t0 = emu.elapsed_ns()
    while not _spi_read(emu, emu_mod.ComIrqReg) & 0x01:
        pass
    assert 1000000 <= emu.elapsed_ns() - t0 < 1100000  # (2*67+1)*(100+1)/13.56 MHz = 1.006 ms after the frame
    assert _spi_read(emu, emu_mod.FIFOLevelReg) == 0


def test_every_chip_variant():
    rfidkit.every_variant(globals())


class _HeapProbe:
    """The bus to the emulator that notes the heap in use as each transfer reaches it."""

    def __init__(self, emu):
        self.emu = emu
        self.at = -1

    def write(self, buf):
        self.at = gc.mem_alloc()
        self.emu.write(buf)

    def write_readinto(self, out, into):
        self.at = gc.mem_alloc()
        self.emu.write_readinto(out, into)


def test_a_transfer_keeps_its_frame_off_the_heap():
    # A bytecode frame over 44 bytes (py/objfun.c VM_MAX_STATE_ON_STACK) is taken from the heap and freed
    # at every call, on the ESP32 too; under heap_lock it silently falls back to the C stack, so the heap in
    # use is compared instead, as the transfer reaches the bus.
    if not MPY:
        return  # CPython has no such frames
    emu, r = reader()
    probe = _HeapProbe(emu)
    r._spi = probe
    reg = bytearray((0x80 | emu_mod.VersionReg << 1, 0))
    into = bytearray(2)
    idle = bytes((emu_mod.CommandReg << 1, 0))
    for _ in range(2):  # a write, then a read
        gc.collect()
        before = gc.mem_alloc()
        r._xfer(reg, into)
        assert probe.at == before, probe.at - before
        assert into[1] == emu.version
        before = gc.mem_alloc()
        r._xfer(idle, None)
        assert probe.at == before, probe.at - before
    # and CS still goes high when the bus fails
    r._spi = BrokenSPI()
    assert raises(OSError, r._xfer, reg, into)
    assert r._cs.value() == 1
