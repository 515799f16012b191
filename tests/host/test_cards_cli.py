"""`mausbox cards`: catalog check, printable sheet, and enrolment / writing through the virtual unit's pty.

Through the pty the unit runs a stand-in `maus.cards` (host_read / host_write as the command calls them) on a
copy of the firmware package, with a scripted pad: each read takes the next UID from `cards/_pad.json`.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from mausbox.cli import main
from mausbox.paths import FIRMWARE_PKG, micropython_binary


def test_check_the_builtin_catalog(capsys):
    assert main(["cards", "check", "mg"]) == 0
    assert "good mg catalog" in capsys.readouterr().out


def test_check_finds_problems(tmp_path, capsys):
    data = json.loads((FIRMWARE_PKG / "catalogs" / "mg.json").read_text())
    data["mice"].pop()
    data["mice"][1]["wears"] = list(data["mice"][0]["wears"])
    data["clothing"][0]["item"] = "purple hat"
    f = tmp_path / "mine.json"
    f.write_text(json.dumps(data))
    assert main(["cards", "check", str(f), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    errs = " | ".join(doc["errors"])
    assert not doc["ok"] and "same outfit" in errs and "purple hat" in errs
    f.write_text("{not json")
    assert main(["cards", "check", str(f)]) == 2
    f.write_text(json.dumps({"game": "chess"}))
    assert main(["cards", "check", str(f)]) == 1
    assert "no validator" in capsys.readouterr().out
    assert main(["cards", "check", str(tmp_path / "missing.json")]) == 2


def test_print_sheet(tmp_path, capsys):
    out = tmp_path / "mg.svg"
    assert main(["cards", "print", "--catalog", "mg", "-o", str(out)]) == 0
    pages = sorted(tmp_path.glob("mg*.svg"))
    assert len(pages) == 12  # 1 game card + 32 mice + 58 clothing + 9 cheeses = 100 cards, 9 a page
    text = "".join(p.read_text() for p in pages)
    for ident in ("mausbox:game/mg", "mausbox:mg/mouse/32", "mausbox:mg/clothing/58", "mausbox:mg/cheese/09"):
        assert text.count(ident + "<") == 1
    for p in pages:
        ET.fromstring(p.read_text())
    assert main(["cards", "print", "--catalog", "mg", "--kind", "cheese", "-o", str(tmp_path / "c.svg")]) == 0
    assert ET.fromstring((tmp_path / "c.svg").read_text()) is not None
    capsys.readouterr()
    assert main(["cards", "print", "mg/mouse/7", "-o", str(tmp_path / "one.svg")]) == 0
    assert "mausbox:mg/mouse/07<" in (tmp_path / "one.svg").read_text()
    assert main(["cards", "print", "mouse 7", "-o", str(tmp_path / "x.svg")]) == 2
    assert "not a card identity" in capsys.readouterr().err


FAKE_CARDS = '''\
# Test stand-in for the firmware's card routines: a scripted pad.
import json
def _pad():
    with open('cards/_pad.json') as f:
        return json.load(f)
def _save(p):
    with open('cards/_pad.json', 'w') as f:
        json.dump(p, f)
def host_read(timeout_ms):
    p = _pad()
    if not p['uids']:
        return None
    uid = p['uids'].pop(0)
    _save(p)
    return {'uid': uid, 'ident': p['written'].get(uid)}
def host_write(ident, timeout_ms, force):
    p = _pad()
    if not p['uids']:
        return {'error': 'no card on the pad'}
    uid = p['uids'].pop(0)
    old = p['written'].get(uid)
    if old and old != ident and not force:
        _save(p)
        return {'error': 'tag holds ' + old}
    p['written'][uid] = ident
    _save(p)
    return {'uid': uid}
'''


@pytest.fixture
def unit(tmp_path):
    if micropython_binary() is None:
        pytest.skip("MicroPython unix port not installed")
    from mausbox.sim.serial import SerialUnit

    fw = tmp_path / "fw"
    shutil.copytree(FIRMWARE_PKG, fw / "maus", ignore=shutil.ignore_patterns("__pycache__"))
    if not (FIRMWARE_PKG / "cards.py").exists() or "host_read" not in (FIRMWARE_PKG / "cards.py").read_text():
        (fw / "maus" / "cards.py").write_text(FAKE_CARDS)
    else:
        (fw / "maus" / "cards.py").write_text((FIRMWARE_PKG / "cards.py").read_text() + "\n" + FAKE_CARDS)
    root = tmp_path / "unit"
    (root / "cards").mkdir(parents=True)
    with SerialUnit(root, extra_path=[str(fw)]) as u:
        u.root_dir = root
        yield u


def pad(unit, uids, written=None):
    (unit.root_dir / "cards" / "_pad.json").write_text(json.dumps({"uids": uids, "written": written or {}}))


def test_enrol_and_list_over_the_pty(unit, capsys):
    port = unit.pty_path
    assert main(["cards", "list", "--port", port]) == 0
    assert "no cards enrolled" in capsys.readouterr().out
    pad(unit, ["04a1b2c3d4e5f6", "deadbeef"])
    assert main(["cards", "enrol", "--port", port, "--yes", "mg/mouse/01", "game/mg"]) == 0
    out = capsys.readouterr().out
    assert "UID 04a1b2c3d4e5f6 -> mg/mouse/01" in out and "2 card(s) enrolled, 0 failed" in out
    mapping = json.loads((unit.root_dir / "cards" / "enrol.json").read_text())
    assert mapping == {"04a1b2c3d4e5f6": "mg/mouse/01", "deadbeef": "game/mg"}
    assert not (unit.root_dir / "cards" / "enrol.json.tmp").exists()
    assert main(["cards", "list", "--port", port, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == mapping

    # an empty pad, a tag with an odd UID, and a tag that already carries another identity: all refused
    pad(unit, ["xyz", "11223344"], written={"11223344": "mausbox:mg/cheese/01"})
    assert main(["cards", "enrol", "--port", port, "--yes", "mg/mouse/02", "mg/mouse/03", "mg/mouse/04"]) == 1
    out = capsys.readouterr().out
    assert "odd UID" in out and "already says mausbox:mg/cheese/01" in out and "no card on the pad" in out
    assert json.loads((unit.root_dir / "cards" / "enrol.json").read_text()) == mapping


def test_write_over_the_pty(unit, capsys):
    pad(unit, ["04000000000001", "04000000000002", "04000000000003"], written={"04000000000003": "mausbox:mim/card/01"})
    assert main(["cards", "write", "--port", unit.pty_path, "--yes", "--catalog", "mg", "--kind", "cheese",
                 "mg/cheese/01", "mg/cheese/02", "mg/cheese/03"]) == 1
    out = capsys.readouterr().out
    assert "wrote and verified mausbox:mg/cheese/01 on tag 04000000000001" in out
    assert "tag holds mausbox:mim/card/01" in out and "2 card(s) written, 1 failed" in out
    written = json.loads((unit.root_dir / "cards" / "_pad.json").read_text())["written"]
    assert written["04000000000002"] == "mausbox:mg/cheese/02"


def test_cards_without_a_unit_fail_cleanly(tmp_path, capsys):
    assert main(["cards", "list", "--port", str(tmp_path / "nope")]) == 3
    assert "cannot open" in capsys.readouterr().err
