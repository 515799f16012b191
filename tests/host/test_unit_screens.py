"""What the unit's display says on the virtual unit: the variant screen names each variant (issue 20)."""

from __future__ import annotations

import json

import pytest
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


def test_the_variant_screen_names_each_variant(tmp_path):
    root = simrun.prepare_root(tmp_path / "unit")
    (root / "settings.json").unlink(missing_ok=True)
    acts = [{"at_ms": 500, "tap": "game/mim"}, {"at_ms": 800, "remove": "game/mim"},
            {"at_ms": 2000, "press": 1}, {"at_ms": 2080, "release": 1},
            {"at_ms": 3000, "press": 1}, {"at_ms": 3080, "release": 1}, {"at_ms": 5000, "noise": 0}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in acts))
    rc, lines = simrun.run_scenario(path, root, timeout=120)
    shown = [ln for ln in lines if ln.startswith("SAY M wie Maus | Variante")]
    assert rc == 0 and len(shown) == 3, lines[-20:]
    for line, name in zip(shown, ("A: reihum", "B: Spielleiter", "C: alle zugleich")):
        assert f"| {name} |" in line, line


@pytest.mark.parametrize("lang,head", [("en", "Game over! | Sticks left: | "), ("de", "Spielende! | Noch Staebchen: | ")])
def test_the_mms_end_screen_says_the_numbers_are_sticks_left(tmp_path, lang, head):
    from scenariokit import SCENARIOS

    root = simrun.prepare_root(tmp_path / "unit")
    (root / "settings.json").write_text(json.dumps({"lang": lang}))
    rc, lines = simrun.run_scenario(SCENARIOS / "mms-2p-draw.jsonl", root, timeout=300)
    end = [ln for ln in lines if ln.startswith("SAY " + head)]
    assert rc == 0 and len(end) == 1, [ln for ln in lines if ln.startswith("SAY")][-5:]
    assert end[0].startswith(f"SAY {head}*P1: 2 | *P2: 2 | "), end[0]  # a draw: 2 sticks left each
