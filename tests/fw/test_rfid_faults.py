# The driver and the presence tracker against everything the chip, the cards and the bus may do:
# a slow oscillator, a reader chip that resets itself (at any point of a poll), bus bit errors, a strong
# card masking a weak one, timing skew, a card leaving at any bit of any answer, tag types.
import rfidkit
from rfidkit import Recorder, chip, reader, uid  # first: the emulator is the biggest compile

# isort: split
import sys

import micropython
from maus.cards import file as cardfile
from maus.cards import reader as rfid
from maus.drivers import ndef_write, tagtype
from maus.drivers.mfrc522 import MFRC522, OK
from maus.sim import mfrc522_emu as E
from maus.sim.mfrc522_emu import NTAG, MifareClassic1K, Pin, Ultralight

UA = uid(0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6)
UB = uid(0x04, 0xA1, 0xB3, 0xC3, 0xD4, 0xE5, 0xF7)


def _stride():
    # The sweeps below try every position under CPython with the default chip variant, every 4th under
    # MicroPython (the same code, 20 times slower), and every 23rd (another one for each variant)
    # under the other variants, so the suite stays fast. While bench_rfid compares what the variants do
    # (rfidkit.TRACE), each does the same cases.
    if rfidkit.TRACE is not None:
        return 0, 23
    if rfidkit.VARIANT == E.DEFAULT_VARIANT:
        return 0, 4 if sys.implementation.name == "micropython" else 1
    return sorted(E.VARIANTS).index(rfidkit.VARIANT) % 23, 23


class Pad:
    def __init__(self, **kw):
        self.emu, self.r = reader(**kw)
        self.p = rfid.Presence(self.r)
        self.t = 0

    def poll(self):
        self.t += 100
        return self.p.poll(self.t)

    def polls(self, n):
        out = []
        for _ in range(n):
            out.extend(self.poll())
        return out


def _taps(events):
    return [e for e in events if e[0] == "tap"]


def test_driver_waits_for_the_oscillator_and_gives_up_in_bounded_time():
    emu = chip()
    t0 = emu.elapsed_ns()
    r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
    waited = emu.elapsed_ns() - t0
    assert r.ok and emu.resets == 2  # the hard reset and the SoftReset, each waited for
    assert 2 * emu.startup_ns <= waited < 2 * emu.startup_ns + 25000000, waited
    # A crystal slower than the driver's bound (150 ms): not trusted, and no endless wait.
    emu = chip()
    emu.startup_ns = 400000000
    t0 = emu.elapsed_ns()
    r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
    assert not r.ok and emu.elapsed_ns() - t0 < 200000000
    p = rfid.Presence(r)
    emu.put(emu.make_tag("mg/mouse/03"))
    emu.startup_ns = 1000000  # (a crystal that starts in 1 ms after all)
    assert p.poll(0) == ()  # set up again (every reinit_ms while it fails)
    assert r.ok
    assert [e[:2] for e in p.poll(100)] == [("tap", "mg/mouse/03")]


def test_reader_chip_resetting_itself_is_set_up_again():
    pad = Pad()
    a = pad.emu.make_tag("mg/mouse/01")
    pad.emu.put(a)
    assert [e[1] for e in _taps(pad.poll())] == ["mg/mouse/01"]
    pad.emu.chip_reset()  # antenna off, reset values; the card on the pad lost power too
    assert pad.poll() == ()  # noticed, set up again, the held card found: no removal
    assert pad.p.reinits == 1 and pad.r.ok
    assert pad.polls(4) == []
    b = pad.emu.make_tag("mg/clothing/12")
    pad.emu.put(b)
    assert [e[:2] for e in pad.poll()] == [("tap", "mg/clothing/12")]
    assert pad.p.faults == 0
    # once more: the set-up is maus.drivers.mfrc522_setup's, loaded for it and let go again (it is no part of
    # a game's RAM); the polls after it, finding the chip as it left it, allocate nothing
    pad.emu.chip_reset()
    held = "maus.drivers.mfrc522_setup" in sys.modules
    ev = pad.poll()
    assert ("maus.drivers.mfrc522_setup" in sys.modules) == held
    assert ev == () and pad.p.reinits == 2 and len(pad.p.present()) == 2 and pad.p.faults == 0
    micropython.heap_lock()
    try:
        ev = pad.poll()
    finally:
        micropython.heap_unlock()
    assert ev == () and pad.p.reinits == 2 and len(pad.p.present()) == 2 and pad.p.faults == 0


