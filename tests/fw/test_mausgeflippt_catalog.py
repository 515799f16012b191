# Mausgeflippt catalog: the default deck follows the rulebook and plays; the validator catches bad decks.
import gc
import json

from fwtest import Rand, raises
from maus.games.mausgeflippt import cards as mgcards
from maus.games.mausgeflippt import catalog as mgcat


def _data():
    with open(mgcat.default_path()) as f:
        return json.load(f)


def test_default_catalog_is_valid_and_follows_the_rulebook_counts():
    d = _data()
    assert mgcat.validate_catalog(d) == []
    assert (len(d["mice"]), len(d["clothing"]), len(d["cheese_cards"])) == (32, 58, 9)
    c = mgcards.load(d)
    assert len(c.wears) == 4 * 32 and len(c.clothing) == 58 and len(c.cheese_cards) == 9
    on_cards = set(c.clothing)
    for w in _outfits(c):
        assert 2 <= len(w) <= 4
        for code in w:
            assert code in on_cards  # every item a mouse wears exists among the clothing cards
    assert set(c.mouse_cheese) <= set(c.cheese_cards)  # every mouse can be protected


def test_default_deck_is_balanced():
    c = mgcards.load(_data())
    # every clothing item is on exactly two cards, and worn by three or four mice
    for code in set(c.clothing):
        assert list(c.clothing).count(code) == 2
        worn_by = sum(1 for w in _outfits(c) if code in w)
        assert 3 <= worn_by <= 4, c.item_name(code)
    # every cheese type protects 8 mice; about a quarter of reveals are protected
    for k in range(len(c.cheese_types.split(" "))):
        assert list(c.mouse_cheese).count(k) == 8
    # outfits differ, and no mouse wears two items of one type
    seen = set()
    for w in _outfits(c):
        assert bytes(sorted(w)) not in seen
        seen.add(bytes(sorted(w)))
        assert len(set(code >> 4 for code in w)) == len(w)


def test_compact_form_names_items():
    d = _data()
    c = mgcards.load(d)
    m = d["mice"][6]
    assert [c.item_name(code) for code in mgcat.outfit(c, m["id"])] == m["wears"]
    for mouse in d["mice"]:  # every mouse wears what the catalog says, and nothing else
        mid = mouse["id"]
        mine = [mgcat.item_code(w, d["colours"], d["types"]) for w in mouse["wears"]]
        assert list(mgcat.outfit(c, mid)) == mine
        assert [code for code in range(256) if c.worn(mid, code)] == sorted(mine)
    assert c.cheese_name(c.mouse_cheese[m["id"] - 1]) == m["cheese"]
    first = d["clothing"][0]
    assert c.item_name(c.clothing[first["id"] - 1]) == first["item"]
    last = d["cheese_cards"][8]
    assert c.cheese_name(c.cheese_cards[last["id"] - 1]) == last["cheese"]
    assert mgcards.load(c) is c


def _outfits(c):
    return [mgcat.outfit(c, m) for m in range(1, 33)]


def _errors_after(change):
    gc.collect()  # the parsed catalog is ~33 KB of a 96 KB heap: start each case from a clean heap
    d = _data()
    change(d)
    return mgcat.validate_catalog(d)


def _has(errors, text):
    for e in errors:
        if text in e:
            return True
    raise AssertionError("%r not in %r" % (text, errors))


