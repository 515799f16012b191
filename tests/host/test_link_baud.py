"""The faster line (docs/protocol.md, `baud`): after hello the host and the unit agree on 921,600 baud, and each
goes back to 115,200 by itself when the line cannot carry it. On the virtual unit (host/mausbox/sim/serial.py) the
bridge runs the unit's UART at the rate the firmware set with machine.UART(0, rate) and reads the host's from its
tty (the pty master's termios): bytes between two different rates arrive garbled, as on a wire; `bridge_max` is a
USB-serial bridge that cannot go faster. In-process (loopback.py): the host's side against firmware that has no
`baud`, a native USB console, a game."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import loopback
import pytest
import serial
from maus.host import service as hostsvc
from mausbox.cli import main
from mausbox.cmd_sim import served_unit
from mausbox.link import UnitLink
from mausbox.link.frame import REQUEST, RESPONSE, Parser, encode
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun
from test_logs_pull import make_log, write_unit

virtual = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


def unit_with(root: Path, logs: dict[str, bytes], **kw):
    """A virtual unit holding `logs`, its app running (as `mausbox sim --serial` serves it)."""
    simrun.prepare_root(root)
    write_unit(root, logs)
    return served_unit(root, simrun.DEFAULT_HEAP, **kw)


def until(cond, what, ceiling=60.0):
    end = time.monotonic() + ceiling  # a ceiling for a stuck test, never the measure
    while not cond():
        assert time.monotonic() < end, what
        time.sleep(0.02)


def _logs(seed: int) -> dict[str, bytes]:
    rng = random.Random(seed)
    return {"00001-mg.jsonl": make_log(rng, 300), "00002-mim.jsonl": make_log(rng, 40)}


@virtual
def test_a_pull_agrees_on_921600_and_brings_every_log(tmp_path, capsys):
    logs = _logs(1)
    root = tmp_path / "unit"
    with unit_with(root, logs, baud=115200) as unit:  # the line paced at the unit's rate, which the switch moves
        rc = main(["logs", "pull", "--port", unit.pty_path, "--store", str(tmp_path / "s.sqlite"), "--json", "-v"])
        err = capsys.readouterr().err
        assert rc == 0, err
        # switched after hello, and back at the session's end (the host closes the port as the unit switches)
        until(lambda: len(unit.rates) >= 2, "the unit back at 115200")
        assert unit.rates == [921600, 115200], (unit.rates, err)
        assert unit.garbled == 0  # no byte crossed between two rates: each end switched while the other was quiet
        assert "the line ran at 921600 baud" in err
        until(lambda: unit.host_rate() == 115200, "the host's port back at 115200")
    uid = json.loads((root / "status.json").read_text()).get("unit") or unit.unique_id
    for name, data in logs.items():
        assert (tmp_path / "raw" / uid / name).read_bytes() == data


@virtual
def test_a_bridge_that_cannot_do_921600_falls_back_and_the_pull_completes(tmp_path, capsys):
    logs = _logs(2)
    root = tmp_path / "unit"
    with unit_with(root, logs, bridge_max=115200) as unit:
        rc = main(["logs", "pull", "--port", unit.pty_path, "--store", str(tmp_path / "s.sqlite"), "--json", "-v"])
        err = capsys.readouterr().err
        assert rc == 0, err
        assert unit.rates == [921600, 115200], (unit.rates, err)  # the unit's switch, then its own way back
        assert unit.garbled > 0  # the host's hello at 921,600 reached it through a 115,200 bridge
        assert "no answer at 921600 baud" in err and "the line ran at 115200 baud" in err, err
    for name, data in logs.items():
        assert (tmp_path / "raw" / unit.unique_id / name).read_bytes() == data


@virtual
def test_through_the_faulty_relay_the_cable_carries_the_agreed_rate(tmp_path, capsys):
    from mausbox.sim.relay import FaultyRelay

    logs = _logs(3)
    with unit_with(tmp_path / "unit", logs) as unit, FaultyRelay(unit.pty_path, rate=0.0) as relay:
        rc = main(["logs", "pull", "--port", relay.port, "--store", str(tmp_path / "s.sqlite"), "-v"])
        err = capsys.readouterr().err
        assert rc == 0, err
        until(lambda: len(unit.rates) >= 2, "the unit back at 115200")
        assert unit.rates == [921600, 115200] and unit.garbled == 0, err
    for name, data in logs.items():
        assert (tmp_path / "raw" / unit.unique_id / name).read_bytes() == data


def _ask(port: serial.Serial, parser: Parser, seq: int, op: str, ceiling: float = 30.0, **args) -> dict | None:
    """One request over a plain pyserial port; its final answer, or None if none came within `ceiling`."""
    port.write(encode(REQUEST, seq, json.dumps(dict(op=op, **args)).encode()))
    end = time.monotonic() + ceiling
    while time.monotonic() < end:
        for item in parser.feed(port.read(4096)):
            if not isinstance(item, bytes) and item.seq == seq and item.kind == RESPONSE:
                return json.loads(item.payload)
    return None


@virtual
def test_the_unit_falls_back_alone_when_the_host_never_follows(tmp_path):
    root = tmp_path / "unit"
    with unit_with(root, {}) as unit, serial.Serial(unit.pty_path, 115200, timeout=0.05) as port:
        p = Parser()
        assert _ask(port, p, 1, "hello", host="t", proto=1)["ok"]
        ans = _ask(port, p, 2, "baud", rate=921600)  # answered at 115,200, before the unit switches
        assert ans["switch"] is True and ans["wait_ms"] == 2000
        until(lambda: unit.rates == [921600], "the unit switched")
        # The host stays at 115,200 and says nothing: no valid frame comes, and the unit goes back by itself.
        until(lambda: unit.rates == [921600, 115200], "the unit went back to 115200 by itself")
        assert unit.garbled == 0
        assert _ask(port, p, 3, "hello", host="t", proto=1)["ok"]


# --- the host's side, in-process: firmware without `baud`, a USB console, a game --------------------------------
class RateLoop(loopback.LoopSerial):
    """A loopback port with a rate: the unit's end follows console_baud (hostkit.Hw), this end `baudrate`; bytes
    between two different rates are garbled (hostkit.Console)."""

    def __init__(self, root, **kw):
        super().__init__(root, **kw)
        self.ctx.hw.con = self.con
        self.rates_set: list[int] = []

    @property
    def baudrate(self) -> int:
        return self.con.host_rate

    @baudrate.setter
    def baudrate(self, rate: int) -> None:
        self.rates_set.append(rate)
        self.con.host_rate = rate

    def reset_input_buffer(self) -> None:
        self.out.clear()


def _loop_link(root, **kw):
    ser = RateLoop(root, **kw)
    return UnitLink("loop", timeout=2.0, ser=ser, recover=False, fast=921600), ser


def test_in_process_the_switch_and_the_way_back(tmp_path):
    link, ser = _loop_link(tmp_path)
    info = link.hello()
    assert info["console"] == "uart" and link.rate == 921600 and ser.ctx.hw.rates == [921600]
    assert link.request("status")["ok"]  # at 921,600 on both ends
    link.close()
    assert ser.ctx.hw.rates == [921600, 115200] and ser.rates_set == [921600, 115200]


def test_firmware_without_baud_leaves_the_line_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(hostsvc, "_RARE", tuple(op for op in hostsvc._RARE if op != "baud"))  # an older unit
    link, ser = _loop_link(tmp_path)
    assert link.hello()["ok"] and link.rate == 115200 and ser.rates_set == [] and ser.ctx.hw.rates == []
    assert "op:" in link.rate_note
    assert link.request("status")["ok"]


def test_a_native_usb_console_or_a_game_is_not_asked(tmp_path):
    link, ser = _loop_link(tmp_path)
    ser.ctx.hw.board = {"family": "esp32s3", "usb_serial": True}
    assert link.hello()["console"] == "usb" and link.rate == 115200
    assert b'"baud"' not in bytes(ser.written) and "native USB" in link.rate_note
    link, ser = _loop_link(tmp_path / "g")
    ser.ctx.mode = "play"
    assert link.hello()["mode"] == "play" and link.rate == 115200 and b'"baud"' not in bytes(ser.written)


def test_after_a_long_quiet_the_host_finds_the_unit_gone_back(tmp_path):
    link, ser = _loop_link(tmp_path)
    link.hello()
    assert link.rate == 921600
    ser.svc.console(115200)  # the unit's service went quiet meanwhile (or a game began): its console is back
    link._rx_at -= 60  # the host has been quiet for a minute (a card to fetch, a game to wait for)
    assert link.request("status")["ok"]  # checked first at 921,600 (unheard), then asked at 115,200
    assert link.rate == 115200 and "went back" in link.rate_note and ser.rates_set == [921600, 115200]
