# Presence tracker and card writer over the emulated reader.
import rfidkit
from rfidkit import chip, reader, uid  # first: the emulator is the biggest compile (96 KB heap)

# isort: split
import micropython
from maus.cards import file as cardfile
from maus.cards import ident as cards
from maus.cards import reader as rfid
from maus.sim import mfrc522_emu as emu_mod
from maus.sim.mfrc522_emu import NTAG, MifareClassic1K

U7 = uid(0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66)


class Pad:
    """An emulated reader with a Presence tracker and a clock stepping 100 ms per poll."""

    def __init__(self, enrolment=None):
        self.emu, self.r = reader()
        self.p = rfid.Presence(self.r, enrolment)
        self.t = 0

    def poll(self):
        self.t += 100
        return self.p.poll(self.t)

    def polls(self, n):
        out = []
        for _ in range(n):
            out.extend(self.poll())
        return out


class FakeEnrol:
    def __init__(self, m):
        self.m = m

    def get(self, h):
        return self.m.get(h)


def test_one_tap_one_remove():
    pad = Pad()
    assert pad.poll() == ()
    tag = pad.emu.make_tag("mg/mouse/07")
    pad.emu.add_tag(tag)
    h = rfid.uid_hex(tag.uid)
    assert pad.poll() == [("tap", "mg/mouse/07", h)]
    assert pad.polls(10) == []  # held: no new taps
    assert pad.p.present() == [("mg/mouse/07", h)]
    pad.emu.remove_tag(tag)
    assert pad.poll() == ()  # one miss is not a removal
    assert pad.poll() == ()
    assert pad.poll() == [("remove", "mg/mouse/07", h)]
    assert pad.polls(5) == []
    assert pad.p.present() == []
    assert pad.p.faults == 0


def test_identity_read_once_per_arrival():
    pad = Pad()
    tag = pad.emu.make_tag("mim/card/12")
    pad.emu.add_tag(tag)
    pad.poll()
    frames = pad.emu.frames
    pad.polls(5)
    per_poll = (pad.emu.frames - frames) // 5
    # WUPA, AC+SELECT at two cascade levels, HLTA, and a REQA for a card the held one may mask:
    # no GET_VERSION or READ while held
    assert per_poll == 7
    pad.emu.remove_tag(tag)
    pad.polls(3)
    pad.emu.add_tag(tag)
    assert pad.poll() == [("tap", "mim/card/12", rfid.uid_hex(tag.uid))]  # read again on arrival


def test_single_missed_reads_ride_over():
    pad = Pad()
    pad.emu.add_tag(pad.emu.make_tag("mg/cheese/3"))
    assert len(pad.poll()) == 1
    for _ in range(5):
        pad.emu.inject(emu_mod.FAULT_TIMEOUT)  # the WUPA answer is lost: a missed poll
        assert pad.poll() == ()
        assert pad.poll() == ()
    assert pad.p.present()[0][0] == "mg/cheese/3"


def test_two_cards_both_reported():
    pad = Pad()
    a = pad.emu.make_tag("mg/mouse/01")
    b = pad.emu.make_tag("mg/clothing/31")
    pad.emu.add_tag(a)
    pad.emu.add_tag(b)
    ev = pad.poll()
    assert sorted(e[1] for e in ev) == ["mg/clothing/31", "mg/mouse/01"]
    assert all(e[0] == "tap" for e in ev)
    assert pad.polls(4) == []
    pad.emu.remove_tag(a)
    assert pad.polls(4) == [("remove", "mg/mouse/01", rfid.uid_hex(a.uid))]
    assert [x[0] for x in pad.p.present()] == ["mg/clothing/31"]


def test_pause_and_resume():
    pad = Pad()
    pad.p.pause()
    tag = pad.emu.make_tag("mg/mouse/02")
    pad.emu.add_tag(tag)
    frames = pad.emu.frames
    assert pad.polls(5) == []
    assert pad.emu.frames == frames  # no RF traffic during a race window
    pad.p.resume()
    assert [e[0] for e in pad.poll()] == ["tap"]


def test_poll_interval():
    pad = Pad()
    pad.p.interval_ms = 200
    assert pad.p.poll(1000) == ()
    polls = pad.p.polls
    pad.p.poll(1100)
    assert pad.p.polls == polls  # not due yet
    pad.p.poll(1200)
    assert pad.p.polls == polls + 1


def test_unknown_garbage_and_classic_cards():
    pad = Pad(FakeEnrol({"DEADBEEF": "mg/mouse/30"}))
    blank = NTAG(U7)  # as shipped: empty NDEF message
    pad.emu.add_tag(blank)
    assert pad.poll() == [("tap", None, "04112233445566")]
    garbage = NTAG(uid(0x04, 9, 9, 9, 9, 9, 9))
    garbage.garbage(7)  # looks like an NDEF TLV, is not
    pad.emu.add_tag(garbage)
    assert pad.poll() == [("tap", None, "04090909090909")]
    pad.emu.add_tag(MifareClassic1K(uid(0xDE, 0xAD, 0xBE, 0xEF)))
    assert pad.poll() == [("tap", "mg/mouse/30", "DEADBEEF")]  # by enrolment
    assert pad.p.faults == 0


