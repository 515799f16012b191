"""config, clock, doctor, monitor and ports against the real firmware on a pty (tests/host/ptyunit.py), through
the unit's host service while its app runs; and their pure decision logic."""

from __future__ import annotations

import json
import threading
import time

import pytest
from mausbox.cli import main
from mausbox.cmd_doctor import diagnose
from mausbox.cmd_monitor import format_line
from mausbox.mpbuild import micropython_binary
from ptyunit import PtyUnit

needs_mpy = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

# a Mausgeflippt game started at the buttons: game card, two players join, double press to start
START = [{"at_ms": 0, "tap": "game/mausgeflippt"}, {"at_ms": 300, "remove": "game/mausgeflippt"},
         {"at_ms": 1000, "press": 1}, {"at_ms": 1080, "release": 1}, {"at_ms": 1600, "press": 2},
         {"at_ms": 1680, "release": 2}, {"at_ms": 2200, "press": 1}, {"at_ms": 2280, "release": 1},
         {"at_ms": 2400, "press": 1}, {"at_ms": 2480, "release": 1}]


@pytest.fixture(scope="module")
def unit(tmp_path_factory):
    with PtyUnit(tmp_path_factory.mktemp("cmds") / "unit") as u:
        assert u.ready, u.text()
        yield u


@needs_mpy
def test_config_round_trip(unit, capsys):
    port = unit.port
    assert main(["config", "--port", port, "set", "volume", "1"]) == 0
    assert main(["config", "--port", port, "set", "hints", "on"]) == 0
    assert main(["config", "set", "lang", "en", "--port", port]) == 0
    capsys.readouterr()
    assert main(["config", "--port", port, "--json", "get"]) == 0
    values = json.loads(capsys.readouterr().out)["values"]
    assert values["volume"] == 1 and values["hints"] is True and values["lang"] == "en"
    saved = json.loads((unit.root / "settings.json").read_text())
    assert saved["volume"] == 1
    assert main(["config", "--port", port, "get", "volume"]) == 0
    assert capsys.readouterr().out.strip() == "1"
    assert main(["config", "--port", port, "reset", "--yes"]) == 0
    assert json.loads((unit.root / "settings.json").read_text())["volume"] == 2
    assert "Traceback" not in unit.text() and unit.alive()  # the app answered all of it and runs on


@needs_mpy
def test_config_refuses_bad_values_before_sending(unit, capsys):
    before = unit.rx
    assert main(["config", "--port", unit.port, "set", "volume", "9"]) == 2
    assert "volume must be 0..3" in capsys.readouterr().err
    assert main(["config", "--port", unit.port, "set", "colour", "red"]) == 2
    assert "no setting 'colour'" in capsys.readouterr().err
    assert main(["config", "--port", unit.port, "set", "hints", "maybe"]) == 2
    assert unit.rx == before  # nothing reached the unit


@needs_mpy
def test_clock_set_and_show(unit, capsys):
    assert main(["clock", "--port", unit.port, "--json", "set"]) == 0
    assert abs(json.loads(capsys.readouterr().out)["off_by_s"]) <= 2
    assert "offset_s" in json.loads((unit.root / "clock.json").read_text())
    assert main(["clock", "set", "--utc", "--port", unit.port]) == 0
    assert main(["clock", "show", "--port", unit.port, "--json"]) == 0
    assert abs(json.loads(capsys.readouterr().out.splitlines()[-1])["off_by_s"]) <= 2 + 86400 // 2  # UTC now
    assert main(["clock", "set", "--port", unit.port]) == 0


