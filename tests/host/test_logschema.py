"""Every log the writer produces (CPython and the MicroPython unix port, finished, aborted, recovered,
degraded) validates against docs/log-schema.json, and the reader finds no damage in it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, run_micropython
from maus.log import check as logcheck
from maus.log import read as logread
from maus.log import repair as logrepair
from maus.log import start as logstart
from maus.log import writer as gamelog
from maus.log.store import LogStore

SCHEMA = json.loads((ROOT / "docs" / "log-schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

EVENTS = [
    ("reveal", {"card": "mg/mouse/07", "n": 1}),
    ("press", {"player": 2, "offset_us": 412345, "false_start": False}),
    ("press", {"player": 3, "offset_us": -20311, "false_start": True}),
    ("claim", {"player": 2}),
    ("tap", {"identity": "mg/clothing/31", "uid": "04a1b2c3d4e5f6"}),
    ("tap", {"identity": None, "uid": "deadbeef"}),
    ("verdict", {"player": 2, "ok": False, "reason": "colour does not match"}),
    ("score", {"player": 2, "delta": -1, "why": "clothing penalty face up"}),
    ("alarm", {"player": 1, "level": 7}),
    ("prompt", {"what": "show the next cheese", "player": 1}),
    ("timeout", {"what": "protected mouse", "outcome": "under the stack"}),
    ("settings", {"key": "volume", "old": 2, "new": 3}),
    ("note", {"text": "hello", "extra": [1, 2]}),
    ("mim_pair", {"object": "Koffer", "letter": "K"}),  # a game's own record type: allowed
]


def play(store: LogStore, end: str = "end") -> str:
    log = logstart.start_game(store, iter(range(0, 10**9, 137)).__next__, "mausgeflippt", "young",
                             [(1, "red", False), (2, "blue", True), (3, "green", False)], "devkitc",
                             "a4cf12fe0b10", "0.1.0", {"lang": "de", "volume": 2},
                             logstart.wall_iso((2026, 11, 30, 9, 15, 0)), 123456, reserve=0)
    for typ, fields in EVENTS:
        log.record(typ, fields)
    if end == "end":
        log.end({1: 3, 2: -1, 3: 0}, [1], {1: {"mice": 3, "cheeses": 0}, 2: {"clothing_up": 1}, 3: {}},
                "last mouse caught")
    elif end == "abort":
        log.abort("players stopped")
    else:
        log.close()
    assert log.name is not None
    return log.name


def validate_file(path: Path) -> int:
    data = path.read_bytes()
    rep = logcheck.read(data)
    assert rep.ok, rep.problems
    n = 0
    for line in data.splitlines():
        errors = sorted(VALIDATOR.iter_errors(json.loads(line)), key=str)
        assert not errors, (line, [e.message for e in errors])
        n += 1
    return n


def test_cpython_logs_validate(tmp_path):
    st = LogStore(str(tmp_path))
    play(st, "end")
    play(st, "abort")
    torn = play(st, "none")
    p = Path(st.path(torn))
    p.write_bytes(p.read_bytes() + b'{"seq":99,"t":1,"ty')
    assert logrepair.recover(st)[0]["cut_bytes"] == 19
    types = set()
    for name in st.names():
        assert validate_file(Path(st.path(name))) > 10
        types |= {json.loads(x)["type"] for x in Path(st.path(name)).read_bytes().splitlines()}
    assert {"game_start", "game_end", "game_abort", "recovered"} <= types


def test_micropython_logs_validate(tmp_path):
    # The unix port writes straight into tmp_path: the bytes the unit would write.
    script = tmp_path / "mk.py"
    script.write_text(textwrap.dedent("""
        import sys
        from maus.log import writer as gamelog
        from maus.log import repair as logrepair
        from maus.log import start as logstart
        from maus.log.store import LogStore
        st = LogStore(sys.argv[1])
        t = [0]
        def clock():
            t[0] += 97
            return t[0]
        log = logstart.start_game(st, clock, "mucks", None, [(1, "red", False), (4, "blue", True)], "devkitc",
                                 "a4cf12fe0b10", "0.1.0", {"lang": "en", "sensitivity": 5}, None, 77, reserve=0)
        log.record("alarm", {"player": 1, "level": 812})
        log.record("score", {"player": 4, "delta": 1, "why": "stick placed"})
        log.record("tap", {"identity": "mim/card/12", "uid": "04aa"})
        log.end({1: 4, 4: 2}, [4], {1: {"sticks": 4}, 4: {"sticks": 2}}, "12th stick in the castle")
        print(log.name)
    """))
    proc = run_micropython(script, str(tmp_path))
    assert proc.returncode == 0, proc.stderr.decode()
    name = proc.stdout.decode().strip()
    assert validate_file(tmp_path / "logs" / name) == 5


@pytest.mark.parametrize("line", [
    {"seq": 1, "t": 0, "type": "press", "player": 1, "offset_us": 5, "crc": "00000000"},  # no false_start
    {"seq": 1, "t": 0, "type": "press", "player": 7, "offset_us": 5, "false_start": False, "crc": "00000000"},
    {"seq": 1, "t": 0, "type": "note", "text": "x", "crc": "0000000G"},
    {"seq": -1, "t": 0, "type": "note", "text": "x", "crc": "00000000"},
    {"seq": 1, "t": 0, "type": "game_end", "scores": {"7": 1}, "winners": [1], "breakdown": {}, "why": "x",
     "crc": "00000000"},
    {"seq": 1, "t": 0, "type": "Bad Type", "crc": "00000000"},
])
def test_schema_rejects(line):
    assert list(VALIDATOR.iter_errors(line))


def test_every_type_is_documented():
    doc = (ROOT / "docs" / "log-format.md").read_text()
    for part in SCHEMA["allOf"]:
        typ = part["if"]["properties"]["type"]["const"]
        assert "`%s`" % typ in doc, typ


def test_documented_example_line_verifies():
    doc = (ROOT / "docs" / "log-format.md").read_text()
    line = next(x for x in doc.splitlines() if x.startswith('{"seq":7,'))
    raw = line.removesuffix("\\n").encode()
    rec, err = logread.check_line(raw)
    assert err is None and rec["type"] == "press"
    assert raw + b"\n" == gamelog.encode(7, 5120, "press", {"player": 2, "offset_us": 412345, "false_start": False})
