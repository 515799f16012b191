"""Every host command ends within its bounds against a unit that answers `hello` and then keeps sending
without progressing: the same valid frame forever (the progress bound), or new frames too slowly to ever end
(the total bound). Exit 4, one line naming the port and the request awaited."""

from __future__ import annotations

import pytest
from hostile import Hostile
from mausbox.cli import EXIT_LINK, main
from mausbox.link.bounds import LIST_TRIES_ALIVE

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
    # a listing resumed behind entries it has takes no part that does not say where it starts: the same part
    # again is no progress, so each attempt asks twice at most (not once per resume, 9 times)
    assert dev.ops.count("logs") <= 2 * LIST_TRIES_ALIVE, dev.ops.count("logs")


@pytest.mark.parametrize("cmd,why", [(["doctor"], "no progress on `status` within 0.5 s"),
                                     (["logs", "pull"], "did not finish within its bound of 2")],
                         ids=["doctor", "logs pull"])
def test_new_frames_too_slow_to_ever_end_are_cut_off(cmd, why, tmp_path, capsys, monkeypatch):
    """`status` has no parts: new ones are no progress either. A listing's new entries are, but a trickle of
    them hits the total bound."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    dev = Hostile("endless")
    try:
        rc, said = _run(capsys, tmp_path, dev, cmd, 0.5)
    finally:
        dev.close()
    assert rc == EXIT_LINK, (cmd, rc, said)
    assert dev.port in said and why in said, said
    assert len(said.splitlines()) == 1, said


@pytest.mark.parametrize("cmd", [["config", "get"], ["doctor"], ["logs", "pull"]], ids=lambda c: " ".join(c))
def test_two_valid_frames_taking_turns_are_cut_off_at_the_progress_bound(cmd, tmp_path, capsys, monkeypatch):
    """Two valid frames of the answer taking turns (~2.3 KB/s) bring something new only once each: the wait
    ends one timeout after the second (docs/protocol.md, Timing), not when the answer would pass 1 MB. The
    device is still sending when the command gives up, so the bound ended it, not the device."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    dev = Hostile("alternate")
    try:
        rc, said = _run(capsys, tmp_path, dev, cmd, 0.5)
        still = not dev._stop and dev._t.is_alive()
    finally:
        dev.close()
    assert still
    assert rc == EXIT_LINK, (cmd, rc, said)
    op = {"config": "settings", "doctor": "status", "logs": "logs"}[cmd[0]]
    assert dev.port in said and f"no progress on `{op}` within 0.5 s" in said, said
    assert len(said.splitlines()) == 1, said


def test_a_unit_repeating_an_old_answer_is_not_said_to_send_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    dev = Hostile("stale")
    try:
        rc, said = _run(capsys, tmp_path, dev, ["config", "get"], 0.5)
    finally:
        dev.close()
    assert rc == EXIT_LINK, said
    assert "sent nothing" not in said and "answer no request of this session" in said, said
    assert len(said.splitlines()) == 1, said
