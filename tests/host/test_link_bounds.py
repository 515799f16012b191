"""Every host command ends within its bounds against a unit that answers `hello` and then keeps sending
without progressing: the same valid frame forever (the progress bound), or new frames too slowly to ever end
(the total bound). Exit 4, one line naming the port and the request awaited."""

from __future__ import annotations

import pytest
from hostile import Hostile
from mausbox.cli import EXIT_LINK, main

COMMANDS = [["doctor"], ["config", "get"], ["logs", "pull"], ["clock", "show"], ["cards", "list"]]


def _run(capsys, tmp_path, dev, cmd, timeout):
    extra = ["--store", str(tmp_path / "s.sqlite")] if cmd[0] == "logs" else []
    rc = main([*cmd, "--port", dev.port, "--timeout", str(timeout), *extra])
    out = capsys.readouterr()
    return rc, (out.out + out.err).strip()


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c))
def test_the_same_valid_frame_forever_is_cut_off(cmd, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    dev = Hostile("same")
    try:
        rc, said = _run(capsys, tmp_path, dev, cmd, 1)
    finally:
        dev.close()
    assert rc == EXIT_LINK, (cmd, rc, said)
    assert dev.port in said and "no progress on `" in said and "within 1 s" in said, said
    assert len(said.splitlines()) == 1, said


@pytest.mark.parametrize("cmd", [["doctor"], ["logs", "pull"]], ids=lambda c: " ".join(c))
def test_new_frames_too_slow_to_ever_end_are_cut_off(cmd, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    dev = Hostile("endless")
    try:
        rc, said = _run(capsys, tmp_path, dev, cmd, 0.5)
    finally:
        dev.close()
    assert rc == EXIT_LINK, (cmd, rc, said)
    assert dev.port in said and "did not finish within its bound of 2" in said, said
    assert len(said.splitlines()) == 1, said
