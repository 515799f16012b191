"""No traceback reaches the user from any input, and text from a device or a log never reaches the terminal
raw: garbled or hostile answers of a unit, odd destinations, planted symlinks, closed stdin and stdout;
`--json` output is the JSON alone."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import loopback
import pytest
from hostile import HELLO, Hostile, log_answers
from mausbox import logpull
from mausbox.cli import main
from mausbox.store import Store
from test_logs_pull import make_log, write_unit

ESC = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _said(capsys) -> tuple[str, str]:
    out = capsys.readouterr()
    return out.out, out.err


def _clean(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, text
    assert not any(c in text for c in RAW), repr(text)


CASES = {
    "status a list": (["doctor"], {"status": {"ok": True, "status": [1, 2], "free_bytes": 10}}),
    "status of wrong types": (["doctor"], {"status": {"ok": True, "free_bytes": "lots", "status": {
        "version": 5, "free_bytes": "x", "rfid_version": "x", "piezo_baseline": [1], "stuck": "1",
        "problems": [1, None, ESC], "safe_mode": "yes", "board": ESC}}}),
    "status a string": (["doctor"], {"status": {"ok": True, "status": ESC}}),
    "status not an object": (["doctor"], {"status": [1, 2]}),
    "settings a list": (["config", "get"], {"settings": {"ok": True, "values": [1, 2]}}),
    "settings with escapes": (["config", "get"], {"settings": {"ok": True, "values": {ESC: ESC, "volume": ESC},
                                                               "message": ESC}}),
    "an error with escapes": (["config", "get"], {"settings": {"ok": False, "error": ESC, "msg": ESC}}),
    "hello garbled": (["doctor"], {"hello": dict(HELLO, proto="x", proto_min=[1])}),
    "hello with escapes": (["doctor"], {"hello": dict(HELLO, platform=ESC, micropython=ESC, board=ESC),
                                        "status": {"ok": True, "status": None}}),
    "clock garbled": (["clock", "show"], {"clock": {"ok": True, "wall": ESC}}),
    "clock a number": (["clock", "show"], {"clock": {"ok": True, "wall": 5}}),
    "listing garbled": (["logs", "pull"], {"logs": {"ok": True, "n": "x"}}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_garbled_or_hostile_answers_give_a_line_not_a_traceback(case, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    cmd, answers = CASES[case]
    dev = Hostile("answers", answers)
    dev.chatter = ESC.encode() + b"\r\n"
    try:
        extra = ["--store", str(tmp_path / "s.sqlite")] if cmd[0] == "logs" else []
        rc = main([*cmd, "--port", dev.port, "--timeout", "2", *extra])
    finally:
        dev.close()
    out, err = _said(capsys)
    _clean(out + err)
    assert rc in (0, 1, 4), (rc, out, err)


def test_logs_with_escapes_are_shown_escaped_and_json_is_json_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from maus.log import writer as gamelog

    log = b"".join([
        gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mg" + ESC, "variant": ESC, "board": "sim", "unit": "u",
                                            "fw": ESC, "settings": {}, "wall": ESC, "ticks": 0,
                                            "players": [{"id": 1, "colour": ESC, "young": False}]}),
        gamelog.encode(1, 5, "press" + ESC, {"player": 1, "note": ESC}),
        gamelog.encode(2, 9, "game_end", {"scores": {"1": 3}, "winners": [1], "breakdown": {}, "why": ESC}),
    ])
    dev = Hostile("answers", log_answers({"00001-mg.jsonl": log}))
    dev.chatter = ESC.encode() + b" EV {}\r\n"  # console text around every answer
    store = str(tmp_path / "s.sqlite")
    try:
        assert main(["logs", "pull", "--json", "--port", dev.port, "--store", store, "--timeout", "2"]) == 0
        out, err = _said(capsys)
        doc = json.loads(out)  # the JSON alone: nothing before or after it
        assert doc[0]["logs"][0]["status"] == "pulled"
        assert main(["logs", "pull", "--port", dev.port, "--store", store, "--timeout", "2"]) == 0
        out, err = _said(capsys)
        _clean(out + err)
    finally:
        dev.close()
    for cmd in (["logs", "list"], ["logs", "show", "00001"], ["logs", "stats"]):
        main([*cmd, "--store", store])
        out, err = _said(capsys)
        _clean(out + err)
    main(["logs", "show", "00001", "--store", store])
    out, _ = _said(capsys)
    assert "\\x1b]0;pwned\\x07" in out  # shown, as escapes
    for cmd in (["logs", "list", "--json"], ["logs", "show", "00001", "--json"]):
        main([*cmd, "--store", store])
        out, _ = _said(capsys)
        json.loads(out)
        assert not any(c in out for c in RAW)


# --- destinations -----------------------------------------------------------------------------------------
def _pull(tmp_path, dest, staging=None):
    link, _ = loopback.link(tmp_path / "unit")
    return logpull.Puller(link, dest, staging or tmp_path / "staging").pull_all()


LOG = make_log(random.Random(5), 60)


def test_a_directory_where_the_log_goes_is_reported_and_the_copy_kept(tmp_path):
    write_unit(tmp_path / "unit", {"00001-mg.jsonl": LOG})
    (tmp_path / "dest" / "00001-mg.jsonl").mkdir(parents=True)
    (oc,) = _pull(tmp_path, tmp_path / "dest")
    assert oc.status == "failed" and "cannot write" in oc.detail
    assert (tmp_path / "staging" / "00001-mg.jsonl.part").read_bytes() == LOG  # nothing lost: pulled next time


def test_a_file_where_the_folder_goes(tmp_path):
    write_unit(tmp_path / "unit", {"00001-mg.jsonl": LOG})
    (tmp_path / "dest").write_text("I am a file")
    (oc,) = _pull(tmp_path, tmp_path / "dest")
    assert oc.status == "failed" and "cannot make the folder" in oc.detail


@pytest.mark.parametrize("where", ["old temp name", "partial", "final"])
def test_a_planted_symlink_is_never_written_through(where, tmp_path):
    write_unit(tmp_path / "unit", {"00001-mg.jsonl": LOG})
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    dest, staging = tmp_path / "dest", tmp_path / "staging"
    dest.mkdir()
    staging.mkdir()
    at = {"old temp name": dest / ".00001-mg.jsonl.tmp", "partial": staging / "00001-mg.jsonl.part",
          "final": dest / "00001-mg.jsonl"}[where]
    os.symlink(victim, at)
    (oc,) = _pull(tmp_path, dest, staging)
    assert victim.read_text() == "precious"
    if where == "old temp name":
        assert oc.status == "pulled" and (dest / "00001-mg.jsonl").read_bytes() == LOG
    else:
        assert oc.status == "failed" and at.is_symlink()


def test_the_destination_file_is_replaced_not_rewritten(tmp_path):
    # a log that grew since the last pull: the copy is a new file renamed over the old one (a reader holding
    # the old one, or a hard link to it, sees the old bytes whole; never a half-written file)
    write_unit(tmp_path / "unit", {"00001-mg.jsonl": LOG})
    dest = tmp_path / "dest"
    dest.mkdir()
    half = LOG[:len(LOG) // 2]
    (dest / "00001-mg.jsonl").write_bytes(half)
    os.link(dest / "00001-mg.jsonl", tmp_path / "old-link")
    (oc,) = _pull(tmp_path, dest)
    assert oc.status == "pulled" and (dest / "00001-mg.jsonl").read_bytes() == LOG
    assert (tmp_path / "old-link").read_bytes() == half
    assert sorted(p.name for p in dest.iterdir()) == ["00001-mg.jsonl"]  # no temp file left


# --- closed stdin and stdout ------------------------------------------------------------------------------
def _mausbox(args, **kw):
    return subprocess.run([sys.executable, "-m", "mausbox", *args], capture_output=True, timeout=60, **kw)


@pytest.mark.parametrize("stdin", ["at its end", "closed"])
def test_config_reset_with_no_answer_changes_nothing(stdin):
    kw = {"stdin": subprocess.DEVNULL} if stdin == "at its end" else {"preexec_fn": lambda: os.close(0)}
    r = _mausbox(["config", "reset", "--port", "/dev/no-such-port"], **kw)
    assert r.returncode == 1 and b"nothing changed" in r.stdout, r
    assert b"Traceback" not in r.stderr


def test_a_closed_stdout_ends_quietly(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    p = tmp_path / "raw" / "u1" / "00001-mg.jsonl"
    p.parent.mkdir(parents=True)
    p.write_bytes(make_log(random.Random(1), 3000))
    st.ingest("u1", p)
    st.close()
    codes = []
    for args in (["logs", "show", "00001"], ["logs", "export", "--what", "events"], ["logs", "show", "1", "--json"]):
        proc = subprocess.Popen([sys.executable, "-m", "mausbox", *args, "--store", str(tmp_path / "s.sqlite")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()  # `| head -1`
        proc.stdout.close()
        err = proc.stderr.read()
        rc = proc.wait(timeout=60)
        assert err == b"", (args, err)
        codes.append(rc)
    # 141 where the output outgrew the pipe once it was closed; 0 where it all fitted in before
    assert codes[0] == 141 and codes[2] == 141 and set(codes) <= {0, 141}, codes


# --- device text in errors, exports and --json ----------------------------------------------------------------
FAKE = "go away\n/dev/ttyUSB9 (unit x): 10 pulled, 0 already here\r\n" + ESC


def _json_commands():
    """Every command (and action) whose parser takes --json and talks to a unit through --port."""
    from mausbox.cli import _subparsers, build_parser

    parser, _ = build_parser()
    out = []
    for name, p in _subparsers(parser).items():
        subs = _subparsers(p)
        for words, q in ([([name, a], s) for a, s in subs.items()] if subs else [([name], p)]):
            opts = {o for a in q._actions for o in a.option_strings}
            if "--json" in opts and "--port" in opts and "--timeout" in opts:  # flash: --json is --dry-run's
                out.append(words)
    return out


@pytest.mark.parametrize("cmd", _json_commands(), ids=lambda c: " ".join(c))
def test_json_is_one_document_even_when_the_unit_refuses_hello(cmd, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    if cmd[:2] == ["cards", "enrol"] or cmd[:2] == ["cards", "write"]:
        pytest.skip("asks before each card")
    dev = Hostile("answers", {"hello": {"ok": False, "error": "busy", "msg": FAKE}})
    try:
        extra = ["--store", str(tmp_path / "s.sqlite")] if cmd[0] == "logs" else []
        more = {("config", "set"): ["lang", "en"], ("config", "reset"): ["--yes"],
                ("name", "set"): ["Tisch 3"]}.get(tuple(cmd), [])
        rc = main([*cmd, *more, "--json", "--port", dev.port, "--timeout", "2", *extra])
    finally:
        dev.close()
    out, err = _said(capsys)
    assert rc != 0, (out, err)
    doc = json.loads(out)  # one document, nothing else on stdout
    _clean(out + err)
    text = json.dumps(doc)
    assert "error" in text and dev.port in text, out
    assert len(err.strip().splitlines()) <= 1, err  # the device's newlines do not make lines of their own


def test_a_device_error_with_newlines_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    dev = Hostile("answers", {"settings": {"ok": False, "error": "x", "msg": FAKE}})
    try:
        rc = main(["config", "get", "--port", dev.port, "--timeout", "2"])
    finally:
        dev.close()
    out, err = _said(capsys)
    assert rc == 1
    _clean(out + err)
    assert len(err.strip().splitlines()) == 1 and "go away | /dev/ttyUSB9" in err, err
    assert not any(ln.startswith("/dev/ttyUSB9") for ln in (out + err).splitlines())


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_export_to_the_terminal_shows_a_logs_escapes(fmt, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from maus.log import writer as gamelog

    log = b"".join([
        gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mg", "variant": ESC, "board": "sim", "unit": "u",
                                            "fw": ESC, "settings": {}, "wall": None, "ticks": 0,
                                            "players": [{"id": 1, "colour": ESC, "young": False}]}),
        gamelog.encode(1, 9, "game_end", {"scores": {"1": 3}, "winners": [1], "breakdown": {}, "why": ESC}),
    ])
    dev = Hostile("answers", log_answers({"00001-mg.jsonl": log}))
    store = str(tmp_path / "s.sqlite")
    try:
        assert main(["logs", "pull", "--port", dev.port, "--store", store, "--timeout", "2"]) == 0
    finally:
        dev.close()
    _said(capsys)
    for what in (["--what", "games"], ["--what", "events"]) if fmt == "csv" else [[]]:
        assert main(["logs", "export", "--format", fmt, *what, "--store", store]) == 0
        out, err = _said(capsys)
        _clean(out + err)
        if fmt == "json":
            json.loads(out)
        assert "pwned" in out
    assert main(["logs", "export", "--format", fmt, "--store", store, "-o", str(tmp_path / "x")]) == 0
    kept = (tmp_path / "x").read_text(encoding="utf-8")  # a file keeps the log's text as it is
    assert "\x1b" in kept if fmt == "csv" else "\u202e" in kept


def test_a_refused_mark_makes_the_pull_fail_with_a_count(tmp_path, capsys, monkeypatch):
    """The flash is full: every `mark` fails. The logs are copied, but the pull says so and exits 1."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    answers = log_answers({"00001-mg.jsonl": LOG, "00002-mg.jsonl": LOG})
    answers["mark"] = {"ok": False, "error": "io", "msg": "28"}
    dev = Hostile("answers", answers)
    try:
        rc = main(["logs", "pull", "--port", dev.port, "--store", str(tmp_path / "s.sqlite"), "--timeout", "2"])
        out, err = _said(capsys)
        rc_json = main(["logs", "pull", "--json", "--port", dev.port, "--store", str(tmp_path / "s.sqlite"),
                        "--timeout", "2"])
        doc = json.loads(_said(capsys)[0])
    finally:
        dev.close()
    assert rc == 1, out + err
    assert "2 pulled, 0 already here; 2 not marked pulled on the unit" in out, out
    assert rc_json == 1 and doc[0]["counts"]["not_marked"] == 2, doc
