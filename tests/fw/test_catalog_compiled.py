# A game's catalog from its compiled form (maus/catalogs/<short>.cat, made by mausbox.catalogc): the
# same Catalog the .json gives, used only while it was compiled from that very .json (CPython and MicroPython).
import json
import os

import logfs
import maus
from maus.games.mausgeflippt import cards as mausgeflippt_cards
from maus.games.mim import rules as mim
from maus.unit.start import catalog, compiled

HERE = maus.__file__.rsplit("/", 1)[0] + "/catalogs/"


def _from_json(mod, short):
    with open(HERE + short + ".json") as f:
        return mod.load_catalog(json.load(f))


def _same(a, b):
    return sorted(a.__dict__.items()) == sorted(b.__dict__.items())


def test_the_compiled_catalogs_are_the_json_ones():
    for mod, short in ((mausgeflippt_cards, "mg"), (mim, "mim")):
        cat = compiled(mod, HERE + short + ".json")
        assert cat is not None, short
        assert isinstance(cat, mod.Catalog) and _same(cat, _from_json(mod, short)), short
        assert _same(catalog(mod, short), cat)


def _copy(src, dst):
    with open(src, "rb") as f:
        data = f.read()
    with open(dst, "wb") as f:
        f.write(data)
    return data


def test_a_catalog_edited_since_or_a_damaged_cat_is_not_used():
    with logfs.Fs(blocks=64) as fs:
        d = fs.root + "/"
        raw = _copy(HERE + "mim.json", d + "mim.json")
        cat = _copy(HERE + "mim.cat", d + "mim.cat")
        assert compiled(mim, d + "mim.json") is not None
        with open(d + "mim.json", "wb") as f:  # edited on the unit: the .cat was made from another .json
            f.write(raw.replace(b"dolphin", b"porpoise"))
        assert compiled(mim, d + "mim.json") is None
        _copy(HERE + "mim.json", d + "mim.json")
        with open(d + "mim.cat", "wb") as f:  # one byte of the arguments changed: its own hash says so
            f.write(cat.replace(b'["b","', b'["b","0', 1))
        assert compiled(mim, d + "mim.json") is None
        for junk in (b"", b"mausbox-catalog-1\n", b"something else\n[]\n", cat.split(b"\n")[0] + b"\n[[\n"):
            with open(d + "mim.cat", "wb") as f:
                f.write(junk)
            assert compiled(mim, d + "mim.json") is None, junk
        os.remove(d + "mim.cat")
        assert compiled(mim, d + "mim.json") is None  # none at all: the .json is read


def test_a_game_without_a_compact_class_has_no_compiled_catalog():
    from maus.games.mms import castle as mms

    assert compiled(mms, HERE + "mms.json") is None  # mms.Catalog holds tuples: no .cat made for it