def test_a_set_up_with_no_memory_for_its_module_is_tried_again():
    # MFRC522.init loads maus.drivers.mfrc522_setup for its moment: with no memory for it (a game's full heap),
    # the reader is "not set up" and tried again after reinit_ms; nothing is raised into the main loop
    emu = chip()
    emu.startup_ns = 400000000  # no chip answering at set-up
    r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
    p = rfid.Presence(r)
    emu.put(emu.make_tag("mg/mouse/03"))
    emu.startup_ns = 1000000
    sys.modules.pop("maus.drivers.mfrc522_setup", None)  # as in a game: not in RAM
    micropython.heap_lock()
    try:
        ev = p.poll(0)
        ok = r.ok
    finally:
        micropython.heap_unlock()
    assert ev == ()
    if sys.implementation.name == "micropython":  # (CPython has no heap to lock)
        assert not ok
        assert p.poll(100) == ()  # not yet: reinit_ms
        assert p.poll(p.reinit_ms) == () and r.ok
    assert [e[:2] for e in p.poll(p.reinit_ms + 100)] == [("tap", "mg/mouse/03")]


class ResetAt:
    """The bus to the emulated chip; the chip resets itself just before transfer number `at`."""

    def __init__(self, chip, at):
        self.chip = chip
        self.at = at
        self.n = 0

    def _tick(self):
        self.n += 1
        if self.n == self.at:
            self.chip.chip_reset()

    def write(self, buf):
        self._tick()
        self.chip.write(buf)

    def write_readinto(self, out, into):
        self._tick()
        self.chip.write_readinto(out, into)


def test_reader_chip_resetting_at_any_point_of_a_poll():
    # The identification poll of a card takes some 120 bus transfers: the chip resets before each.
    emu0 = chip()
    bus0 = ResetAt(emu0, -1)
    r0 = MFRC522(bus0, Pin(), Pin(emu=emu0), emu0.sleep_us)
    p0 = rfid.Presence(r0)
    emu0.put(emu0.make_tag("mg/mouse/21"))
    start = bus0.n
    assert len(p0.poll(0)) == 1
    transfers = bus0.n - start
    first, step = _stride()
    for k in range(first, transfers + 1, step):
        emu = chip()
        bus = ResetAt(emu, -1)
        r = MFRC522(bus, Pin(), Pin(emu=emu), emu.sleep_us)
        p = rfid.Presence(r)
        emu.put(emu.make_tag("mg/mouse/21"))
        bus.at = bus.n + k
        ev = []
        t = 0
        for _ in range(6):
            ev.extend(p.poll(t))
            t += 100
            if ev:
                break
        ev.extend(p.poll(t))  # and one poll more: held, not reported again
        assert [e[:2] for e in ev] == [("tap", "mg/mouse/21")], (k, ev)
        assert p.faults == 0


