"""`logs pull` and `deploy` show a progress bar (bytes, rate, time left) on a terminal, and nothing of it with
--json or when their output is not a terminal; and old firmware gets a clear message."""

from __future__ import annotations

import io
import os
import random
import select
import subprocess
import sys
import time

import pytest
from mausbox.mpbuild import micropython_binary
from mausbox.progress import Bar
from test_logs_pull import make_log, write_unit

needs_mpy = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


def test_the_bar_says_bytes_rate_and_time_left():
    out = io.StringIO()
    bar = Bar("pull", 200_000, stream=out, min_interval=0)
    bar.t0 -= 2.0  # two seconds in
    bar.set(50_000)
    line = out.getvalue()
    assert line.startswith("\r") and "48.8 kB/195.3 kB" in line and "24.4 kB/s" in line and "0:06 left" in line
    bar.close()
    assert out.getvalue().endswith("\r")
    quiet = io.StringIO()
    Bar("x", 10, enabled=False, stream=quiet).set(5)
    assert quiet.getvalue() == ""


def test_the_bar_fits_80_columns_and_redraws_in_place(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    bar = Bar("/dev/serial/by-id/usb-Silicon_Labs_CP2102_USB_to_UART_Bridge_0001 00012-mim.jsonl", 0,
              stream=out, min_interval=0, scope="in all")
    bar.t0 -= 3.0
    for done, total in ((10, 40_000), (9_000, 40_000), (39_000_000, 41_000_000), (41_000_000, 41_000_000)):
        bar.set(done, total)
    draws = out.getvalue().split("\r")[1:]
    assert draws and all(len(d) <= 79 for d in draws), [len(d) for d in draws]  # never the last column: no wrap
    assert all("\n" not in d for d in draws)
    assert all(d.rstrip().endswith("left") and "in all" in d for d in draws)  # the counter says it is every log's
    assert all("00012-mim.jsonl" in d for d in draws)  # a long label loses its start, never the file's name
    assert Bar("x", 10).line(width=40).__len__() <= 40


def _run_on_a_terminal(args: list[str], env: dict) -> tuple[int, bytes, bytes]:
    """The command with its standard error on a pty (a terminal), standard output piped."""
    m, s = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "mausbox", *args], stdout=subprocess.PIPE, stderr=s, env=env)
    os.close(s)
    err = b""
    while True:
        r, _, _ = select.select([m], [], [], 0.2)
        if m in r:
            try:
                chunk = os.read(m, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            err += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read() if proc.stdout else b""
    proc.wait(timeout=60)
    os.close(m)
    return proc.returncode, out, err


@needs_mpy
def test_logs_pull_shows_a_bar_on_a_terminal_only(tmp_path):
    from ptyunit import PtyUnit

    root = tmp_path / "unit"
    write_unit(root, {"00001-mg.jsonl": make_log(random.Random(5), 3000)})
    env = dict(os.environ, COLUMNS="80")
    with PtyUnit(root) as unit:
        rc, out, err = _run_on_a_terminal(["logs", "pull", "--port", unit.port, "--store", str(tmp_path / "a")],
                                          env)
        assert rc == 0 and b"1 pulled" in out, out + err
        assert b"00001-mg.jsonl [" in err and b"/s" in err and b"left" in err  # the bar, on the terminal
        draws = [d for d in err.split(b"\r") if d.strip()]
        assert draws and all(len(d.decode()) <= 79 for d in draws), draws  # never wraps at 80 columns
        assert all(b"in all" in d for d in draws)  # the counter is every log's, and says so
        assert b"left" not in out
        rc, out, err = _run_on_a_terminal(["logs", "pull", "--port", unit.port, "--store", str(tmp_path / "b" / "logs.sqlite"),
                                           "--json"], env)
        assert rc == 0 and err == b"" and b"left" not in out and out.lstrip().startswith(b"[")
        piped = subprocess.run([sys.executable, "-m", "mausbox", "logs", "pull", "--port", unit.port, "--store",
                                str(tmp_path / "c" / "logs.sqlite")], capture_output=True, env=env, timeout=120)
        assert piped.returncode == 0 and piped.stderr == b"" and b"\r" not in piped.stdout


@needs_mpy
def test_deploy_shows_a_bar_on_a_terminal(tmp_path):
    from mausbox.sim.serial import SerialUnit

    root = tmp_path / "unit"
    root.mkdir()
    with SerialUnit(root, heapsize="512k") as unit:
        rc, out, err = _run_on_a_terminal(["deploy", "--port", unit.pty_path, "--no-confirm", "--timeout", "15"],
                                          dict(os.environ))
    assert rc == 0, out + err
    assert b"deploy [" in err and b"left" in err
    assert b"  sent maus/" not in out  # the bar instead of a line per file
    assert b"files sent" in out


@needs_mpy
def test_firmware_without_the_host_service_is_told_to_update(tmp_path, capsys):
    from mausbox.cli import main
    from mausbox.sim.serial import SerialUnit

    root = tmp_path / "unit"
    (root / "maus").mkdir(parents=True)
    (root / "maus" / "__init__.py").write_text("VERSION = '0.0.9'\n")  # an old firmware: no maus/host/service
    # ...whose app plays and prints, but never reads the console
    (root / "main.py").write_text("import time\nprint('MAUSBOX READY 0.0.9')\nfor i in range(100000):\n"
                                  "    print('EV {\"seq\":%d}' % i)\n    time.sleep_ms(100)\n")
    with SerialUnit(root) as unit:
        time.sleep(1.0)
        assert main(["doctor", "--port", unit.pty_path, "--timeout", "2"]) == 4
        err = capsys.readouterr().err
        assert "older than this host" in err and "mausbox deploy" in err
    (root / "main.py").unlink()  # the same firmware, stopped: the REPL shows
    with SerialUnit(root) as unit:
        assert main(["doctor", "--port", unit.pty_path, "--timeout", "5"]) == 4
        err = capsys.readouterr().err
        assert "no host service" in err and "mausbox deploy" in err
