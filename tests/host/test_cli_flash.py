"""`mausbox flash` decision logic, without a board: image/chip matching, refusal, error mapping."""

from __future__ import annotations

import pytest
from mausbox.cli import main
from mausbox.cmd_flash import esptool_error, image_chip


def image(chip_id: int, size: int = 64) -> bytes:
    head = bytearray(size)
    head[0] = 0xE9
    head[1] = 3  # segments
    head[12] = chip_id & 0xFF
    head[13] = chip_id >> 8
    return bytes(head)


def test_image_header_names_its_chip_and_offset():
    assert image_chip(image(0)) == ("ESP32", 0x1000)
    assert image_chip(image(9)) == ("ESP32-S3", 0x0)
    assert image_chip(image(5)) == ("ESP32-C3", 0x0)
    with pytest.raises(ValueError, match="not an ESP firmware image"):
        image_chip(b"UF2\n" + bytes(60))
    with pytest.raises(ValueError, match="unknown chip"):
        image_chip(image(200))


def test_esptool_errors_say_what_to_do():
    port = "/dev/ttyUSB0"
    assert "download mode" in esptool_error(
        "A fatal error occurred: Failed to connect to Espressif device: No serial data received.", port)
    assert "hold its BOOT" in esptool_error("Wrong boot mode detected (0x13)!", port)
    assert "dialout" in esptool_error("could not open port /dev/ttyUSB0: [Errno 13] Permission denied", port)
    assert "ModemManager" in esptool_error("[Errno 16] Device or resource busy: '/dev/ttyUSB0'", port)
    assert "plugged in" in esptool_error("could not open port /dev/ttyUSB7: [Errno 2] No such file or directory", port)


@pytest.fixture
def fake_board(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    calls = []
    monkeypatch.setattr("mausbox.cmd_flash.check_port", lambda port: None)  # /dev/ttyUSB0 stands for a board
    monkeypatch.setattr("mausbox.cmd_flash.detect_chip", lambda port: "ESP32")
    monkeypatch.setattr("mausbox.cmd_flash.esptool", lambda args, port: calls.append(args))
    return calls


def test_flash_refuses_an_image_for_another_chip(fake_board, tmp_path, capsys):
    fw = tmp_path / "ESP32_GENERIC_S3.bin"
    fw.write_bytes(image(9, 4096))
    assert main(["flash", "--port", "/dev/ttyUSB0", "--firmware", str(fw), "--yes"]) == 1
    err = capsys.readouterr().err
    assert "built for an ESP32-S3, but the board is an ESP32" in err and "refusing" in err
    assert fake_board == []  # nothing erased, nothing written


def test_flash_erases_then_writes_at_the_chips_offset(fake_board, tmp_path):
    fw = tmp_path / "ESP32_GENERIC.bin"
    fw.write_bytes(image(0, 4096))
    assert main(["flash", "--port", "/dev/ttyUSB0", "--firmware", str(fw), "--yes", "--no-deploy"]) == 0
    assert fake_board == [["erase-flash"], ["write-flash", "0x1000", str(fw)]]


def test_flash_rejects_a_file_that_is_not_an_image(fake_board, tmp_path, capsys):
    fw = tmp_path / "firmware.uf2"
    fw.write_bytes(b"UF2\n" + bytes(600))
    assert main(["flash", "--port", "/dev/ttyUSB0", "--firmware", str(fw), "--yes"]) == 2
    assert "not an ESP firmware image" in capsys.readouterr().err
    assert fake_board == []


def test_flash_without_confirmation_changes_nothing(fake_board, tmp_path, monkeypatch):
    fw = tmp_path / "ESP32_GENERIC.bin"
    fw.write_bytes(image(0, 4096))
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["flash", "--port", "/dev/ttyUSB0", "--firmware", str(fw)]) == 1
    assert fake_board == []


def test_flash_on_a_missing_port_is_friendly(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    fw = tmp_path / "ESP32_GENERIC.bin"
    fw.write_bytes(image(0, 4096))
    code = main(["flash", "--port", "/dev/ttyNOPE", "--firmware", str(fw), "--yes"])
    assert code == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and "/dev/ttyNOPE" in err


# --- inputs checked in order, the real problem named (issue 20) ---------------------------------------------

@pytest.fixture
def no_board(monkeypatch, tmp_path):
    """Anything that would touch a board fails the test: the checks before it must have stopped the flash."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))

    def touched(*a, **k):
        raise AssertionError("the board was contacted")

    monkeypatch.setattr("mausbox.cmd_flash.detect_chip", touched)
    monkeypatch.setattr("mausbox.cmd_flash.esptool", touched)


def test_a_missing_image_is_named_before_the_port(no_board, tmp_path, capsys):
    code = main(["flash", "--port", "/dev/ttyNOPE", "--firmware", str(tmp_path / "nope.bin"), "--yes"])
    err = capsys.readouterr().err
    assert code == 2 and "no such firmware file" in err and "nope.bin" in err
    assert "busy" not in err and "ttyNOPE" not in err


def test_a_missing_port_is_not_called_busy(no_board, tmp_path, capsys):
    fw = tmp_path / "ESP32_GENERIC.bin"
    fw.write_bytes(image(0, 4096))
    code = main(["flash", "--port", "/dev/ttyNOPE", "--firmware", str(fw), "--yes"])
    err = capsys.readouterr().err
    assert code == 3 and "/dev/ttyNOPE does not exist" in err and "busy" not in err


def test_a_port_another_program_holds_is_busy(no_board, tmp_path, capsys):
    import os
    import tty

    import serial

    fw = tmp_path / "ESP32_GENERIC.bin"
    fw.write_bytes(image(0, 4096))
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    holder = serial.Serial(path, exclusive=True)  # as an open `mpremote` holds a board
    try:
        code = main(["flash", "--port", path, "--firmware", str(fw), "--yes"])
    finally:
        holder.close()
        os.close(master)
        os.close(slave)
    err = capsys.readouterr().err
    assert code == 3 and f"{path} is busy" in err


def test_esptools_busy_or_missing_is_missing_when_it_says_no_such_file():
    text = "could not open port /dev/ttyUSB7: [Errno 2] No such file or directory: '/dev/ttyUSB7'"
    assert "does not exist" in esptool_error(text + " (the port is busy or doesn't exist)", "/dev/ttyUSB7")
