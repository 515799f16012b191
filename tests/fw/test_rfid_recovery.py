# After a broken exchange the next poll still finds the card: a tag left READY or ACTIVE treats the
# next WUPA as an error and falls back to IDLE/HALT without answering (NTAG21x datasheet 8.4), so
# the scanner settles the tags with HLTA first. Emulator tag states, driver and Presence together.
import rfidkit
from rfidkit import reader, uid  # first: the emulator is the biggest compile (96 KB heap)

# isort: split
from maus.cards import reader as rfid
from maus.drivers.mfrc522 import NO_TAG, OK
from maus.sim import mfrc522_emu as emu_mod
from maus.sim.mfrc522_emu import NTAG

U7 = uid(0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66)


def test_tag_in_ready_takes_wupa_for_an_error():
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    assert r.request(True) == OK  # IDLE -> READY
    assert r.request(True) == NO_TAG  # READY: "any other data" -> IDLE, silent
    assert r.request(True) == OK
    assert r.request(False) == NO_TAG  # READY -> IDLE again
    assert r.request(False) == OK  # REQA wakes an IDLE tag


def test_halted_tag_falls_back_to_halt():
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    assert r.scan(lambda u, n, s: None) == 1  # selected, then HLTA
    assert r.request(False) == NO_TAG  # REQA does not wake a HALT tag
    assert r.request(True) == OK  # READY* (woken from HALT)
    assert r.request(True) == NO_TAG  # error in READY*: back to HALT, not IDLE
    assert r.request(False) == NO_TAG
    assert r.request(True) == OK


def test_lost_answer_next_scan_finds_the_tag():
    emu, r = reader()
    emu.add_tag(NTAG(U7))
    cb = lambda u, n, s: None  # noqa: E731
    assert r.scan(cb) == 1
    for _ in range(3):
        emu.inject(emu_mod.FAULT_TIMEOUT)  # the ATQA is lost: the tag is READY, the reader saw nothing
        assert r.scan(cb) == 0
        assert r.scan(cb) == 1


def _pending(emu):
    f = emu.field
    return f.fault_n if f.fault else 0


def test_aborted_scan_next_scan_finds_the_tag():
    # Every scan that meets no fault finds the tag, whatever the scan before it broke off.
    cb = lambda u, n, s: None  # noqa: E731
    for kind in (emu_mod.FAULT_TRUNCATE, emu_mod.FAULT_COLLISION, emu_mod.FAULT_CRC, emu_mod.FAULT_TIMEOUT):
        for n in ((1, 2, 3) if kind == emu_mod.FAULT_TIMEOUT else (1, 2, 3, 4, 5, 6)):
            # lost answers look like an empty pad: the scanner settles for 3 scans after the last
            # answer, as long as Presence keeps a silent card (miss_limit)
            emu, r = reader()
            emu.add_tag(NTAG(U7))
            assert r.scan(cb) == 1
            emu.inject(kind, n)  # spoils the next n answers: scans stop at different frames
            clean = 0
            for _ in range(n + 3):
                before = _pending(emu)
                found = r.scan(cb)
                if _pending(emu) == before:
                    assert found == 1, (kind, n)
                    clean += 1
            assert clean >= 3 and _pending(emu) == 0
            emu.inject(kind, 0)  # cleared: no answer is spoilt
            assert r.scan(cb) == 1 and r.scan(cb) == 1


def test_held_card_rides_over_faults_two_polls_apart():
    emu, r = reader()
    p = rfid.Presence(r)
    tag = emu.make_tag("mg/mouse/07")
    emu.add_tag(tag)
    t = 100
    ev = p.poll(t)
    assert [e[0] for e in ev] == ["tap"]
    for k in range(12):
        if k % 2 == 0:
            emu.inject(emu_mod.FAULT_TIMEOUT if k % 4 else emu_mod.FAULT_TRUNCATE)
        t += 100
        assert p.poll(t) == (), k
    assert p.present() == [("mg/mouse/07", rfid.uid_hex(tag.uid))]


def test_removal_still_reported_and_empty_polls_stay_one_frame():
    emu, r = reader()
    p = rfid.Presence(r)
    tag = emu.make_tag("mg/cheese/3")
    emu.add_tag(tag)
    t = 100
    p.poll(t)
    emu.remove_tag(tag)
    events = []
    for _ in range(3):
        t += 100
        events.extend(p.poll(t))
    assert events == [("remove", "mg/cheese/3", rfid.uid_hex(tag.uid))]
    t += 100
    p.poll(t)  # the last of the 3 scans that start with HLTA after the card went silent
    f0 = emu.frames
    for _ in range(5):
        t += 100
        p.poll(t)
    assert emu.frames - f0 == 5  # settled: an empty poll is one WUPA again, no HLTA


def test_every_chip_variant():
    rfidkit.every_variant(globals())
