# NDEF TLV container and Text records: build, parse, and garbage that must never raise.
import rfidkit
from fwtest import Rand, raises
from maus.drivers import ndef, ndef_write


def test_text_record_round_trip():
    rec = ndef_write.text_record("mausbox:mg/mouse/07")
    assert rec[0] == 0xD1  # MB ME SR, TNF well-known
    assert rec[1] == 1 and rec[3:4] == b"T"
    assert rec[4] == 2  # status: UTF-8, language code length 2
    data = ndef_write.tlv(rec)
    assert data[0] == 0x03 and data[1] == len(rec) and data[-1] == 0xFE
    loc = ndef.find_message(data)
    assert loc == (2, len(rec))
    assert ndef.parse_text(data, loc[0], loc[1]) == ("en", "mausbox:mg/mouse/07")
    assert ndef.read_text(data) == "mausbox:mg/mouse/07"


def test_language_and_unicode():
    data = ndef_write.tlv(ndef_write.text_record("Käse", "de-CH"))
    assert ndef.parse_text(data, 2, data[1]) == ("de-CH", "Käse")


def test_three_byte_length_and_long_record():
    text = "x" * 300
    rec = ndef_write.text_record(text)
    assert rec[0] & 0x10 == 0  # not a short record: 4-byte payload length
    data = ndef_write.tlv(rec)
    assert data[1] == 0xFF and (data[2] << 8 | data[3]) == len(rec)
    assert ndef.find_message(data) == (4, len(rec))
    assert ndef.read_text(data) == text


def test_three_byte_form_for_a_short_length_is_tolerated():
    rec = ndef_write.text_record("hi")
    data = bytes((0x03, 0xFF, 0x00, len(rec))) + rec + b"\xfe"
    assert ndef.find_message(data) == (4, len(rec))
    assert ndef.read_text(data) == "hi"


def test_null_and_other_tlvs_are_skipped():
    rec = ndef_write.text_record("hi")
    data = b"\x00\x00" + b"\x01\x03\xa0\x10\x44" + b"\xfd\x01\x99" + ndef_write.tlv(rec)
    assert ndef.read_text(data) == "hi"


def test_terminator_and_empty():
    assert ndef.find_message(b"\xfe\x03\x05hello") is None
    assert ndef.find_message(b"\x03\x00\xfe") == (2, 0)
    assert ndef.read_text(b"\x03\x00\xfe") is None
    assert ndef.find_message(b"") is None
    assert ndef.find_message(b"\x00\x00\x00") is None


def test_message_longer_than_data_is_reported_not_read():
    data = ndef_write.tlv(ndef_write.text_record("mausbox:game/mausgeflippt"))
    loc = ndef.find_message(data, 12)
    assert loc == (2, data[1])  # the caller sees it needs more bytes
    assert ndef.read_text(data, 12) is None
    assert ndef.read_text(data, len(data)) == "mausbox:game/mausgeflippt"


def test_second_record_text_found():
    uri = bytes((0x91, 1, 3)) + b"U" + b"\x04ab"  # MB, SR, well-known "U"
    text = ndef_write.text_record("hello")
    text = bytes((0x51,)) + text[1:]  # ME, SR (not MB)
    data = ndef_write.tlv(uri + text)
    assert ndef.read_text(data) == "hello"


def test_bad_records_are_none():
    # UTF-16 text
    assert ndef.read_text(b"\x03\x08\xd1\x01\x04T\x82enhi") is None
    # language length beyond the payload
    assert ndef.read_text(b"\x03\x07\xd1\x01\x03T\x09en") is None
    # invalid UTF-8
    assert ndef.read_text(b"\x03\x08\xd1\x01\x04T\x02en\xff") is None
    # payload length beyond the message
    assert ndef.read_text(b"\x03\x05\xd1\x01\x40T\x02") is None
    # 3-byte TLV length beyond the largest allowed
    assert ndef.find_message(b"\x03\xff\xff\xffabcde") is None
    # chunked record
    assert ndef.read_text(b"\x03\x08\xb1\x01\x04T\x02enhi") is None


def test_build_limits():
    raises(ValueError, ndef_write.text_record, "x", "")
    raises(ValueError, ndef_write.text_record, "x", "a" * 64)
    raises(ValueError, ndef_write.tlv, _Long())


class _Long:
    # A message one byte longer than a TLV's 3-byte length may state, without holding its 64 KB: tlv() must
    # refuse it by its length, before it copies a byte (bytes(0xFFFF) took half this file's heap, at its cap).
    def __len__(self):
        return ndef.MAX_MESSAGE + 1

    def __iter__(self):
        return iter(bytes(len(self)))  # what bytes(message) would copy, were it not refused first


def test_fuzz_garbage_never_raises():
    rand = Rand(5)
    good = ndef_write.tlv(ndef_write.text_record("mausbox:mim/card/12"))
    for i in range(3000):
        n = rand.randint(0, 48)
        if i % 3 == 0:
            buf = bytearray(good)  # a valid message with a few bytes damaged
            for _ in range(rand.randint(1, 3)):
                buf[rand.randint(0, len(buf) - 1)] = rand.next() & 0xFF
        else:
            buf = bytearray(rand.next() & 0xFF for _ in range(n))
            if n and i % 2:
                buf[0] = 0x03
        r = ndef.read_text(buf)
        assert r is None or isinstance(r, str)
        loc = ndef.find_message(buf, rand.randint(0, len(buf)))
        if loc is not None:
            assert loc[0] <= len(buf) + 4
            off = loc[0]
            ln = min(loc[1], len(buf) - off)
            p = ndef.parse_text(buf, off, ln)
            assert p is None or len(p) == 2


def test_every_chip_variant():
    # No test here builds a chip: every one is left out, which every_variant checks for itself.
    rfidkit.every_variant(globals())
