# The emulated MFRC522 against the datasheet (rev. 3.9), register by register over its SPI bus:
# start-up after a reset, the CRC coprocessor's time, the FIFO ring, the timer, error bits, and the
# RF field (collisions with unequal strength and timing skew, a card leaving mid-answer, bus errors).
import rfidkit
from rfidkit import chip, rd, reader, uid, wr  # first: the emulator is the biggest compile

# isort: split
import micropython
from maus.cards import reader as rfid
from maus.sim import mfrc522_emu as E
from maus.sim.mfrc522_emu import NTAG, Pin, crc_a

UA = uid(0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6)
UB = uid(0x04, 0xA1, 0xB3, 0xC3, 0xD4, 0xE5, 0xF7)  # CL1 differs from UA's first at bit 24


def _variant(i):
    return E.VARIANTS[rfidkit.VARIANT][i]


def _rf_chip(*tags):
    # A chip set up as the driver sets it up (timer with TAuto, CRC preset, antenna on), tags on the pad.
    emu = chip()
    emu.ns_per_call = 0
    wr(emu, E.TModeReg, 0x80)
    wr(emu, E.TPrescalerReg, 0x43)
    wr(emu, E.TReloadRegL, 100)  # ~1 ms
    wr(emu, E.ModeReg, 0x3D)
    wr(emu, E.CollReg, 0x00)
    wr(emu, E.TxControlReg, 0x83)
    wr(emu, E.RFCfgReg, 0x70)  # 48 dB
    for t in tags:
        emu.put(t)
    rfidkit.settle(emu)
    return emu


def _xfer(emu, data, last_bits=0, align=0):
    # One Transceive by hand; returns (ErrorReg, CollReg, FIFO bytes, RxLastBits).
    wr(emu, E.CommandReg, E.CMD_IDLE)
    wr(emu, E.ComIrqReg, 0x7F)
    wr(emu, E.FIFOLevelReg, 0x80)
    wr(emu, E.FIFODataReg, *data)
    wr(emu, E.CommandReg, E.CMD_TRANSCEIVE)
    wr(emu, E.BitFramingReg, 0x80 | align << 4 | last_bits)
    emu.sleep_us(3000)  # the answer (or the 1 ms timer) is long over
    n = rd(emu, E.FIFOLevelReg)
    return rd(emu, E.ErrorReg), rd(emu, E.CollReg), [rd(emu, E.FIFODataReg) for _ in range(n)], rd(emu, E.ControlReg) & 7


def _anticoll_cl1(emu, known_bits=20):
    # Field off and on (every tag back to IDLE), WUPA, then ANTICOLLISION at cascade level 1 with the
    # first `known_bits` bits of UA's CL1 (88 04 A1 B2) sent; the tags answer from bit known_bits.
    wr(emu, E.TxControlReg, 0x80)
    wr(emu, E.TxControlReg, 0x83)
    _xfer(emu, (0x52,), 7)
    cl = (0x88, UA[0], UA[1], UA[2])
    nb = known_bits >> 3
    rem = known_bits & 7
    frame = [0x93, ((2 + nb) << 4) | rem] + list(cl[:nb])
    if rem:
        frame.append(cl[nb] & ((1 << rem) - 1))
    return _xfer(emu, frame, rem, rem)


