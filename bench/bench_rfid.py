"""RFID: what one card identification and one empty poll cost, on the bus and on the air; and the
RFID test suite under every emulated chip variant.

The driver runs against the register-level emulator, which counts every SPI byte and keeps virtual
time: 8 clocks per SPI byte at the SPI clock (4 MHz, the default, unless named), 20 us of host time per
SPI transfer (MicroPython on an ESP32), and ISO 14443-A frame times at 106 kbit/s (128/fc per bit, a
parity bit per byte, SOF/EOF, 1172/fc frame delay before each tag answer). Figures:
- variants / variants_passed: the distinct chip variants of maus.sim.mfrc522_emu.VARIANTS (two whose chip
  answers every test's bus alike count once, and are named `alike`), and how many of them the whole RFID
  suite (tests/fw/test_rfid*.py, test_mfrc522.py, test_ndef.py) passes under, here under CPython
  (`make test` runs them under the 32-bit MicroPython as well).
- identify_us / empty_poll_us at spi_1mhz, spi_4mhz, spi_10mhz: the emulator's clock for a card's
  identification poll and for an empty poll at that SPI clock.
- spi_bytes: every byte clocked, wait-loop reads of ComIrqReg included; protocol_bytes without them
  (on a board the wait loop runs while the RF frame is on the air, its length depends on the CPU).
- bus_plus_air_us: protocol bytes at 4 MHz plus the RF time of the frames actually sent.
- est_us: the emulator's clock for the whole operation: the same, plus the chip timer's wait where
  nothing answers (an empty poll is mostly its 1 ms answer window).
- rf_lower_bound_us: the frames no reader can avoid (WUPA, anticollision and SELECT at two cascade
  levels, READs from page 4 for the identity's TLV, HLTA), with nothing else.
- measured_us: wall time per poll on the MicroPython unix port, driver + emulator in Python (the
  emulator's per-byte work dominates; an ESP32 talking to a real chip does not pay it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox.mpbuild import micropython_binary  # noqa: E402
from mausbox.mpshim import install  # noqa: E402

install()

from maus.cards import reader as rfid  # noqa: E402
from maus.drivers import ndef_write  # noqa: E402
from maus.drivers.mfrc522 import MFRC522  # noqa: E402
from maus.sim.mfrc522_emu import MFRC522Emu, Pin  # noqa: E402

IDENT = "mg/clothing/31"
FC_MHZ = 13.56
NS_PER_BYTE = 2000  # 4 MHz
RFID_TESTS = ("test_mfrc522", "test_ndef", "test_rfid", "test_rfid_board", "test_rfid_chip", "test_rfid_faults",
              "test_rfid_recovery")


def frame_fc(bits: int) -> int:
    return (1 + bits + bits // 8 + 1) * 128


def rf_lower_bound_us(ident: str) -> float:
    tlv = len(ndef_write.tlv(ndef_write.text_record("mausbox:" + ident)))
    reads = -(-tlv // 16)
    fdt = 1172
    fc = frame_fc(7) + fdt + frame_fc(16)  # WUPA, ATQA
    for _ in range(2):  # cascade levels 1 and 2
        fc += frame_fc(16) + fdt + frame_fc(40)  # ANTICOLLISION, UID CLn + BCC
        fc += frame_fc(72) + fdt + frame_fc(24)  # SELECT, SAK + CRC
    fc += frame_fc(8) + fdt + frame_fc(80)  # GET_VERSION, 8 bytes + CRC
    fc += reads * (frame_fc(32) + fdt + frame_fc(144))  # READ, 16 bytes + CRC
    fc += frame_fc(32)  # HLTA
    return fc / FC_MHZ


class Counter:
    def __init__(self, emu: MFRC522Emu) -> None:
        self.emu = emu
        self.mark()

    def mark(self) -> None:
        e = self.emu
        self.b, self.w, self.rf, self.t, self.f = e.spi_bytes, e.wait_reads, e.rf_fc, e.elapsed_ns(), e.frames

    def report(self, name: str) -> None:
        e = self.emu
        spi = e.spi_bytes - self.b
        proto = spi - 2 * (e.wait_reads - self.w)
        rf_us = (e.rf_fc - self.rf) / FC_MHZ
        print(f"rfid.{name}.frames: {e.frames - self.f} frames")
        print(f"rfid.{name}.spi_bytes: {spi} bytes")
        print(f"rfid.{name}.protocol_bytes: {proto} bytes")
        print(f"rfid.{name}.rf_us: {rf_us:.0f} us")
        print(f"rfid.{name}.bus_plus_air_us: {proto * NS_PER_BYTE / 1000 + rf_us:.0f} us")
        print(f"rfid.{name}.est_us: {(e.elapsed_ns() - self.t) / 1000:.0f} us")


def virtual() -> None:
    emu = MFRC522Emu()
    r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
    p = rfid.Presence(r)
    c = Counter(emu)
    assert p.poll(0) == ()
    c.report("empty_poll")
    emu.put(emu.make_tag(IDENT))
    c.mark()
    ev = p.poll(100)
    assert ev and ev[0][1] == IDENT, ev
    c.report("identify")
    print(f"rfid.identify.rf_lower_bound_us: {rf_lower_bound_us(IDENT):.0f} us")
    c.mark()
    assert p.poll(200) == ()
    c.report("held_poll")


def spi_clocks() -> None:
    # The same identification and empty poll at the SPI clocks a board file may name.
    for mhz in (1, 4, 10):
        emu = MFRC522Emu(spi_hz=mhz * 1000000)
        r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
        p = rfid.Presence(r)
        t0 = emu.elapsed_ns()
        assert p.poll(0) == ()
        empty = emu.elapsed_ns() - t0
        emu.put(emu.make_tag(IDENT))
        t0 = emu.elapsed_ns()
        ev = p.poll(100)
        assert ev and ev[0][1] == IDENT, ev
        ident = emu.elapsed_ns() - t0
        print(f"rfid.identify_us.spi_{mhz}mhz: {ident / 1000:.0f} us")
        print(f"rfid.empty_poll_us.spi_{mhz}mhz: {empty / 1000:.0f} us")


def variants() -> int:
    # The whole RFID suite under each chip variant, in this interpreter; what the chip answered on its bus in
    # each test (a checksum of every MISO byte) tells the variants apart: one alike to another is no variant.
    sys.path.insert(0, str(ROOT / "tests" / "fw"))
    import importlib

    import rfidkit
    from maus.sim import mfrc522_emu

    mods = [importlib.import_module(m) for m in RFID_TESTS]
    names = sorted(mfrc522_emu.VARIANTS)
    passed = 0
    seen: dict = {}
    for v in names:
        bad = []
        rfidkit.TRACE = []
        for m in mods:
            bad += [(m.__name__, t, e) for t, e in rfidkit.run_variant(m.__dict__, v)]
        fp = tuple(c.trace for c in rfidkit.TRACE)
        rfidkit.TRACE = None
        if fp in seen:
            print(f"rfid.variant.{v}.alike: 1 (as {seen[fp]})")
        seen.setdefault(fp, v)
        if bad:
            print(f"rfid.variant.{v}.failed: {len(bad)} tests")
            for mod, t, e in bad:
                sys.stderr.write(f"{v}: {mod}.{t}: {e}\n")
        else:
            passed += 1
    print(f"rfid.variants: {len(seen)} variants")
    print(f"rfid.variants_passed: {passed} variants")
    return 0 if passed == len(names) == len(seen) else 1


MPY_SCRIPT = r"""
import time
from maus.sim.mfrc522_emu import MFRC522Emu, Pin
from maus.drivers.mfrc522 import MFRC522
from maus.cards import reader as rfid

