"""The host's link to a unit, exercised over the virtual unit's pty."""

from __future__ import annotations

import errno
import os

import pytest
import serial
from mausbox.cli import EXIT_LINK, EXIT_NO_UNIT, UserError
from mausbox.paths import micropython_binary
from mausbox.sim.serial import SerialUnit
from mausbox.transport import (
    CorruptRead,
    LinkError,
    TruncatedRead,
    UnitExecError,
    UnitLink,
    open_error,
    resolve_port,
    usb_kind,
)

needs_mpy = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


@pytest.fixture
def unit(tmp_path):
    with SerialUnit(tmp_path) as u:
        yield u


@needs_mpy
def test_exec_eval_and_errors(unit):
    with UnitLink(unit.pty_path) as link:
        assert link.eval("6*7") == 42
        assert link.exec("x = 3\nprint(x)") == b"3\r\n"  # text from a board comes with \\r\\n
        assert link.eval("x") == 3  # one session, one globals dict
        with pytest.raises(UnitExecError) as e:
            link.exec("1/0")
        assert "ZeroDivisionError" in e.value.error
        assert link.eval("'still' + ' fine'") == "still fine"


@needs_mpy
def test_read_file_streams_binary_with_offsets(unit):
    blob = os.urandom(20_000) + b"\x04" * 300 + b"\r\n" * 100 + b">" * 50
    (unit.root / "log.bin").write_bytes(blob)
    (unit.root / "empty.bin").write_bytes(b"")
    seen = []
    with UnitLink(unit.pty_path) as link:
        r = link.read_file("log.bin", progress=lambda done, size: seen.append((done, size)))
        assert r.data == blob and r.size == len(blob) and r.offset == 0
        assert seen[-1] == (len(blob), len(blob))
        assert link.read_file("log.bin", offset=19_999).data == blob[19_999:]
        assert link.read_file("log.bin", offset=len(blob)).data == b""
        assert link.read_file("empty.bin").data == b""
        with pytest.raises(FileNotFoundError):
            link.read_file("missing.bin")
        assert link.eval("1") == 1  # the session is still in step


@needs_mpy
def test_corrupt_chunk_is_rejected_and_the_read_resumes(unit):
    blob = os.urandom(10_000)
    (unit.root / "log.bin").write_bytes(blob)
    with UnitLink(unit.pty_path) as link:
        real_read = link.t.serial.read
        state = {"n": 0, "flipped": False}

        def flaky_read(n=1):
            data = real_read(n)
            state["n"] += len(data)
            if not state["flipped"] and state["n"] > 5000 and data:
                state["flipped"] = True
                data = bytes([data[0] ^ 0x55]) + data[1:]
            return data

        link.t.serial.read = flaky_read
        with pytest.raises(CorruptRead) as e:
            link.read_file("log.bin", chunk=1024)
        good = e.value.good
        assert blob.startswith(good) and len(good) < len(blob)
        link.recover()
        rest = link.read_file("log.bin", offset=len(good))
        assert good + rest.data == blob


@needs_mpy
def test_truncated_stream_is_detected(unit):
    (unit.root / "log.bin").write_bytes(os.urandom(8000))
    with UnitLink(unit.pty_path, timeout=1) as link:
        real_read = link.t.serial.read
        budget = {"left": 3000}

        def dropping_read(n=1):
            data = real_read(n)
            keep = data[:max(0, budget["left"])]
            budget["left"] -= len(data)
            return keep

        link.t.serial.read = dropping_read
        with pytest.raises(TruncatedRead) as e:
            link.read_file("log.bin", chunk=512)
        assert len(e.value.good) < 3000


@needs_mpy
def test_write_file_is_atomic_and_exact(unit):
    data = bytes(range(256)) * 40
    with UnitLink(unit.pty_path) as link:
        link.write_file("x.bin", data)
    assert (unit.root / "x.bin").read_bytes() == data
    assert not (unit.root / "x.bin.tmp").exists()


@needs_mpy
def test_busy_port_names_the_usual_holders(unit):
    with serial.Serial(unit.pty_path, exclusive=True):
        with pytest.raises(UserError) as e:
            UnitLink(unit.pty_path)
    assert "busy" in str(e.value) and "ModemManager" in str(e.value) and e.value.code == EXIT_NO_UNIT


def test_silent_port_is_not_a_micropython_repl():
    master, slave = os.openpty()
    try:
        link = UnitLink(os.ttyname(slave), timeout=1)
        with pytest.raises(LinkError) as e:
            link.enter_raw()
        assert "does not answer like MicroPython" in str(e.value) and e.value.code == EXIT_LINK
        link.close()
    finally:
        os.close(master)
        os.close(slave)


def test_open_errors_are_friendly():
    assert "dialout" in str(open_error("/dev/ttyUSB0", PermissionError(errno.EACCES, "Permission denied")))
    assert "plugged in" in str(open_error("/dev/ttyUSB9", FileNotFoundError(errno.ENOENT, "No such file")))
    busy = open_error("/dev/ttyUSB0", serial.SerialException("Could not exclusively lock port /dev/ttyUSB0"))
    assert "busy" in str(busy)
    with pytest.raises(UserError) as e:
        UnitLink("/dev/definitely-not-a-port")
    assert e.value.code == EXIT_NO_UNIT


def test_usb_ids_and_port_resolution(monkeypatch, tmp_path):
    assert usb_kind(0x10C4, 0xEA60) == "CP210x"
    assert usb_kind(0x1A86, 0x7523) == "CH340"
    assert usb_kind(0x303A, 0x1001) == "Espressif USB"
    assert usb_kind(0x046D, 0xC52B) is None
    assert resolve_port("/dev/ttyX") == "/dev/ttyX"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    with pytest.raises(UserError) as e:
        resolve_port(None)
    assert e.value.code == EXIT_NO_UNIT and "--port" in str(e.value)
