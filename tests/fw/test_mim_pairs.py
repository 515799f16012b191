# M is for Mouse: the default catalog follows the rulebook, the validator catches bad decks, and the
# pair finder agrees with a brute-force oracle on random tables (without allocating on MicroPython).
import json
import sys

from fwtest import Rand, raises
from maus.games.mim import catalog as mim_catalog
from maus.games.mim import engine as mim
from maus.games.mim.engine import ascii, parse
from maus.games.mim.rules import load_catalog
from test_mim_kit import CAT, found, oracle

LETTERS = mim.LETTERS


def _data():
    with open(mim_catalog.default_path()) as f:
        return json.load(f)


def test_default_catalog_follows_the_rulebook():
    d = _data()
    assert mim_catalog.validate_catalog(d) == []
    assert len(d["cards"]) == 23 and CAT.n == 23
    assert len(LETTERS) == 23 and "Q" not in LETTERS and "X" not in LETTERS and "Y" not in LETTERS
    n_obj = [0] * 23
    n_let = [0] * 23
    for c in range(23):
        o0, o1, l0, l1 = CAT.cards[4 * c: 4 * c + 4]
        assert o0 != o1 and l0 != l1  # two different objects, two different letters
        assert l0 not in (o0, o1) and l1 not in (o0, o1)  # never an object with its own initial
        for x in (o0, o1):
            n_obj[x] += 1
        for x in (l0, l1):
            n_let[x] += 1
    assert n_obj == [2] * 23 and n_let == [2] * 23
    for i in range(23):
        assert ascii(CAT.name(i))[0] == LETTERS[i]  # German initial = the letter
        assert CAT.name(i, 1) and "\n" not in CAT.name(i) + CAT.name(i, 1)


def test_pair_text_in_both_languages():
    k = LETTERS.index("K")
    assert CAT.pair_text(k, "de") == "K f\u00fcr Koffer"
    assert CAT.pair_text(k, "en") == "K for Koffer (suitcase)"
    s = LETTERS.index("S")
    assert ascii(CAT.pair_text(s, "de")) == "S fuer Saege"
    assert CAT.pair_text(s, "en") == "S for S\u00e4ge (saw)"


def test_parse_identities():
    assert parse("mim/card/01") == 0 and parse("mim/card/23") == 22
    assert parse("mim/card/24") == -2 and parse("mim/card/00") == -2 and parse("mim/card/x") == -2
    assert parse("mg/mouse/07") == -1 and parse("game/mim") == -1
    assert parse(None) == -2 and parse("") == -2 and parse("mim/card") == -2


def _bad(mutate):
    d = _data()
    mutate(d)
    return mim_catalog.validate_catalog(d)


def _card(d, cid):
    for c in d["cards"]:
        if c["id"] == cid:
            return c


def test_validator_catches_every_broken_rule():
    assert _bad(lambda d: d.update(game="mg")) == ['game: must be "mim"']
    assert "objects: no object for the letter K" in _bad(lambda d: d["objects"].pop("K"))
    assert any("not a game letter" in e for e in _bad(lambda d: d["objects"].update(Q=["Qualle", "jellyfish"])))
    assert any("does not start with" in e for e in _bad(lambda d: d["objects"].update(S=["Koffer", "x"])))
    assert any("German name" in e for e in _bad(lambda d: d["objects"].update(S="Saege")))
    assert any("German name" in e for e in _bad(lambda d: d["objects"].update(S=["S\u00e4ge", "a\nsaw"])))
    assert any("cards, the game has 23" in e for e in _bad(lambda d: d["cards"].pop()))
    assert any("id 1 twice" in e for e in _bad(lambda d: _card(d, 2).update(id=1)))
    assert any("id must be" in e for e in _bad(lambda d: _card(d, 2).update(id=True)))
    assert any("the same letter twice" in e for e in _bad(lambda d: _card(d, 1).update(letters=["A", "A"])))
    assert any("the same object twice" in e for e in _bad(lambda d: _card(d, 1).update(objects=["Maus", "Maus"])))
    assert any("not one of the letters" in e for e in _bad(lambda d: _card(d, 1).update(letters=["A", "AB"])))
    assert any("not one of the objects" in e for e in _bad(lambda d: _card(d, 1).update(objects=["Maus", 7])))

    def own(d):  # card 1 shows Elefant and Banane: give it the letter E
        _card(d, 1)["letters"] = ["E", "H"]
    errs = _bad(own)
    assert any("Elefant and its own letter E" in e for e in errs)
    assert any("letter E is on 3 cards" in e for e in errs) and any("letter A is on 1 cards" in e for e in errs)

    def obj3(d):  # an object on three cards, another on one
        _card(d, 1)["objects"] = ["Maus", "Banane"]
    errs = _bad(obj3)
    assert "Maus is on 3 cards, must be on 2" in errs and "Elefant is on 1 cards, must be on 2" in errs
    assert mim_catalog.validate_catalog([]) == ["catalog: not a JSON object"]
    assert raises(ValueError, load_catalog, {"game": "mim"})


