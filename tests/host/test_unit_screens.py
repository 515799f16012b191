"""What the unit's display says on the virtual unit: the variant screen names each variant (issue 20)."""

from __future__ import annotations

import json

import pytest
from mausbox.paths import micropython_binary
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