def test_bus_bit_errors_never_give_a_wrong_identity():
    # One bit in 20,000 flipped on MOSI and MISO: every card is still reported with its identity.
    pad = Pad()
    pad.emu.spi_error_rate = 20000
    ids = ["mg/mouse/%02d" % i for i in (1, 2, 3, 4, 5, 6)]
    for ident in ids:
        tag = pad.emu.make_tag(ident)
        pad.emu.put(tag)
        ev = []
        for _ in range(10):
            ev.extend(pad.poll())
            if ev:
                break
        assert [e[:2] for e in ev] == [("tap", ident)], (ident, ev)
        pad.emu.take(tag)
        ev = pad.polls(4)
        assert [e[:2] for e in ev] == [("remove", ident)], (ident, ev)
    assert pad.emu.spi_errors > 0 and pad.p.faults == 0
    # One bit in 1,000: most polls fail (a held card may even count as removed and come back), the
    # identity may stay unread, but no other card's identity is ever reported and nothing raises.
    pad.emu.spi_error_rate = 1000
    tag = pad.emu.make_tag("mg/clothing/40")
    pad.emu.put(tag)
    ev = pad.polls(20)
    assert all(e[1] in ("mg/clothing/40", None) and e[2] == rfid.uid_hex(tag.uid) for e in ev), ev
    assert [e[0] for e in ev] == ["tap", "remove"] * (len(ev) // 2) + ["tap"] * (len(ev) % 2), ev
    assert pad.p.faults == 0
    pad.emu.spi_error_rate = 0
    ev = pad.polls(5)
    assert len(pad.p.present()) == 1


def test_configuration_reads_back_or_the_chip_is_not_trusted():
    # Under heavy bus noise init() retries each configuration write until it reads back, and only
    # says yes with the configuration really in the chip.
    trusted = 0
    for seed in range(1, 16):
        emu = chip(seed=seed)
        emu.spi_error_rate = 150
        r = MFRC522(emu, Pin(), Pin(emu=emu), emu.sleep_us)
        if r.ok:
            trusted += 1
            g = emu.regs
            assert g[E.TModeReg] == 0x80 and g[E.TPrescalerReg] == 0x43 and g[E.TxASKReg] == 0x40, seed
            assert g[E.ModeReg] == 0x3D and g[E.TxControlReg] & 0x03 == 0x03 and g[E.RFCfgReg] & 0x70 == 0x70
            assert not g[E.CollReg] & 0x80
    assert trusted >= 3
    # A register a bus error changed later is caught by check() before the next scan.
    pad = Pad()
    pad.emu.put(pad.emu.make_tag("mg/mouse/09"))
    assert len(pad.poll()) == 1
    assert pad.r.check()
    pad.emu.regs[E.TPrescalerReg] = 0x42
    assert not pad.r.check()
    assert pad.poll() == () and pad.p.reinits == 1 and pad.r.check()


def test_a_strong_card_does_not_hide_a_weak_one():
    pad = Pad()
    strong = pad.emu.make_tag("mg/mouse/11")
    weak = pad.emu.make_tag("mg/mouse/12")
    weak.strength = 20  # under CollLevel of the strong card's answer: no collision to see
    pad.emu.put(strong)
    pad.emu.put(weak)
    ev = pad.poll()
    assert sorted(e[1] for e in _taps(ev)) == ["mg/mouse/11", "mg/mouse/12"]  # found by the REQA after
    assert pad.polls(6) == []  # both held: the weak one is selected by its UID each poll
    pad.emu.take(weak)
    assert [e[:2] for e in pad.polls(4)] == [("remove", "mg/mouse/12")]
    # the weak card first, the strong one put on top of it later
    pad.emu.take(strong)
    pad.polls(4)
    pad.emu.put(weak)
    assert [e[1] for e in _taps(pad.poll())] == ["mg/mouse/12"]
    pad.emu.put(strong)
    assert [e[1] for e in pad.polls(6)] == ["mg/mouse/11"]
    assert sorted(x[0] for x in pad.p.present()) == ["mg/mouse/11", "mg/mouse/12"]


def test_timing_skew_never_reports_a_card_that_is_not_there():
    for skew in (16, 40, 64, 100, 128, 200):
        pad = Pad()
        a = pad.emu.make_tag("mg/clothing/01")
        b = pad.emu.make_tag("mg/clothing/02")
        b.skew_fc = skew
        pad.emu.put(a)
        pad.emu.put(b)
        ev = pad.polls(4)
        assert all(e[0] == "tap" and e[1] in ("mg/clothing/01", "mg/clothing/02") for e in ev), (skew, ev)
        assert len(ev) == len(set(e[1] for e in ev)), (skew, ev)
        assert pad.p.faults == 0


def test_a_card_leaving_at_any_bit_of_any_answer():
    # Count the answers of one identification, then take the card off at every bit of every one:
    # never a wrong identity, never a tap for a card that left before it was read, and back on the pad
    # it is reported once, with its identity.
    ident = "mg/cheese/7"
    pad = Pad()
    tag = pad.emu.make_tag(ident)
    pad.emu.put(tag)
    lengths = []
    real = pad.emu.field.exchange

    def counting(tx, bits, align, vac):
        n = real(tx, bits, align, vac)
        if n > 0:
            lengths.append(pad.emu.field.periods)
        return n

    pad.emu.field.exchange = counting
    assert [e[1] for e in pad.poll()] == [ident]
    del pad.emu.field.exchange
    cases = [(a, k) for a in range(len(lengths)) for k in range(lengths[a] + 1)]
    assert len(lengths) >= 7 and len(cases) > 400
    first, step = _stride()
    for a, k in cases[first::step]:
        pad = Pad()
        tag = pad.emu.make_tag(ident)
        pad.emu.put(tag)
        tag.leave_at(a, k)
        ev = list(pad.poll())
        assert all(e[1] == ident for e in ev), (a, k, ev)
        if tag not in pad.emu.tags:
            pad.emu.put(tag)  # back on the pad before it counts as removed
            for _ in range(3):
                if ev:
                    break
                ev += pad.poll()
        ev += pad.poll()
        # read before it left, or read once it was back: once, with its identity
        assert [e[:2] for e in ev] == [("tap", ident)], (a, k, ev)
        assert pad.p.faults == 0


def _identify_and_read(r, sak, res):
    t = tagtype.identify(r, sak)
    res.append(t)
    if t in tagtype.TYPE2:
        res.append(r.read(3))  # still (or again) selected: READ works


def test_tag_types_by_sak_and_get_version():
    assert tagtype.TYPE2 == (1, 2, 3, 4, 5, 6)  # maus.cards.reader tells a Type 2 tag by that range
    got = []
    for tag, want in ((NTAG(UA, 213), tagtype.T_NTAG213), (NTAG(UA, 215), tagtype.T_NTAG215),
                      (NTAG(UA, 216), tagtype.T_NTAG216), (Ultralight(UA), tagtype.T_ULTRALIGHT),
                      (MifareClassic1K(uid(0xDE, 0xAD, 0xBE, 0xEF)), tagtype.T_CLASSIC_1K)):
        emu, r = reader()
        emu.put(tag)
        res = []
        assert r.scan(lambda u, n, sak, r=r, res=res: _identify_and_read(r, sak, res)) == 1
        got.append(res[0])
        assert res[0] == want, (want, res)
        if want in tagtype.TYPE2:
            assert res[1] == OK
        assert r.errors == 0
    # Presence reads an identity from an Ultralight too: it selects it again after GET_VERSION
    pad = Pad()
    ul = Ultralight(uid(0x04, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60))
    data = ndef_write.tlv(ndef_write.text_record(cardfile.to_text("mg/mouse/17")))
    ul.mem[16:16 + len(data)] = data
    pad.emu.put(ul)
    assert [e[1] for e in pad.poll()] == ["mg/mouse/17"]


def test_recorder_sees_each_card_once():
    # A card whose session an on_card ended (a NAK) is met again by the scan's REQA: still one call.
    emu, r = reader()
    emu.put(NTAG(UA))
    emu.put(NTAG(UB))
    rec = Recorder()

    def use(u, n, sak):
        rec.card(u, n, sak)
        r.write(0, b"\x00\x00\x00\x00")  # refused: the tag leaves the session, back to IDLE

    assert r.scan(use) == 2
    assert sorted(rec.cards) == [(UA.hex(), 0), (UB.hex(), 0)]


def test_every_chip_variant():
    rfidkit.every_variant(globals())