def test_validator_never_crashes_on_garbage():
    r = Rand(8)
    junk = (None, 0, -1, True, "", "A", "Maus", [], {}, ["A"], ["Maus", "Maus", "x"], {"id": 1}, 2.5)
    for _ in range(150):
        d = _data()
        for _ in range(r.randint(1, 3)):
            k = r.randint(0, 3)
            cards = d["cards"]
            if not isinstance(cards, list) or len(cards) != 23:
                k = 3
            if k == 0:
                c = r.choice(cards)
                if isinstance(c, dict):
                    c[r.choice(("id", "objects", "letters"))] = r.choice(junk)
                else:
                    d["game"] = 1
            elif k == 1:
                cards[r.randint(0, 22)] = r.choice(junk)
            elif k == 2 and isinstance(d["objects"], dict):
                d["objects"][r.choice(LETTERS)] = r.choice(junk)
            else:
                d[r.choice(("objects", "cards", "game"))] = r.choice(junk)
        errs = mim_catalog.validate_catalog(d)
        assert isinstance(errs, list) and errs and all(isinstance(e, str) for e in errs)
        assert len(errs) <= 20


def test_finder_agrees_with_the_oracle_on_random_tables():
    r = Rand(23)
    f = mim.Pairs(CAT.cards)
    slots = bytearray(23)
    used = bytearray(23)
    total = 0
    for i in range(400):
        deck = list(range(23))
        r.shuffle(deck)
        n = r.randint(0, 23) if i % 2 else r.randint(0, 8)
        for s in range(n):
            slots[s] = deck[s]
            used[s] = r.next() & 15 if r.randint(0, 2) == 0 else 0
        k = f.find(slots, n, used)
        assert found(f, k) == oracle(slots[:n], used[:n])
        total += k
    assert total > 400  # the tables were not all empty


def test_a_finder_sized_for_n_cards_holds_every_pair_of_n_cards():
    # the game sizes its finder for the most cards it searches at once (A: 2, C: 8, B: 23)
    r = Rand(5)
    for size in (2, 8):
        f = mim.Pairs(CAT.cards, size)
        assert len(f.out) == 8 * size
        most = 0
        for _ in range(300):
            deck = list(range(23))
            r.shuffle(deck)
            slots = bytes(deck[:size])
            used = bytes(size)
            k = f.find(slots, size, used)  # an IndexError if the buffer were too small
            assert found(f, k) == oracle(slots, used)
            most = max(most, k)
        assert most >= size  # tables with many pairs were among them


def test_between_two_cards():
    f = mim.Pairs(CAT.cards, 2)  # as variant A makes it
    for a in range(23):
        for b in range(23):
            if a == b:
                continue
            n = f.between(a, 0, b, 0)
            assert found(f, n) == oracle(bytes((a, b)), bytes(2))
            n = f.between(a, 15, b, 0)  # chips on everything of a: a cannot take part
            assert n == 0
    f.between(0, 0, 4, 0)
    assert f.n == 2  # cards 1 and 5 allow two pairs


def test_finder_allocates_nothing():
    if sys.implementation.name != "micropython":
        return
    import micropython

    f = mim.Pairs(CAT.cards)
    slots = bytearray(range(8))
    used = bytearray(8)
    micropython.heap_lock()
    try:
        n = f.find(slots, 8, used)
        m = f.between(0, 0, 4, 0)
    finally:
        micropython.heap_unlock()
    assert n > 0 and m == 2


def test_validator_is_unloaded_after_a_load():
    name = "maus.games.mim.catalog"
    was = sys.modules.pop(name, None)
    try:
        load_catalog(_data())
        assert name not in sys.modules
    finally:
        if was is not None:
            sys.modules[name] = was
