# Card identities, classification and the enrolment file.
import os
import sys
import time

from fwtest import raises
from maus.cards import enrol
from maus.cards import file as cardfile
from maus.cards import ident as cards
from maus.cards import reader as rfid


def test_canonical_padding():
    assert cards.normalise("mg/mouse/7") == "mg/mouse/07"
    assert cards.normalise("mg/mouse/07") == "mg/mouse/07"
    assert cards.normalise("mausbox:mg/mouse/007") == "mg/mouse/07"
    assert cards.normalise("mg/clothing/58") == "mg/clothing/58"
    assert cards.normalise("mg/cheese/03") == "mg/cheese/3"
    assert cards.normalise("mim/card/5") == "mim/card/05"
    assert cards.normalise(" MG/Mouse/12 ") == "mg/mouse/12"
    assert cards.format_id("mg", "clothing", 3) == "mg/clothing/03"
    assert cards.format_id("mg", "cheese", 9) == "mg/cheese/9"


def test_game_cards():
    assert cards.normalise("game/mausgeflippt") == "game/mausgeflippt"
    assert cards.normalise("mausbox:game/mg") == "game/mausgeflippt"
    assert cards.normalise("game/mim") == "game/mim"
    assert cards.normalise("game/mms") == "game/mms"
    assert cards.parse("game/mms") == ("game", "mms", 0)
    assert cards.game_card("mg") == "game/mausgeflippt"
    assert cards.normalise("game/chess") is None


def test_out_of_range_and_garbage():
    for bad in ("mg/mouse/0", "mg/mouse/33", "mg/clothing/59", "mg/cheese/10", "mim/card/24",
                "mms/stick/1", "mg/hat/1", "mg/mouse/", "mg/mouse/x1", "mg/mouse/-1", "mg/mouse/1/2",
                "", "mausbox:", "mg", "mg/mouse/0001", None, 7, "mg/mouse/" + "9" * 60):
        assert cards.normalise(bad) is None, bad
        assert cards.parse(bad) is None


def test_text_record_form():
    assert cardfile.to_text("mg/mouse/7") == "mausbox:mg/mouse/07"
    assert cards.from_text("mausbox:mg/mouse/7") == "mg/mouse/07"
    assert cards.from_text("mg/mouse/07") is None  # on a tag the prefix is required
    assert cards.from_text("https://example.org") is None
    assert cards.from_text(None) is None
    raises(ValueError, cardfile.to_text, "mg/mouse/99")


def test_classify():
    assert cardfile.classify("mg/mouse/07", "mg") == cardfile.KNOWN
    assert cardfile.classify("mim/card/01", "mg") == cardfile.WRONG_GAME
    assert cardfile.classify("game/mim", "mg") == cardfile.GAME_CARD
    assert cardfile.classify(None, "mg") == cardfile.UNKNOWN
    assert cardfile.classify("", "mg") == cardfile.UNKNOWN
    assert cardfile.classify("mg/mouse/99", "mg") == cardfile.UNKNOWN
    assert cardfile.classify("mg/cheese/2", "mms") == cardfile.WRONG_GAME


def test_uid_keys():
    assert rfid.uid_hex(b"\x04\xa1\x0b") == "04A10B"
    assert rfid.uid_hex(bytearray(b"\xde\xad\xbe\xef\x00"), 4) == "DEADBEEF"
    assert cardfile.norm_uid("de:ad:be:ef") == "DEADBEEF"
    assert cardfile.norm_uid("04 A1 B2 C3 D4 E5 F6") == "04A1B2C3D4E5F6"
    assert cardfile.norm_uid("DEADBE") is None
    assert cardfile.norm_uid("DEADBEEG") is None
    assert cardfile.norm_uid(None) is None


def _tmpdir(tag):
    d = "/tmp/maus-%s-%s-%d" % (tag, sys.implementation.name, time.time_ns() % 1000000007)
    os.mkdir(d)
    return d


def _cleanup(d):
    for sub in ("/cards", ""):
        try:
            for name in os.listdir(d + sub):
                try:
                    os.remove(d + sub + "/" + name)
                except OSError:
                    pass
            os.rmdir(d + sub)
        except OSError:
            pass


def test_enrolment_round_trip_atomic():
    d = _tmpdir("enrol")
    try:
        path = d + "/cards/enrol.json"
        e = enrol.Enrolment(path)
        assert e.map == {} and e.error is None  # no file yet: empty, no error
        assert e.add("de:ad:be:ef", "mg/mouse/7") == "mg/mouse/07"
        assert e.add("04A1B2C3D4E5F6", "game/mms") == "game/mms"
        assert sorted(os.listdir(d + "/cards")) == ["enrol.json"]  # no temp file left behind
        e2 = enrol.Enrolment(path)
        assert e2.get("DEADBEEF") == "mg/mouse/07"
        assert e2.get("04A1B2C3D4E5F6") == "game/mms"
        assert e2.remove("DE AD BE EF")
        assert not e2.remove("DEADBEEF")
        assert enrol.Enrolment(path).map == {"04A1B2C3D4E5F6": "game/mms"}
        raises(ValueError, e2.add, "xyz", "mg/mouse/1")
        raises(ValueError, e2.add, "DEADBEEF", "mg/mouse/99")
    finally:
        _cleanup(d)


def test_enrolment_corrupt_file_reported_and_ignored():
    d = _tmpdir("corrupt")
    try:
        os.mkdir(d + "/cards")
        path = d + "/cards/enrol.json"
        for text in ('{"cards": {"DEADBEEF": "mg/mou', "[1, 2]", '{"cards": 5}', "\xff\xfe garbage"):
            with open(path, "w") as f:
                f.write(text)
            e = enrol.Enrolment(path)
            assert e.map == {}
            assert e.error and path in e.error, text
        # Valid entries kept, invalid ones skipped and counted.
        with open(path, "w") as f:
            f.write('{"version": 1, "cards": {"DEADBEEF": "mg/cheese/03", "XYZ": "mg/mouse/1", '
                    '"01020304": "mg/mouse/99", "05060708": 12}}')
        e = enrol.Enrolment(path)
        assert e.error is None
        assert e.map == {"DEADBEEF": "mg/cheese/3"}
        assert e.skipped == 3
        # Saving repairs the file.
        e.add("01020304", "mim/card/1")
        assert enrol.Enrolment(path).map == {"DEADBEEF": "mg/cheese/3", "01020304": "mim/card/01"}
    finally:
        _cleanup(d)
