# The MFRC522 driver's cold part (maus.drivers.mfrc522): making the reader object (every buffer the driver
# uses, once), setting the chip up (MFRC522.init: at set-up, and when a poll finds that the chip lost its
# set-up or stopped answering), the receiver gain and the antenna switch. Loaded for that and let go again
# (maus.moment), never for a poll that finds the chip as it left it.
from micropython import const

# Registers (datasheet table 20), commands and bits, as maus.drivers.mfrc522 has them.
_CommandReg = const(0x01)
_TxControlReg = const(0x14)
_RFCfgReg = const(0x26)
_TModeReg = const(0x2A)
_VersionReg = const(0x37)
_SOFT_RESET = const(0x0F)
_POWER_DOWN = const(0x10)  # CommandReg PowerDown
_RESET_LOW_US = const(2)  # 8.8.1: NRSTPD low for at least 100 ns
_TD_US = const(50)  # 8.8.2: td = 1024/27 = 37.74 us once the crystal runs, plus margin
_READY_POLL_US = const(10000)  # the longest wait between two looks
_READY_MAX_US = const(150000)  # 8.8.2 leaves the crystal's start-up open; miguelbalboa allows 3 x 50 ms
_TRIES = const(3)  # configuration writes that must read back right

_FIFO = const(64)
_MAX_CARDS = const(4)  # tags one scan finds at most (MFRC522.scan)
_NCFG = const(9)  # registers in mfrc522._CFG


def make(r, spi, cs, rst, sleep_us):
    """The state of a new reader r (MFRC522: the bus, the ISO 14443-A frames, the anticollision loop), then
    r.init() into r.ok."""
    # ISO 14443-A: frame bytes go in _tx[1:], the answer comes in buf ([0] is the bus's).
    r._tx = bytearray(1 + _FIFO)  # the longest frame is 9 bytes (SELECT, WRITE: with CRC_A); the FIFO read
    # addresses of the longest answer go here too (MFRC522._fifo_read)
    r._rxi = bytearray(1 + _FIFO)
    r.buf = memoryview(r._rxi)[1:]  # the last answer
    r.rx_bits = 0
    r.coll_bit = -1
    r.uid = bytearray(10)  # the card just selected by scan()
    r.sak = 0
    r.atqa = 0
    r.page = bytearray(16)  # the last READ
    r._cl = bytearray(5)  # UID CLn + BCC being resolved
    r._path = bytearray(15)  # CLn of the levels selected so far
    r._wstack = bytearray(11 * _MAX_CARDS)  # pending walk branches (5 bytes + known bits), then the CLn
    # values one walk found (5 bytes each)
    r._queue = bytearray(16 * _MAX_CARDS)  # pending cards: levels + path
    r.errors = 0  # operations that ended in ERROR (a fault counter)
    r._collpos_frame = False  # CollPos seen counting from the first received bit (see MFRC522._anticoll)
    # the anticollision loop (MFRC522.scan)
    r._settle = 0  # scans that start with HLTA: tags may be left READY or ACTIVE
    r._answered = False  # the last WUPA was answered
    r._levels = 0  # cascade levels of the card in _path (the one on_card sees)
    r._found = bytearray(11 * _MAX_CARDS)  # UIDs found by this scan (10 bytes each), then their lengths
    # MFRC522: the bus
    r._spi = spi
    r._cs = cs
    r._rst = rst
    r._sleep = sleep_us or _clock_sleep()
    r._w2 = bytearray(2)
    r._r2 = bytearray(2)
    r._views = {}  # memoryviews by buffer and length, made on first use
    r._reload = -1
    r._chk_in = bytearray(_NCFG + 4)  # check()'s burst: the configuration, TReload H/L, CommandReg
    cs.value(1)
    r.ok = r.init()


def _clock_sleep():
    # time.sleep_us itself on MicroPython (nothing in between on the poll path); CPython has none.
    import time

    if hasattr(time, "sleep_us"):
        return time.sleep_us
    return lambda us: time.sleep(us / 1000000)


def set_gain(r, gain):
    """Receiver gain 0..7 (RFCfgReg RxGain); 4 = 33 dB, 7 = 48 dB for a pad under a thick lid."""
    r.gain = min(7, max(0, gain))
    try:
        _set(r, _RFCfgReg, r.gain << 4, 0x70)
    except Exception:  # noqa: BLE001
        pass


def antenna(r, on):
    """Tx1RFEn, Tx2RFEn on or off."""
    try:
        v = r._rd(_TxControlReg)
        r._wr(_TxControlReg, v | 0x03 if on else v & 0xFC)
    except Exception:  # noqa: BLE001
        pass


def chip_name(v):
    """The chip a VersionReg value names (miguelbalboa/rfid's list, NXP's datasheet 9.3.4.8)."""
    names = {0x88: "FM17522", 0x89: "FM17522E", 0x90: "MFRC522 v0.0", 0x91: "MFRC522 v1.0",
             0x92: "MFRC522 v2.0", 0xB2: "FM17522 (0xB2)", 0x12: "counterfeit MFRC522"}
    if v in (None, 0, 0xFF):
        return "none"
    return names.get(v, "unknown chip")


def _set(r, reg, val, mask=0xFF):
    # A configuration write that must read back: a bit error may hit the address or the value.
    for _ in range(_TRIES):
        r._wr(reg, val)
        if (r._rd(reg) ^ val) & mask == 0:
            return True
    return False


def init(r, cfg):
    """MFRC522.init: hard reset, wait for the oscillator, soft reset, configure (cfg: the driver's _CFG, the
    (register, value, readback mask) it checks at every poll; read back), antenna on. True if a chip answered
    (any version) and took the configuration."""
    try:
        r._reload = -1
        r._rst.value(0)
        r._sleep(_RESET_LOW_US)
        r._rst.value(1)  # a rising edge on NRSTPD: hard reset (8.8.1)
        if not _ready(r):
            return False  # nothing answers: no chip, no power, or MISO/SCK/CS wiring
        for _ in range(_TRIES):
            # SoftReset as well: a board without RST wired gets its reset here. The chip is back
            # in reset state when TModeReg reads 0 (a bit error may have spoilt the command).
            r._wr(_CommandReg, _SOFT_RESET)
            if _ready(r) and r._rd(_TModeReg) == 0:
                break
        else:
            return False
        for _ in range(_TRIES):
            for i in range(_NCFG):
                reg = cfg[3 * i]
                val = cfg[3 * i + 1]
                if reg == _RFCfgReg:
                    val = r.gain << 4
                if not _set(r, reg, val, cfg[3 * i + 2]):
                    return False
            if r.check():  # all of it at once: a later write's bit error can hit an earlier register
                return True
        return False
    except Exception:  # noqa: BLE001 - a bus fault means "no reader"
        return False


def _ready(r):
    # 8.8.2: the chip cannot be addressed until its oscillator runs and td has passed; until then
    # MISO floats (reads 0x00 or 0xFF). Ready: PowerDown reads 0 and VersionReg reads a version twice
    # alike (a bit error on a floating line is not a chip).
    wait = _TD_US
    waited = 0
    while waited < _READY_MAX_US:
        r._sleep(wait)  # first td, then twice as long each time, at most _READY_POLL_US
        waited += wait
        if not r._rd(_CommandReg) & _POWER_DOWN:
            v = r._rd(_VersionReg)
            if v != 0 and v != 0xFF and r._rd(_VersionReg) == v:
                return True
        wait = min(wait * 2, _READY_POLL_US)
    return False
