"""The unit's language: a new unit (no settings saved) says on its menu which language it speaks, the
`lang` setting; the virtual unit follows the terminal's LANG when it has no settings yet."""

from __future__ import annotations

import json
import shutil

import pytest
from maus.settings import values as fw_settings
from mausbox.mpbuild import micropython_binary
from mausbox.sim import run as simrun
from mausbox.sim import tui as simtui


@pytest.mark.parametrize("env,lang", [({"LANG": "de_DE.UTF-8"}, "de"), ({"LANG": "en_GB.UTF-8"}, "en"),
                                      ({}, "en"), ({"LANG": "C.UTF-8"}, "en"),
                                      ({"LC_ALL": "de_AT.UTF-8", "LANG": "en_US.UTF-8"}, "de")])
def test_the_terminals_language(env, lang):
    assert simtui.terminal_lang(env) == lang


def test_a_new_virtual_unit_follows_lang_and_a_set_one_keeps_its_own(tmp_path):
    new = tmp_path / "new"
    new.mkdir()
    assert simtui.follow_lang(new, {"LANG": "en_US.UTF-8"}) == "en"
    assert fw_settings.Settings(str(new)).get("lang") == "en"
    assert simtui.follow_lang(new, {"LANG": "de_DE.UTF-8"}) is None  # it has settings now: they stay
    assert fw_settings.Settings(str(new)).get("lang") == "en"
    german = tmp_path / "german"
    german.mkdir()
    assert simtui.follow_lang(german, {"LANG": "de_DE.UTF-8"}) == "de"
    assert not (german / fw_settings.FILE).exists()  # the default already: nothing to save, still a new unit


@pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")
def test_a_new_unit_shows_its_language_on_the_menu_until_a_setting_is_saved(tmp_path):
    root = simrun.prepare_root(tmp_path / "unit")
    idle = tmp_path / "idle.jsonl"
    idle.write_text('{"at_ms": 2000, "press": 3}\n{"at_ms": 2080, "release": 3}\n')
    rc, lines = simrun.run_scenario(idle, root, timeout=120)
    menu = [ln for ln in lines if ln.startswith("SAY Waehlen")]
    assert rc == 0 and menu and all("Sprache: de" in ln for ln in menu), menu
    shutil.rmtree(root / "logs", ignore_errors=True)
    fw_settings.Settings(str(root)).set("lang", "en")  # as the Settings menu or `mausbox config set` saves it
    rc, lines = simrun.run_scenario(idle, root, timeout=120)
    menu = [ln for ln in lines if ln.startswith("SAY Choose")]
    assert rc == 0 and menu and not any("Language" in ln for ln in menu), menu
    assert json.loads((root / fw_settings.FILE).read_text())["lang"] == "en"