@needs_mpy
def test_doctor_reads_the_units_status(unit, capsys):
    assert main(["doctor", "--port", unit.port, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["status"]["board"] == "sim" and out["unit"]["app"] is True
    assert out["live"]["mode"] == "menu" and out["live"]["mem_free"] > 0
    assert main(["doctor", "--port", unit.port]) == 0
    assert "doctor: all good" in capsys.readouterr().out


def test_doctor_findings_say_what_to_do():
    ok = {"version": "1.0", "board": "esp32-devkitc", "rfid_version": 0x92, "piezo_baseline": 30000, "stuck": [],
          "safe_mode": False, "free_bytes": 1_000_000}
    assert all(f["ok"] for f in diagnose(ok, "1.29.0", None, "1.0"))
    bad = dict(ok, version="0.9", rfid_version=0, piezo_baseline=65535, stuck=[2, 5], free_bytes=10_000)
    failed = {f["check"]: f for f in diagnose(bad, "1.29.0", None, "1.0") if not f["ok"]}
    assert set(failed) == {"firmware", "rfid", "piezo", "buttons", "flash"}
    assert "deploy" in failed["firmware"]["fix"] and "SPI" in failed["rfid"]["fix"]
    assert "player 2, 5" in failed["buttons"]["detail"]
    safe = {f["check"]: f for f in diagnose(dict(ok, safe_mode=True, crashes=3), "1.29.0", None, "1.0")}
    assert not safe["safe mode"]["ok"] and "clear_safe_mode" in safe["safe mode"]["fix"]
    assert not {f["check"]: f for f in diagnose(None, "1.29.0", None, "1.0")}["firmware"]["ok"]
    # a status.json of an earlier boot (this one crashed or hung before its self-test) is never "all good"
    now = dict(ok, boot="0a0b0c0d")
    assert all(f["ok"] for f in diagnose(now, "1.29.0", None, "1.0", {"boot": "0a0b0c0d", "crashes": 1}))
    for old in (dict(ok, boot="01020304"), ok):
        stale = {f["check"]: f for f in diagnose(old, "1.29.0", None, "1.0", {"boot": "0a0b0c0d", "crashes": 2})}
        assert not stale["boot"]["ok"] and "2 boot(s) in a row" in stale["boot"]["detail"], stale
        assert "rfid" not in stale and "monitor" in stale["boot"]["fix"]


def test_monitor_line_formatting():
    ev, text = format_line('EV {"k":"press","p":2}')
    assert ev == {"k": "press", "p": 2} and text == '{"k":"press","p":2}'
    assert format_line("EV {broken")[0] is None
    assert format_line("some debug print") == (None, None)
    assert format_line("some debug print", raw=True) == (None, "some debug print")
    assert format_line("SELFTEST rfid: no answer")[1] == "SELFTEST rfid: no answer"


@needs_mpy
def test_monitor_shows_a_game_as_it_is_played(unit, capsys):
    unit.play(START, time.monotonic() + 1.5)
    assert main(["monitor", "--port", unit.port, "--json", "--count", "2", "--seconds", "60"]) == 0
    events = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    assert [e["type"] for e in events] == ["game_start", "prompt"]
    assert all("crc" in e for e in events)  # the log's own records, each with its checksum
    # the monitor may hear a record before the unit's flash write of it is whole: wait for the file to have it
    end = time.monotonic() + 60
    while len(log := unit.records(unit.logs()[-1])) < 2 and time.monotonic() < end:
        time.sleep(0.1)
    assert [r["seq"] for r in log[:2]] == [e["seq"] for e in events]
    assert "game_abort" not in [r["type"] for r in log]
    # the game is still on: no monitor, no command stopped it
    assert main(["ports", "--no-probe", "--json"]) == 0


@needs_mpy
def test_ports_lists_a_registered_unit_and_commands_find_it(unit, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    unit.register(tmp_path / "data")
    assert main(["ports", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1 and rows[0]["device"] == unit.port and rows[0]["kind"] == "virtual"
    assert rows[0]["state"] == "unit" and rows[0]["firmware"] and rows[0]["mode"] in ("menu", "play", "end")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["ports"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(unit.port) and all(len(ln) <= 80 for ln in out.splitlines()), out
    assert f"unit {rows[0]['unit']}" in " ".join(out.split())  # wrapped, nothing lost
    assert main(["config", "get", "volume"]) == 0  # without --port: the only unit


def test_ports_without_units(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    assert main(["ports"]) == 0
    assert "no units" in capsys.readouterr().out
    assert main(["doctor"]) == 3
    assert "no unit found" in capsys.readouterr().err


@needs_mpy
def test_monitor_waits_for_a_unit_that_went_away(tmp_path, capsys):
    link = str(tmp_path / "ttyUNIT")
    root = tmp_path / "unit"
    first = PtyUnit(root, link=link)
    first.start()
    done = threading.Event()

    def replug():
        time.sleep(2.0)
        first.stop()  # unplugged: the port disappears
        time.sleep(1.0)
        with PtyUnit(root, link=link, prepare=False) as again:  # plugged in again: a new pty, the same name
            again.play(START)
            done.wait(60)

    t = threading.Thread(target=replug)
    t.start()
    try:
        assert main(["monitor", "--port", link, "--json", "--count", "1", "--seconds", "60", "--timeout", "2"]) == 0
    finally:
        done.set()
        t.join()
        first.stop()
    out = capsys.readouterr()
    assert "lost" in out.err or "does not answer" in out.err
    assert json.loads(out.out.strip().splitlines()[-1])["type"] == "game_start"