def test_nothing_answers_until_the_oscillator_runs():
    # 8.8.2: after a reset the chip can be addressed only once its crystal runs plus td = 37.74 us.
    emu = chip()
    emu.ns_per_call = 0
    assert emu.startup_ns == _variant(0) * 1000 + 37740
    rst = Pin(emu=emu)
    for how in ("pin", "soft", "self"):
        wr(emu, E.TPrescalerReg, 0x43)
        if how == "pin":
            rst.value(0)
            rst.value(1)
        elif how == "soft":
            wr(emu, E.CommandReg, E.CMD_SOFT_RESET)
        else:
            emu.chip_reset()
        assert rd(emu, E.VersionReg) == emu.miso_idle, how  # MISO floats
        assert rd(emu, E.CommandReg) == emu.miso_idle, how
        wr(emu, E.TModeReg, 0x80)  # lost
        emu.sleep_us(emu.startup_ns // 1000 - 30)
        assert rd(emu, E.VersionReg) == emu.miso_idle, how
        emu.sleep_us(40)
        assert rd(emu, E.VersionReg) == emu.version, how
        assert rd(emu, E.TModeReg) == 0x00 and rd(emu, E.TPrescalerReg) == 0x00, how  # reset values
        assert rd(emu, E.TxControlReg) == 0x80, how  # the antenna is off after a reset


def test_hard_power_down_holds_until_the_pin_rises():
    emu = chip()
    rst = Pin(emu=emu)
    rst.value(0)
    emu.sleep_us(100000)
    assert rd(emu, E.VersionReg) == emu.miso_idle  # NRSTPD low: hard power-down (8.6.1)
    rst.value(1)
    emu.sleep_us(emu.startup_ns // 1000 + 1)
    assert rd(emu, E.VersionReg) == emu.version


def test_crc_coprocessor_takes_its_time_per_byte():
    emu = chip()
    emu.ns_per_call = 0
    data = bytes(range(16))
    wr(emu, E.ModeReg, 0x3D)
    wr(emu, E.FIFODataReg, *data)
    wr(emu, E.CommandReg, E.CMD_CALC_CRC)
    assert not rd(emu, E.DivIrqReg) & 0x04  # 16 bytes are not done within one register read
    assert not rd(emu, E.Status1Reg) & 0x20  # CRCReady
    emu.sleep_us(16 * emu.crc_ns // 1000 + 1)
    assert rd(emu, E.DivIrqReg) & 0x04
    c = crc_a(data, 16)
    assert rd(emu, E.CRCResultRegL) == c & 0xFF and rd(emu, E.CRCResultRegH) == c >> 8
    assert rd(emu, E.FIFOLevelReg) == 0  # the coprocessor took the bytes
    # CalcCRC goes on with bytes written later (10.3.1.4): the result covers them too
    wr(emu, E.FIFODataReg, 0x99)
    emu.sleep_us(20)
    c = crc_a(b"\x99", 1, c)
    assert rd(emu, E.CRCResultRegL) == c & 0xFF and rd(emu, E.CRCResultRegH) == c >> 8


def test_fifo_is_a_64_byte_ring_with_overflow_and_alerts():
    emu = chip()
    emu.ns_per_call = 0
    wr(emu, E.FIFODataReg, *range(40))
    assert [rd(emu, E.FIFODataReg) for _ in range(30)] == list(range(30))
    wr(emu, E.FIFODataReg, *range(100, 150))  # 60 bytes in the FIFO: the ring wraps, no overflow
    assert rd(emu, E.FIFOLevelReg) == 60 and not rd(emu, E.ErrorReg) & 0x10
    assert rd(emu, E.Status1Reg) & 0x02  # HiAlert: 64 - 60 <= WaterLevel (8)
    assert rd(emu, E.ComIrqReg) & 0x08  # HiAlertIRq stores the event
    wr(emu, E.FIFODataReg, 1, 2, 3, 4, 5)  # the 65th byte does not fit
    assert rd(emu, E.FIFOLevelReg) == 64 and rd(emu, E.ErrorReg) & 0x10  # BufferOvfl
    got = [rd(emu, E.FIFODataReg) for _ in range(64)]
    assert got == list(range(30, 40)) + list(range(100, 150)) + [1, 2, 3, 4]
    assert rd(emu, E.Status1Reg) & 0x01 and rd(emu, E.ComIrqReg) & 0x04  # LoAlert, LoAlertIRq
    wr(emu, E.FIFOLevelReg, 0x80)  # FlushBuffer clears BufferOvfl (9.3.1.11)
    assert not rd(emu, E.ErrorReg) & 0x10
    wr(emu, E.FIFODataReg, *range(64))
    wr(emu, E.FIFODataReg, 7)
    assert rd(emu, E.ErrorReg) & 0x10
    wr(emu, E.CommandReg, E.CMD_IDLE)  # a command clears the error bits (9.3.1.7)
    assert rd(emu, E.ErrorReg) == 0


def test_timer_starts_after_every_frame_and_the_answer_stops_it():
    emu = _rf_chip()
    # Transmit (the receiver is off): TAuto starts the timer at the end of the frame all the same.
    wr(emu, E.FIFODataReg, 0x50, 0x00, 0x57, 0xCD)  # HLTA
    wr(emu, E.CommandReg, E.CMD_TRANSMIT)
    emu.sleep_us(100)
    irq = rd(emu, E.ComIrqReg)
    assert irq & 0x10 and not irq & 0x01  # IdleIRq: Transmit is done; the timer is still running
    assert rd(emu, E.Status1Reg) & 0x08  # TRunning
    emu.sleep_us(1300)
    assert rd(emu, E.ComIrqReg) & 0x01  # TimerIRq: (2*67+1)*(100+1)/13.56 MHz = 1.006 ms after 359 us of frame
    # An answer stops it at its 5th bit (table 106): long after the window, no TimerIRq.
    emu.put(NTAG(UA))
    err, _, fifo, last = _xfer(emu, (0x52,), 7)
    assert fifo == [0x44, 0x00] and err == 0
    assert not rd(emu, E.ComIrqReg) & 0x01 and not rd(emu, E.Status1Reg) & 0x08
    # TStopNow stops a running timer; Idle stops it or not, as the chip variant says.
    wr(emu, E.ControlReg, 0x40)  # TStartNow
    assert rd(emu, E.Status1Reg) & 0x08
    wr(emu, E.ControlReg, 0x80)
    assert not rd(emu, E.Status1Reg) & 0x08
    wr(emu, E.ControlReg, 0x40)
    wr(emu, E.CommandReg, E.CMD_IDLE)
    assert bool(rd(emu, E.Status1Reg) & 0x08) == (not _variant(3))
    # The counter counts down in timer ticks (TCounterValReg).
    wr(emu, E.ControlReg, 0x40)
    emu.sleep_us(500)
    left = rd(emu, E.TCounterValRegH) << 8 | rd(emu, E.TCounterValRegL)
    assert 40 <= left <= 60, left


def test_collision_bits_and_position_as_the_variant_says():
    emu = _rf_chip(NTAG(UA), NTAG(UB))
    err, coll, fifo, last = _anticoll_cl1(emu, 20)
    # The tags answer from bit 20; they differ first at bit 24, the 5th bit they send.
    assert err & 0x08  # CollErr
    assert bool(err & 0x02) == bool(_variant(1))  # ParityErr with it, or not
    assert coll & 0x20 == 0
    assert coll & 0x1F == (4 + 4 + 1 if _variant(2) else 4 + 1)  # with or without the RxAlign offset
    # ValuesAfterColl = 0: the bits after the collision read 0; the ones before are UA's (and UB's)
    assert fifo[0] & 0xF0 == UA[1] & 0xF0 and fifo[1] & 0x01 in (0, 1) and fifo[1] & 0xFE == 0


def test_a_strong_card_masks_a_weak_one():
    strong = NTAG(UA)
    weak = NTAG(UB)
    weak.strength = 20  # further from the antenna
    emu = _rf_chip(strong, weak)
    err, coll, fifo, last = _anticoll_cl1(emu, 0)
    # no collision seen: the weaker half-bits stay under CollLevel (4/8) of the stronger ones
    assert err == 0 and coll & 0x20
    assert fifo == [0x88, UA[0], UA[1], UA[2], 0x88 ^ UA[0] ^ UA[1] ^ UA[2]]
    # with CollLevel 1 (1/8 of the stronger half-bit) the weak card's modulation is a collision
    wr(emu, E.RxThresholdReg, 0x81)
    err, coll, fifo, last = _anticoll_cl1(emu, 0)
    assert err & 0x08 and coll & 0x1F == 25
    # under MinLevel a card is not heard at all, even alone
    emu.take(strong)
    weak.strength = 10
    err, coll, fifo, last = _anticoll_cl1(emu, 0)
    assert fifo == [] and rd(emu, E.ComIrqReg) & 0x01


def test_timing_skew_within_a_quarter_bit_is_one_bit_grid():
    a = NTAG(UA)
    b = NTAG(UB)
    b.skew_fc = 30  # later by less than a quarter bit (32/fc): the halves still line up
    emu = _rf_chip(a, b)
    err, coll, fifo, last = _anticoll_cl1(emu, 0)
    assert err & 0x08 and coll & 0x1F == 25
    # half a bit late: its modulation falls into the other half-bits; the frame is garbled, never
    # a clean UID that is not on the pad
    b.skew_fc = 64
    err, coll, fifo, last = _anticoll_cl1(emu, 0)
    clean = err == 0 and len(fifo) == 5 and fifo[4] == fifo[0] ^ fifo[1] ^ fifo[2] ^ fifo[3]
    assert not clean or fifo[1:4] in ([UA[0], UA[1], UA[2]], [UB[0], UB[1], UB[2]])
    # and a strong early card still masks a weak late one
    b.strength = 20
    err, coll, fifo, last = _anticoll_cl1(emu, 0)
    assert err == 0 and fifo[1:4] == [UA[0], UA[1], UA[2]]


def test_a_card_leaving_mid_answer_leaves_a_prefix():
    # The tag leaves k bit periods into its ATQA (SOF, 16 data bits, 2 parity bits): the reader gets
    # the data bits sent before that, nothing else, and the tag is off the pad.
    for k in range(0, 20):
        t = NTAG(UA)
        emu = _rf_chip(t)
        t.leave_at(0, k)
        err, coll, fifo, last = _xfer(emu, (0x52,), 7)
        data = max(0, k - 1) - (1 if k > 9 else 0)  # data bits before period k: minus SOF and parity
        data = min(data, 16)
        assert t not in emu.tags
        if data == 0:
            assert fifo == [] and rd(emu, E.ComIrqReg) & 0x01, k  # nothing came: the timer ran out
            continue
        got = sum(fifo[i] << (8 * i) for i in range(len(fifo)))
        assert len(fifo) == (data + 7) // 8 and last == data & 7, (k, fifo, last)
        assert got == 0x0044 & ((1 << data) - 1), (k, fifo)
        assert err & 0x08 == 0


def test_bus_bit_errors_at_the_configured_rate():
    emu = chip()
    emu.spi_error_rate = 1000  # one bit in about 1000
    out = bytearray((0x80 | E.VersionReg << 1, 0))
    into = bytearray(2)
    wrong = 0
    for _ in range(5000):
        emu.write_readinto(out, into)
        if into[1] != emu.version:
            wrong += 1
    assert 40 <= emu.spi_errors <= 160, emu.spi_errors  # 80,000 bits
    assert 0 < wrong < emu.spi_errors  # some hit the address (a read of another register), some MISO


def test_clock_restarts_without_losing_time_or_events():
    # The ns clock restarts near 0 past 2**28 so that it stays a small int on a 32-bit port; the
    # total goes on, a timer running across the restart fires on time, and polls allocate nothing.
    emu, r = reader()
    p = rfid.Presence(r)
    tag = emu.make_tag("mg/mouse/07")
    emu.put(tag)
    t = 0
    last = emu.elapsed_ns()
    for i in range(12):
        emu.sleep_us(250000 + 777 * i)
        t += 100
        p.poll(t)
        now = emu.elapsed_ns()
        assert now > last and 0 <= emu.now < 1 << 29
        last = now
    assert p.present()[0][0] == "mg/mouse/07"
    assert last > 1 << 31  # well past what a 32-bit small int holds in ns
    # A 100 ms timer started just before a restart: TimerIRq ~100.4 ms later, not earlier or later.
    emu.ns_per_call = 0
    wr(emu, E.TModeReg, 0x03)
    wr(emu, E.TPrescalerReg, 0xFF)  # prescaler 1023: a tick is 150.9 us
    wr(emu, E.TReloadRegH, 0x02)
    wr(emu, E.TReloadRegL, 0x98)  # 664 + 1 ticks
    emu.sleep_us(((1 << 28) - emu.now) // 1000 - 1000)
    wr(emu, E.ComIrqReg, 0x7F)
    wr(emu, E.ControlReg, 0x40)
    t0 = emu.elapsed_ns()
    emu.sleep_us(100000)
    assert not rd(emu, E.ComIrqReg) & 0x01
    emu.sleep_us(1000)
    assert rd(emu, E.ComIrqReg) & 0x01 and emu.elapsed_ns() - t0 < 102000000
    assert emu.now < 1 << 28
    # polls across restarts, heap locked; the first poll sets the chip up again (the timer written above
    # spoilt its configuration), by maus.drivers.mfrc522_setup loaded for that moment
    emu.ns_per_call = 20000
    t += 100
    assert p.poll(t) == () and p.reinits == 1
    for _ in range(3):
        emu.sleep_us(200000)
        t += 100
        micropython.heap_lock()
        try:
            ev = p.poll(t)
        finally:
            micropython.heap_unlock()
        assert ev == ()
    assert p.faults == 0 and r.errors == 0


def test_a_corrupted_timer_set_up_allocates_nothing():
    # A bus error can leave any prescaler and reload in the chip: the longest timer still computes in
    # small ints (it is cut at ~0.5 s, longer than anything the driver asks for).
    emu = chip()
    wr(emu, E.TModeReg, 0x8F)
    wr(emu, E.TPrescalerReg, 0xFF)
    wr(emu, E.TReloadRegH, 0xFF)
    wr(emu, E.TReloadRegL, 0xFF)
    start = bytearray((E.ControlReg << 1, 0x40))
    out = bytearray((0x80 | E.TCounterValRegH << 1, 0x80 | E.ComIrqReg << 1, 0))
    into = bytearray(3)
    micropython.heap_lock()
    try:
        emu.write(start)
        emu.write_readinto(out, into)
        emu.sleep_us(300000)
        emu.write_readinto(out, into)
        emu.sleep_us(300000)
        emu.write_readinto(out, into)
    finally:
        micropython.heap_unlock()
    assert into[2] & 0x01  # TimerIRq


def test_variants_cover_what_the_datasheet_leaves_open():
    v = E.VARIANTS
    for name in ("start-0ms", "start-0.2ms", "start-1ms", "start-50ms", "coll-noparity", "collpos-frame",
                 "idle-stops-timer", "classic-silent", "fm17522", "fm17522e", "clone-b2", "clone-12",
                 "mfrc522-v0", "mfrc522-v1", "version-unknown", "card-flutter", "cards-unequal", "field-weak",
                 "spi-10mhz-noisy"):
        assert name in v, name
    assert len(set(v.values())) == len(v)  # no two variants alike: each one a behaviour of its own
    assert [v["start-%s" % s][0] for s in ("0ms", "0.2ms", "1ms", "50ms")] == [0, 200, 1000, 50000]
    base = v[E.DEFAULT_VARIANT]
    for name, cfg in v.items():
        if name != "worst":
            assert sum(1 for a, b in zip(cfg, base) if a != b) <= (2 if name.startswith("spi-") else 1), name  # one behaviour at a time (a bus: its clock and its noise)
    assert E.MFRC522Emu(variant="worst").startup_ns == 50000 * 1000 + 37740
    try:
        E.MFRC522Emu(variant="nonsense")
    except ValueError as e:
        assert "start-50ms" in str(e)
    else:
        raise AssertionError("an unknown variant was accepted")


def test_every_chip_variant():
    rfidkit.every_variant(globals())
