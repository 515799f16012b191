"""Deploy checks what it wrote and never succeeds with a file that differs; a command damaged on the way to the
unit is refused by the unit (maus.host.cexec) and sent again, never run. Over the virtual unit, with damage made at
the bytes (a faulty relay) or in what the unit stores."""

from __future__ import annotations

import pytest
from mausbox.cli import main
from mausbox.deploy import deploy
from mausbox.link import UnitLink
from mausbox.link.repl import RawRepl
from mausbox.mpbuild import micropython_binary
from mausbox.paths import FIRMWARE_PKG
from mausbox.sim.relay import FaultyRelay
from mausbox.sim.serial import SerialUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")
FILES = {"maus/" + n: (FIRMWARE_PKG / n).read_bytes() for n in ("log/read.py", "ticks.py")}


def _unit(tmp_path):
    root = tmp_path / "unit"
    root.mkdir()
    return root, SerialUnit(root, heapsize="512k", extra_path=[])


def test_a_damaged_command_is_refused_and_sent_again_never_run(tmp_path):
    root, unit = _unit(tmp_path)
    with unit, FaultyRelay(unit.pty_path, rate=0) as rl, UnitLink(rl.port, timeout=5) as link:
        repl = link.repl()
        repl.enter_raw()
        assert repl.exec("print(1)").strip() == b"1"  # the checker is armed
        # a bit flipped at each place of the command in turn: the wrapper, the code, its checksum
        for ahead in (4, 12, 30, 60, 75):
            rl.flip_at(ahead)
            out = repl.exec("f=open('ran.txt','a')\nf.write('x')\nf.close()\nprint('done')")
            assert out.strip() == b"done"
        assert (root / "ran.txt").read_text() == "x" * 5  # each ran once, as sent: never a damaged one
        assert repl.refused == 5


def test_the_host_service_start_is_checked_too(tmp_path, monkeypatch):
    root, unit = _unit(tmp_path)
    (root / "maus").mkdir()
    (root / "maus" / "__init__.py").write_text("")
    (root / "maus" / "host").mkdir()
    (root / "maus" / "host" / "repl.py").write_text("import time\ndef serve():\n while True:\n  time.sleep(0.05)\n")
    starts = []
    real = RawRepl.start_exec

    def damaged_once(self, code):
        starts.append(code)
        if len(starts) == 1:  # the command arrives damaged: its checksum cannot match
            self._arm()
            return self._start(b"_mbx_x(%r,1,globals())\n" % code.encode())
        return real(self, code)

    monkeypatch.setattr(RawRepl, "start_exec", damaged_once)
    with unit, UnitLink(unit.pty_path, timeout=5) as link:
        link.recover()
        assert link.served and len(starts) == 2 and link.repl().refused == 1
        link.served = False
        link.repl().recover()  # Ctrl-C: the fake service ends


def _garble_writes(monkeypatch, times: int):
    """The unit stores something else than it was sent (a flash fault, or damage the command check cannot see):
    the first `times` writes of a file arrive with one byte changed."""
    real = RawRepl.write_file
    left = {"n": times}

    def write_file(self, path, data, **kw):
        if left["n"] > 0 and len(data) > 10:
            left["n"] -= 1
            data = data[:5] + bytes([data[5] ^ 0x20]) + data[6:]
        return real(self, path, data, **kw)

    monkeypatch.setattr(RawRepl, "write_file", write_file)


def test_a_file_that_differs_after_writing_is_sent_again(tmp_path, monkeypatch):
    root, unit = _unit(tmp_path)
    _garble_writes(monkeypatch, 2)
    said = []
    with unit, UnitLink(unit.pty_path, timeout=5) as link:
        rep = deploy(link, say=said.append, confirm_s=0, mip=False, only=FILES)
    for p, d in FILES.items():
        assert (root / p).read_bytes() == d
    assert any("differ on the unit" in s for s in said) and any("sent again" in n for n in rep.notes)


def test_deploy_fails_loudly_when_a_file_keeps_differing(tmp_path, monkeypatch, capsys):
    root, unit = _unit(tmp_path)
    _garble_writes(monkeypatch, 10**6)
    monkeypatch.setattr("mausbox.deploy.firmware_files", lambda platform, mpy, board: (dict(FILES), "test"))
    with unit:
        rc = main(["deploy", "--port", unit.pty_path, "--no-confirm", "--no-mip", "--timeout", "5"])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "FAILED" in err and "maus/log/read.py" in err and "still differ" in err
    assert "Traceback" not in err


def test_deploys_over_a_faulty_link_never_succeed_with_a_mismatch(tmp_path):
    # `make bench` runs 200 of these; here four
    root, unit = _unit(tmp_path)
    results = []
    with unit, FaultyRelay(unit.pty_path, rate=0.08, seed=5) as rl:
        for _ in range(4):
            for p in FILES:
                (root / p).unlink(missing_ok=True)
            try:
                with UnitLink(rl.port, timeout=0.5) as link:
                    deploy(link, say=lambda *a: None, confirm_s=0, mip=False, only=FILES)
                ok = True
            except Exception as e:  # noqa: BLE001 - a loud failure is allowed; a quiet mismatch is not
                assert getattr(e, "code", None) in (1, 4), e
                ok = False
            results.append((ok, all((root / p).is_file() and (root / p).read_bytes() == d for p, d in FILES.items())))
        assert rl.faults > 0, (rl.kilobytes, rl.up, rl.down, results)
    assert all(same for ok, same in results if ok), results


def test_deploys_over_the_bench_line_succeed(tmp_path):
    """The pull bench's line (2 % of kilobytes flipped, dropped or sent twice, both ways; here 5 % so that four
    deploys meet faults): each deploy ends in success, every file as the host's. Recovery sends filler before its
    Ctrl-Cs, so a dropped kilobyte takes the filler, not the interrupt (bounds.py RECOVER_PAD)."""
    root, unit = _unit(tmp_path)
    results = []
    with unit, FaultyRelay(unit.pty_path, rate=0.05, seed=7) as rl:
        for _ in range(4):
            for p in FILES:
                (root / p).unlink(missing_ok=True)
            with UnitLink(rl.port, timeout=0.5) as link:
                deploy(link, say=lambda *a: None, confirm_s=0, mip=False, only=FILES)
            results.append(all((root / p).is_file() and (root / p).read_bytes() == d for p, d in FILES.items()))
        assert rl.faults > 0, (rl.kilobytes, rl.up, rl.down)
    assert all(results), results
