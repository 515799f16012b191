"""config, clock, doctor, monitor and ports against the virtual unit's pty, and their pure decision logic."""

from __future__ import annotations

import json
import shutil
import threading
import time

import pytest
import serial
from mausbox.cli import main
from mausbox.cmd_doctor import diagnose
from mausbox.cmd_monitor import format_line
from mausbox.paths import FIRMWARE_PKG, micropython_binary
from mausbox.sim.serial import SerialUnit

needs_mpy = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


@pytest.fixture
def unit(tmp_path):
    """A virtual unit with the settings module installed (sources), no game running."""
    (tmp_path / "maus").mkdir()
    for name in ("__init__.py", "settings.py", "logstore.py"):
        shutil.copy(FIRMWARE_PKG / name, tmp_path / "maus" / name)
    with SerialUnit(tmp_path) as u:
        yield u


@needs_mpy
def test_config_round_trip(unit, capsys):
    port = unit.pty_path
    assert main(["config", "--port", port, "set", "volume", "1"]) == 0
    assert main(["config", "--port", port, "set", "hints", "on"]) == 0
    assert main(["config", "--port", port, "set", "lang", "en"]) == 0
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


@needs_mpy
def test_config_refuses_bad_values_before_sending(unit, capsys):
    before = unit.rx_bytes
    assert main(["config", "--port", unit.pty_path, "set", "volume", "9"]) == 2
    assert "volume must be 0..3" in capsys.readouterr().err
    assert main(["config", "--port", unit.pty_path, "set", "colour", "red"]) == 2
    assert "no setting 'colour'" in capsys.readouterr().err
    assert main(["config", "--port", unit.pty_path, "set", "hints", "maybe"]) == 2
    assert unit.rx_bytes == before  # nothing reached the unit
    assert not (unit.root / "settings.json").exists()


@needs_mpy
def test_clock_set_on_the_virtual_unit(unit, capsys):
    assert main(["clock", "--port", unit.pty_path, "--json", "set"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert abs(res["off_by_s"]) <= 2
    assert "offset_s" in json.loads((unit.root / "clock.json").read_text())
    assert main(["clock", "--port", unit.pty_path, "set", "--utc"]) == 0


@needs_mpy
def test_doctor_reads_status_json(unit, capsys):
    assert main(["doctor", "--port", unit.pty_path, "--json"]) == 1  # no status yet
    out = json.loads(capsys.readouterr().out)
    assert not out["ok"] and any("mausbox deploy" in f["fix"] for f in out["findings"])
    import maus

    status = {"version": maus.VERSION, "board": "sim", "rfid_version": 0x92, "piezo_baseline": 30000,
              "stuck": [], "safe_mode": False, "free_bytes": 500_000, "problems": []}
    (unit.root / "status.json").write_text(json.dumps(status))
    assert main(["doctor", "--port", unit.pty_path]) == 0
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


def test_monitor_line_formatting():
    ev, text = format_line('EV {"k":"press","p":2}')
    assert ev == {"k": "press", "p": 2} and text == '{"k":"press","p":2}'
    assert format_line("EV {broken")[0] is None
    assert format_line("some debug print") == (None, None)
    assert format_line("some debug print", raw=True) == (None, "some debug print")
    assert format_line("SELFTEST rfid: no answer")[1] == "SELFTEST rfid: no answer"


@needs_mpy
def test_monitor_shows_events_without_interrupting(tmp_path, capsys):
    (tmp_path / "main.py").write_text(
        "import time\ntime.sleep_ms(1500)\nprint('MAUSBOX READY 0.0.1')\n"
        "for i in range(400):\n    print('EV {\"k\":\"tick\",\"i\":%d}' % i)\n    time.sleep_ms(10)\n"
        "print('done')\n")
    with SerialUnit(tmp_path) as unit:
        assert main(["monitor", "--port", unit.pty_path, "--json", "--count", "5"]) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        events = [json.loads(x) for x in lines]
        assert [e["k"] for e in events] == ["tick"] * 5
        assert events == sorted(events, key=lambda e: e["i"])
        # the game kept running: the monitor sent nothing
        assert unit.rx_bytes == 0


@needs_mpy
def test_monitor_waits_through_a_soft_reboot(tmp_path, capsys):
    (tmp_path / "main.py").write_text(
        "import time\nfor i in range(1000):\n    print('EV {\"i\":%d}' % i)\n    time.sleep_ms(20)\n")
    with SerialUnit(tmp_path) as unit:
        def reboot():
            time.sleep(0.8)
            with serial.Serial(unit.pty_path) as p:  # a second program resets the unit (no exclusive lock)
                p.write(b"\x03")
                time.sleep(0.3)
                p.write(b"\x04")
        t = threading.Thread(target=reboot)
        t.start()
        assert main(["monitor", "--port", unit.pty_path, "--json", "--seconds", "3"]) == 0
        t.join()
    idx = [json.loads(x)["i"] for x in capsys.readouterr().out.strip().splitlines()]
    assert idx[0] < 5 and 0 in idx[1:]  # numbering starts again after the reboot: it kept listening


@needs_mpy
def test_ports_lists_a_registered_virtual_unit(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    root = tmp_path / "root"
    (root / "maus").mkdir(parents=True)
    (root / "maus" / "__init__.py").write_text("VERSION = '7.7.7'\n")
    with SerialUnit(root, register=True) as unit:
        assert main(["ports", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert len(rows) == 1
        assert rows[0]["device"] == unit.pty_path and rows[0]["kind"] == "virtual"
        assert rows[0]["state"] == "unit" and rows[0]["firmware"] == "7.7.7"
        # and a command without --port finds it as the only unit
        assert main(["config", "get"]) != 3


def test_ports_without_units(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [])
    assert main(["ports"]) == 0
    assert "no units" in capsys.readouterr().out
    assert main(["doctor"]) == 3
    assert "no unit found" in capsys.readouterr().err


@needs_mpy
def test_monitor_reconnects_after_the_port_goes_away(tmp_path, capsys):
    (tmp_path / "main.py").write_text(
        "import time\nfor i in range(1000):\n    print('EV {\"i\":%d}' % i)\n    time.sleep_ms(20)\n")
    link = str(tmp_path / "ttyUNIT")
    first = SerialUnit(tmp_path, link=link)
    first.start()

    def replug():
        time.sleep(1.0)
        first.stop()  # unplugged: the port disappears
        time.sleep(1.0)
        with SerialUnit(tmp_path, link=link):  # plugged in again (a new pty behind the same name)
            time.sleep(2.0)

    t = threading.Thread(target=replug)
    t.start()
    try:
        assert main(["monitor", "--port", link, "--json", "--seconds", "3.8"]) == 0
    finally:
        t.join()
        first.stop()
    captured = capsys.readouterr()
    idx = [json.loads(x)["i"] for x in captured.out.strip().splitlines()]
    assert "reconnected" in captured.err
    restart = [k for k in range(1, len(idx)) if idx[k] < idx[k - 1]]
    assert restart  # numbering starts again: events of the new unit arrived after the replug