def test_validator_names_each_problem():
    _has(_errors_after(lambda d: d["mice"].pop()), "mice: 31 cards, the game has 32")
    _has(_errors_after(lambda d: d["clothing"].append({"id": 59, "item": "red hat"})), "clothing: 59 cards")
    _has(_errors_after(lambda d: d["mice"][1].update({"id": 1})), "mice: id 1 twice")
    _has(_errors_after(lambda d: d["cheese_cards"][1].update({"id": 1})), "cheese_cards: id 1 twice")
    _has(_errors_after(lambda d: d["cheese_cards"][2].update({"cheese": "feta"})), "cheese card 3: cheese 'feta'")
    _has(_errors_after(lambda d: d["mice"][0].update({"wears": ["red hat"]})), "mouse 1: wears must list 2..4")
    _has(_errors_after(lambda d: d["mice"][0].update({"wears": ["red hat", "red hat"]})), "wears red hat twice")
    _has(_errors_after(lambda d: d["mice"][0].update({"wears": ["red hat", "pink hat"]})), "not '<colour> <type>'")
    _has(_errors_after(lambda d: d["mice"][0].update({"cheese": "feta"})), "mouse 1: cheese 'feta'")
    _has(_errors_after(lambda d: d["mice"][0].update({"id": "1"})), "mice[0]: id must be 1..32")
    _has(_errors_after(lambda d: d["clothing"][0].update({"id": 0})), "clothing[0]: id must be 1..58")
    _has(_errors_after(lambda d: d["clothing"][0].update({"item": "red  hat"})), "clothing 1: item 'red  hat'")
    _has(_errors_after(lambda d: d.update({"game": "mim"})), 'game: must be "mg"')
    _has(_errors_after(lambda d: d.update({"colours": ["red", "red"]})), "colours: names repeat")
    _has(_errors_after(lambda d: d.update({"types": "hat"})), "types: a list")
    _has(_errors_after(lambda d: d["cheeses"].append("feta")), "no cheese card shows feta")
    _has(_errors_after(lambda d: d["mice"][1].update({"wears": list(d["mice"][0]["wears"])})), "the same outfit")

    def no_card(d):  # nobody can ever play the item mouse 1 wears first
        item = d["mice"][0]["wears"][0]
        for c in d["clothing"]:
            if c["item"] == item:
                c["item"] = "red hat" if item != "red hat" else "blue hat"
    _has(_errors_after(no_card), "no clothing card shows")
    assert mgcat.validate_catalog([]) == ["catalog: not a JSON object"]


def test_load_refuses_a_bad_catalog():
    e = raises(ValueError, mgcards.load, {"game": "mg"})
    assert str(e).startswith("mg catalog: ")
    raises(ValueError, mgcards.load, None)


_JUNK = (None, 0, -1, 99, "", "x", "red", "red hat", [], {}, [1], {"id": 1}, True, 2.5)


def test_validator_never_raises_on_mutated_catalogs():
    r = Rand(7)
    d = _data()
    for _ in range(300):
        key = r.choice(("mice", "clothing", "cheese_cards", "colours", "types", "cheeses", "game"))
        v = d[key]
        if isinstance(v, list) and v and r.randint(0, 1):
            i = r.randint(0, len(v) - 1)
            old = v[i]
            if isinstance(old, dict) and r.randint(0, 1):
                f = r.choice(list(old.keys()))
                keep = old[f]
                old[f] = r.choice(_JUNK)
                errs = mgcat.validate_catalog(d)
                old[f] = keep
            else:
                v[i] = r.choice(_JUNK)
                errs = mgcat.validate_catalog(d)
                v[i] = old
        else:
            d[key] = r.choice(_JUNK)
            errs = mgcat.validate_catalog(d)
            d[key] = v
        assert isinstance(errs, list) and len(errs) <= 20
    assert mgcat.validate_catalog(d) == []


def test_the_validator_is_unloaded_once_the_catalog_is_checked():
    import json
    import sys

    with open(mgcat.default_path()) as f:
        data = json.load(f)
    sys.modules.pop("maus.games.mausgeflippt.catalog", None)  # as on the unit: nobody else holds it
    cat = mgcards.load(data)  # as the unit loads it (maus.unit.start.catalog)
    assert len(cat.wears) == 4 * 32
    assert "maus.games.mausgeflippt.catalog" not in sys.modules  # ~6 KB back for the game


def test_the_game_refuses_a_bad_catalog_with_its_problem():
    from maus.games.base import Player
    from maus.games.mausgeflippt.rules import Mausgeflippt
    from tablefake import FakeTable

    e = raises(ValueError, Mausgeflippt, FakeTable(), [Player(1)], {}, {"game": "mg"})
    assert "mg catalog" in str(e)
