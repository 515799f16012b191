# NFC Forum Type 2 WRITE (NTAG21x) on a selected tag, for the card writer (maus.cards.writer): apart from
# the reader (mfrc522.MFRC522) so reading cards during a game does not hold it. Nothing here allocates.
from maus.drivers.mfrc522 import COLLISION, ERROR, NAK, OK
from micropython import const

_WRITE = const(0xA2)
_ACK = const(0x0A)
TIMEOUT_US = const(10000)  # NTAG21x EEPROM write takes about 4.1 ms


def write(pcd, page, data, off=0):
    """WRITE with pcd (an mfrc522.MFRC522): 4 bytes data[off:off+4] to `page`. OK on ACK; NAK, NO_TAG or
    ERROR."""
    try:
        t = pcd._tx
        t[1] = _WRITE
        t[2] = page
        for i in range(4):
            t[3 + i] = data[off + i]
        n = pcd._append_crc(6)
        if not n:
            return pcd._fail(ERROR)
        st = pcd._transceive(n, timeout_us=TIMEOUT_US)
        if st != OK:
            return pcd._fail(ERROR if st == COLLISION else st)
        if pcd.rx_bits != 4:
            return pcd._fail(ERROR)
        return OK if pcd.buf[0] & 0x0F == _ACK else NAK
    except Exception:  # noqa: BLE001
        return pcd._fail(ERROR)
