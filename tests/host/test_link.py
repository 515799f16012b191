"""The host link: its frame format (the same bytes the firmware's service makes), every command's bound
against a unit that is silent, drips a byte a second or prints forever, the REPL seen and recovered from,
protocol revisions, and port handling."""

from __future__ import annotations

import errno
import json
import os
import random
import threading
import time
import tty

import loopback
import pytest
import serial
from hostkit import frame as fw_frame
from hostkit import parse as fw_parse
from mausbox.cli import EXIT_LINK, EXIT_NO_UNIT, UserError, main
from mausbox.link import LinkError, NoService, Parser, UnitLink, encode, open_error, resolve_port, usb_kind
from mausbox.link.frame import escape, unescape


# --- frames -------------------------------------------------------------------------------------------
def test_frames_round_trip_and_match_the_firmwares():
    rng = random.Random(1)
    for _ in range(300):
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 600)))
        kind = rng.choice("QRPDE")
        seq = rng.randrange(0x10000)
        wire = encode(kind, seq, payload)
        assert wire == fw_frame(kind, seq, payload)  # one format: host and unit write the same bytes
        assert b"\r" not in wire
        p = Parser()
        cut = rng.randrange(len(wire) + 1)
        got = p.feed(wire[:cut]) + p.feed(wire[cut:])
        assert len(got) == 1 and got[0].payload == payload and chr(got[0].kind) == kind and got[0].seq == seq
        assert unescape(escape(payload)) == payload


def test_console_text_chatter_and_damage_are_never_frames():
    good = encode("R", 7, b'{"ok":true}')
    bad = bytearray(encode("R", 8, b'{"ok":true}'))
    bad[30] ^= 0x01
    chatter = (b"ets Jun  8 2016 00:22:57\r\n\r\nrst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
               b"#MB #MB1R 00zz\r\n>>> #MB1R 0001 ffff 00000000 \r\nEV {\"seq\":1}\r\n")
    p = Parser()
    out = []
    for b in chatter + bytes(bad) + good.replace(b"\n", b"\r\n") + b">>> ":
        out += p.feed(bytes([b]))  # one byte at a time, as a slow line delivers it
    frames = [x for x in out if not isinstance(x, bytes)]
    text = b"".join(x for x in out if isinstance(x, bytes))
    assert [(f.seq, f.payload) for f in frames] == [(7, b'{"ok":true}')] and p.bad == 1
    assert b"POWERON_RESET" in text and text.endswith(b">>> ") and b"EV {" in text


def test_the_firmwares_parser_reads_what_the_host_writes():
    wire = encode("D", 3, b"00000010" + bytes(range(256)))
    assert fw_parse(wire.replace(b"\n", b"\r\n"))[0] == [("D", 3, b"00000010" + bytes(range(256)))]


# --- through the service (in-process, tests/host/loopback.py) ---------------------------------------------
def test_requests_round_trip_and_errors(tmp_path):
    link, ser = loopback.link(tmp_path)
    info = link.hello()
    assert info["proto"] == 1 and info["mode"] == "menu" and info["unit"] == "010203040506"
    assert link.request("settings")["values"]["volume"] == 2
    from mausbox.link import UnitError

    with pytest.raises(UnitError) as e:
        link.request("set", key="volume", value=9)
    assert e.value.error == "value" and "0..3" in e.value.msg and e.value.code == 1
    with pytest.raises(UnitError) as e:
        link.request("warp")
    assert e.value.error == "op"


def test_revisions_that_do_not_meet_say_which_side_to_update(tmp_path):
    link, ser = loopback.link(tmp_path)
    ser.svc.op_hello = lambda req: {"proto": 3, "proto_min": 2}  # a newer unit
    with pytest.raises(LinkError) as e:
        link.hello()
    assert "update mausbox on this computer" in str(e.value)
    link, ser = loopback.link(tmp_path)
    with pytest.raises(LinkError) as e:
        link.write(encode("Q", 9, b'{"op":"hello"}', version=2))  # what a newer host sends an older unit
        link.hello_from = None
        f = link.next_frame(9, time.monotonic() + 1, "hello")
        raise LinkError(json.loads(f.payload)["msg"])
    assert "update the unit" in str(e.value)


