# The reader's SPI clock as a board-file setting: optional, 4 MHz by default, 100 kHz to 10 MHz (the
# MFRC522's limit, datasheet 8.1.2), and the virtual unit's emulated chip runs at what the board says.
import json

from fwtest import repo_path
from maus.drivers import mfrc522
from maus.hw import board


def _devkitc():
    return board.load(repo_path("boards") + "/esp32-devkitc.json")


def test_spi_clock_is_optional_and_checked():
    b = _devkitc()
    assert b["parts"]["rfid"]["baud"] == mfrc522.SPI_HZ == 4000000
    del b["parts"]["rfid"]["baud"]
    assert board.validate(b) == []  # absent: the driver's default
    for hz, ok in ((100000, True), (1000000, True), (10000000, True), (99999, False), (20000000, False),
                   ("4000000", False), (True, False)):
        b["parts"]["rfid"]["baud"] = hz
        errs = board.validate(b)
        assert (errs == []) == ok, (hz, errs)
        if not ok:
            assert errs == ["parts.rfid.baud: must be a whole number 100000-10000000"], errs


def test_virtual_unit_runs_the_chip_at_the_board_clock():
    try:
        import framebuf  # noqa: F401 - the virtual unit's display: MicroPython only (this runs there)
    except ImportError:
        return
    from maus.sim import hw as sim

    b = board.load(repo_path("boards") + "/sim.json")
    b = json.loads(json.dumps(b))
    b["parts"]["rfid"]["baud"] = 1000000
    hw = sim.Hardware(b)
    assert hw.reader.spi_hz == 1000000 and hw.spi.baudrate == 1000000  # the bus (machine.SPI) and the chip
    del b["parts"]["rfid"]["baud"]
    hw = sim.Hardware(b)
    assert hw.reader.spi_hz == mfrc522.SPI_HZ
    # the board's RST pin is wired to the chip: a hard reset takes it down and up again
    resets = hw.reader.resets
    hw.rfid_rst.value(0)
    hw.rfid_rst.value(1)
    assert hw.reader.resets == resets + 1
    try:
        hw.apply({"rfid": "unplug"})
    except ValueError as e:
        assert "reset" in str(e)
    else:
        raise AssertionError("an unknown rfid action was accepted")
    hw.apply({"rfid": "reset"})
    assert hw.reader.resets == resets + 2


def test_every_chip_variant():
    import rfidkit

    rfidkit.every_variant(globals())