emu = MFRC522Emu()
r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
p = rfid.Presence(r)
p.interval_ms = 0
N = 50
t0 = time.ticks_us()
for i in range(N):
    p.poll(i)
print("rfid.empty_poll.measured_us: %d us" % (time.ticks_diff(time.ticks_us(), t0) // N))
tag = emu.make_tag("%s")
t0 = time.ticks_us()
for i in range(N):
    emu.put(tag)
    p = rfid.Presence(r)
    p.interval_ms = 0
    p.poll(0)
    emu.take(tag)
print("rfid.identify.measured_us: %%d us" %% (time.ticks_diff(time.ticks_us(), t0) // N))
emu.put(tag)
p.poll(0)
t0 = time.ticks_us()
for i in range(N):
    p.poll(i)
print("rfid.held_poll.measured_us: %%d us" %% (time.ticks_diff(time.ticks_us(), t0) // N))
""".replace('"%s"', '"' + IDENT + '"').replace("%%", "%")


def measured() -> int:
    mpy = micropython_binary()
    if mpy is None:
        print("rfid.measured.skipped: 1 flag")
        return 0
    import os
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(MPY_SCRIPT)
    try:
        env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
        proc = subprocess.run([mpy, "-X", "heapsize=256k", f.name], capture_output=True, text=True, env=env,
                              timeout=300)  # (the source compiles in this heap: more than a unit needs)
    finally:
        os.unlink(f.name)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
    return proc.returncode


if __name__ == "__main__":
    virtual()
    spi_clocks()
    rc = measured()
    raise SystemExit(variants() or rc)