# --- a unit at its REPL -------------------------------------------------------------------------------
class FakeRepl:
    """A friendly REPL at the far end of a pty: echoes every line and prompts; counts Ctrl-C."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        self.ctrl_c = 0
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        line = b""
        while not self._stop:
            import select

            r, _, _ = select.select([self.master], [], [], 0.05)
            if not r:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            for c in data:
                if c == 3:
                    self.ctrl_c += 1
                if c in (10, 13):
                    os.write(self.master, b"\r\n>>> ")
                    line = b""
                else:
                    line += bytes([c])
                    os.write(self.master, bytes([c]))

    def close(self):
        self._stop = True
        self._t.join(timeout=2)
        os.close(self.master)
        os.close(self.slave)


def test_a_repl_is_recognised_without_a_ctrl_c():
    repl = FakeRepl()
    try:
        t0 = time.monotonic()
        with UnitLink(repl.port, timeout=20, recover=False) as link:
            with pytest.raises(NoService) as e:
                link.hello()
        assert "REPL" in str(e.value) and time.monotonic() - t0 < 10  # seen at once, not at the timeout
        assert repl.ctrl_c == 0
        assert main(["ports", "--json", "--no-probe"]) == 0
    finally:
        repl.close()


# --- bounds: a silent, dripping or babbling device ---------------------------------------------------------
class Device:
    """The far end of a pty that never speaks the protocol: silent, a byte a second, or endless output."""

    def __init__(self, kind: str):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.port = os.ttyname(self.slave)
        self.kind = kind
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        n = 0
        while not self._stop:
            try:
                os.read(self.master, 65536)  # what the host sends goes nowhere
            except OSError:
                pass
            try:
                if self.kind == "drip":
                    os.write(self.master, b"#MB1R 0001 "[n % 11:n % 11 + 1])  # a frame that never completes
                    n += 1
                    time.sleep(1)
                    continue
                if self.kind == "flood":
                    os.write(self.master, b"Guru Meditation Error: Core 0 panic'ed #MB1R 0001 0002 \r\n" * 20)
            except OSError:
                pass
            time.sleep(0.01 if self.kind == "flood" else 0.05)

    def close(self):
        self._stop = True
        self._t.join(timeout=3)
        os.close(self.master)
        os.close(self.slave)


COMMANDS = [
    ["doctor"], ["config", "get"], ["clock", "set"], ["logs", "pull"], ["monitor", "--seconds", "30"],
    ["cards", "list"], ["deploy", "--no-mip"],
]


@pytest.mark.parametrize("kind", ["silent", "drip", "flood"])
def test_every_command_ends_within_its_timeout(kind, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    dev = Device(kind)
    try:
        for cmd in COMMANDS:
            extra = ["--store", str(tmp_path / "s.sqlite")] if cmd[0] == "logs" else []
            t0 = time.monotonic()
            rc = main([*cmd, "--port", dev.port, "--timeout", "1", *extra])
            took = time.monotonic() - t0
            out = capsys.readouterr()
            said = (out.out + out.err).strip()
            assert rc == EXIT_LINK, (cmd, rc, said)
            assert took < 30, (cmd, took)  # a ceiling for a loaded machine: a drip must not keep it waiting
            assert dev.port in said and ("within 1 s" in said or "no end of" in said), (cmd, said)
            assert len([x for x in said.splitlines() if x.strip()]) <= 2, (cmd, said)
        reg = tmp_path / "data" / "mausbox" / "units"  # `ports` lists it as a running virtual unit
        reg.mkdir(parents=True)
        (reg / "dev.json").write_text(json.dumps({"pty": dev.port, "link": None, "root": str(tmp_path),
                                                  "pid": os.getpid()}))
        monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
        t0 = time.monotonic()
        assert main(["ports", "--json", "--timeout", "1"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [r["state"] for r in rows] == ["no answer"] and time.monotonic() - t0 < 30
        assert dev.port in rows[0]["detail"] and "within 1 s" in rows[0]["detail"]
    finally:
        dev.close()


# --- ports ---------------------------------------------------------------------------------------------
def test_busy_port_names_the_usual_holders(tmp_path):
    dev = Device("silent")
    try:
        with serial.Serial(dev.port, exclusive=True):
            with pytest.raises(UserError) as e:
                UnitLink(dev.port)
        assert "busy" in str(e.value) and "ModemManager" in str(e.value) and e.value.code == EXIT_NO_UNIT
    finally:
        dev.close()


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


def test_a_port_that_goes_away_is_a_lost_link_not_a_quiet_one():
    # The link waits on the port's descriptor (not pyserial's timeout): a pty whose other end closed polls
    # readable with nothing to read, which must end the wait as LinkLost, never spin as a quiet line.
    import os

    from mausbox.link.unit import LinkLost, UnitLink

    master, slave = os.openpty()
    link = UnitLink(os.ttyname(slave), timeout=2.0, recover=False)
    try:
        os.write(master, b"abc")
        got = b""
        while len(got) < 3:
            got += link.read_raw(1.0)
        assert got == b"abc" and link.read_raw(0.05) == b""
        os.close(master)
        with pytest.raises(LinkLost):
            for _ in range(100):
                link.read_raw(0.05)
    finally:
        link.ser.close()
        os.close(slave)
