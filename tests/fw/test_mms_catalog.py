# The Mucks Mäuschen Still catalog: the default file, the validator, user catalogs (CPython and MicroPython).
import json
import sys

import maus
from maus.games.base import Player
from maus.games.mms.castle import Catalog, load_catalog, validate_catalog
from maus.games.mms.rules import Mms
from tablefake import FakeTable

with maus.moment():
    from maus.games.mms.catalog import default

    DEFAULT = Catalog(*default())  # the castle and dice without a catalog


def _catalog_data():
    path = maus.__file__.rsplit("/", 1)[0] + "/catalogs/mms.json"
    with open(path) as f:
        return json.load(f)


def test_catalog_validation():
    data = _catalog_data()
    assert validate_catalog(data) == []
    c = load_catalog(data)
    assert c.holes == DEFAULT.holes and c.dice == DEFAULT.dice and c.names == DEFAULT.names
    bad = json.loads(json.dumps(data))
    bad["sticks"] = 15
    bad["dice"][1][2] = "pink"
    bad["holes"][3]["de"] = "blau und gruen"
    bad["holes"][4]["id"] = "red"
    errs = validate_catalog(bad)
    for part in ("sticks", "pink", "holes[3].de", "red twice", "'orange' is not"):
        assert any(part in e for e in errs), (part, errs)
    assert load_catalog(bad) is None
    for junk in (None, [], {"game": "mg"}, {"game": "mms", "holes": "red", "dice": [[], 3]}):
        assert validate_catalog(junk)
    # a custom castle: four colours, two 4-faced dice
    mine = {"game": "mms", "sticks": 16, "castle_end": 12,
            "holes": [{"id": c, "en": c, "de": c} for c in ("red", "blue", "green", "white")],
            "dice": [["red", "blue", "green", "white"], ["white", "white", "red", "blue"]]}
    c = load_catalog(mine)
    assert c.dice[1] == bytes((3, 3, 0, 1))
    # the game plays with the default dice when the catalog is unusable, and says so
    t = FakeTable()
    g = Mms(t, [Player(1), Player(2)], {}, {"game": "mms"}, None, 1)
    t.game = g
    g.start()
    assert (g.cat.holes, g.cat.names, g.cat.dice) == (DEFAULT.holes, DEFAULT.names, DEFAULT.dice)
    assert "invalid" in t.records[0][1]["text"]


def test_validator_is_unloaded_after_use():
    sys.modules.pop("maus.games.mms.catalog", None)  # another CPython test may have imported it
    validate_catalog(_catalog_data())
    assert "maus.games.mms.catalog" not in sys.modules


def test_every_prompt_fits_the_display():
    from maus.games.mms.rules import TEXT

    worst = {"p": 4, "q": 3, "n": 16, "box": 1, "a": "orange", "b": "purple", "left": 16, "castle": 12, "out": 16,
             "who": "P1 P2 P3 P4", "c": 12, "o": 16, "text": "x"}
    assert sorted(TEXT["en"]) == sorted(TEXT["de"])
    for lang in ("en", "de"):
        for key, fmt in TEXT[lang].items():
            lines = fmt.format(**worst).split("\n")
            assert len(lines) <= 6, (lang, key)
            for line in lines:
                assert len(line) <= 16, (lang, key, line)
                for ch in line:
                    assert " " <= ch <= "~", (lang, key, line)