def test_unreadable_card_reported_after_retries():
    pad = Pad()
    tag = pad.emu.make_tag("mg/mouse/05")
    pad.emu.add_tag(tag)
    pad.emu.inject(emu_mod.FAULT_CRC, 100)  # every answer corrupted: the ATQA is harmless, the rest fails
    assert pad.polls(10) == []
    pad.emu.inject(0, 0)
    tag2 = NTAG(U7)
    pad.emu.remove_tag(tag)
    pad.emu.add_tag(tag2)
    first = pad.poll()
    assert first == [("tap", None, "04112233445566")]
    # Reads fail on arrival: retried on later polls, then reported without identity.
    pad2 = Pad()
    t = pad2.emu.make_tag("mg/mouse/06")
    pad2.emu.add_tag(t)
    orig = pad2.r.read
    pad2.r.read = lambda page: 2  # ERROR on every READ
    assert pad2.poll() == ()
    assert pad2.poll() == ()
    assert pad2.poll() == [("tap", None, rfid.uid_hex(t.uid))]
    pad2.r.read = orig


def test_removed_while_reading():
    pad = Pad()
    tag = pad.emu.make_tag("mg/mouse/09")
    pad.emu.add_tag(tag)
    pad.emu.inject(emu_mod.FAULT_REMOVE)
    assert pad.poll() == ()  # gone before its identity was read: no tap
    assert pad.polls(5) == []  # and no remove for a card never tapped
    pad.emu.add_tag(tag)
    assert pad.poll() == [("tap", "mg/mouse/09", rfid.uid_hex(tag.uid))]


def test_poll_allocates_nothing():
    pad = Pad()
    pad.polls(2)  # warm-up: first-use views
    p = pad.p
    micropython.heap_lock()
    try:
        a = pad.poll()
        b = pad.poll()
    finally:
        micropython.heap_unlock()
    assert a == () and b == ()
    tag = pad.emu.make_tag("mg/mouse/07")
    pad.emu.add_tag(tag)
    assert len(pad.poll()) == 1
    pad.polls(1)
    micropython.heap_lock()
    try:
        a = pad.poll()
        b = pad.poll()
        c = pad.poll()
    finally:
        micropython.heap_unlock()
    assert a == () and b == () and c == ()
    assert p.faults == 0  # a MemoryError inside the poll would have been counted here
    assert pad.r.errors == 0
    assert p.present()[0][0] == "mg/mouse/07"


class Plug:
    """A bus to the emulated chip that can be unplugged: then MISO reads 0."""

    def __init__(self, chip):
        self.chip = chip
        self.plugged = False
        self.transfers = 0

    def write(self, buf):
        self.transfers += 1
        if self.plugged:
            self.chip.write(buf)

    def write_readinto(self, out, into):
        self.transfers += 1
        if self.plugged:
            self.chip.write_readinto(out, into)
        else:
            for i in range(len(into)):
                into[i] = 0


def test_missing_reader_is_retried_not_hammered():
    from maus.drivers.mfrc522 import MFRC522
    from maus.sim.mfrc522_emu import Pin

    emu = chip()
    bus = Plug(emu)
    r = MFRC522(bus, Pin(), Pin(emu=emu), emu.sleep_us)
    assert not r.ok
    p = rfid.Presence(r)
    emu.put(emu.make_tag("mg/mouse/11"))
    before = bus.transfers
    for t in range(0, 2000, 100):
        assert p.poll(t) == ()
    assert bus.transfers - before < 60  # one set-up attempt, no scans
    bus.plugged = True
    assert p.poll(2000) == ()  # set up again: the chip answers now
    assert r.ok
    assert p.poll(2100)[0][:2] == ("tap", "mg/mouse/11")


def test_garbage_ndef_never_an_identity():
    for seed in range(1, 40):
        pad = Pad()
        tag = NTAG(uid(0x04, seed, 1, 2, 3, 4, 5))
        tag.garbage(seed)
        pad.emu.add_tag(tag)
        ev = pad.poll()
        assert len(ev) == 1 and ev[0][1] is None, (seed, ev)
        assert pad.p.faults == 0


def test_every_chip_variant():
    rfidkit.every_variant(globals())


def test_a_simulated_card_holds_what_the_card_writer_writes():
    # The simulator lays a card's record out itself (a card is no part of the unit's heap): byte for byte the
    # card writer's, for identities in any accepted form, a game card, and a text that is no identity.
    from maus.drivers import ndef_write
    from maus.sim.rf_field import make_tag

    for ident in ("mg/mouse/7", "mausbox:mim/card/12", "MG/Cheese/3", "game/mg", "Maus 7", "x" * 40):
        text = cardfile.to_text(ident) if cards.normalise(ident) else ident
        data = ndef_write.tlv(ndef_write.text_record(text))
        for model in (213, 216):
            tag = make_tag(ident, model)
            assert bytes(tag.mem[16:16 + len(data)]) == data, (ident, model)


def test_a_card_whose_text_the_host_worked_out_loads_nothing():
    # A scenario's tap carries "card", the text its card holds (mausbox.sim.run.scenario_text): making that card
    # in a game must not touch the firmware's card rules, whose module load the board never makes (a pull at a
    # game's crowded moment ran out of memory in the simulator's own import of it: bench/bench_pull_peak.py).
    import sys

    from maus.drivers import ndef_write
    from maus.sim.rf_field import card_text, make_tag

    class NoRules:
        def __getattr__(self, name):
            raise AssertionError("the card's rules used: " + name)

    for ident in ("mg/mouse/7", "MG/Cheese/3", "game/mg", "Maus 7"):
        text = card_text(ident)
        assert text == (cardfile.to_text(ident) if cards.normalise(ident) else ident), (ident, text)
        data = ndef_write.tlv(ndef_write.text_record(text))
        was = sys.modules.get("maus.cards.ident")
        sys.modules["maus.cards.ident"] = NoRules()
        try:
            tag = make_tag(ident, 213, text)
        finally:
            if was is None:
                del sys.modules["maus.cards.ident"]
            else:
                sys.modules["maus.cards.ident"] = was
        assert bytes(tag.mem[16:16 + len(data)]) == data, ident
