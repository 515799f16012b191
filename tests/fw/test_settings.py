import sys

import logfs
from fwtest import Rand, raises
from maus.settings import values as settings
from maus.settings.values import SCHEMA, Settings, check, parse

MPY = sys.implementation.name == "micropython"


def test_schema_defaults_are_valid_and_bounds_hold():
    for k, spec in SCHEMA.items():
        assert check(k, spec[0]) is None, k
        if type(spec[0]) is int:
            assert check(k, spec[1] - 1) is not None and check(k, spec[2] + 1) is not None, k
            assert check(k, True) is not None  # a bool is not a number here
            assert check(k, float(spec[0])) is not None
        elif type(spec[0]) is bool:
            assert check(k, 1) is not None
        else:
            assert check(k, "xx") is not None and check(k, 1) is not None
    d = settings.defaults()
    assert d["lang"] == "de" and d["tie_window_us"] == 2000 and d["lockout"] is True and d["brightness"] == 32
    assert d["dice"] == "electronic" and d["sensitivity"] == 5 and d["hints"] is False
    assert check("nope", 1) == "unknown setting"
    assert check("volume", 4) == "must be 0..3"


def test_first_boot_uses_defaults():
    with logfs.Fs() as fs:
        s = Settings(fs.root)
        assert s.source == "defaults" and s.values == settings.defaults()
        assert s.message == "no settings yet: using defaults"


def test_set_saves_atomically_and_reports_changes():
    with logfs.Fs() as fs:
        seen = []
        s = Settings(fs.root, lambda k, old, new: seen.append((k, old, new)))
        assert s.set("volume", 3)
        assert not s.set("volume", 3)  # no change, nothing logged
        s.set("lang", "en")
        s.update({"hints": True, "hint_after_s": 45, "debounce_ms": 30})
        assert seen == [("volume", 2, 3), ("lang", "de", "en"), ("hint_after_s", 20, 45), ("hints", False, True)]
        e = raises(ValueError, s.set, "volume", 9)
        assert "volume must be 0..3" in str(e)
        raises(ValueError, s.update, {"lang": "fr", "volume": 1})
        assert s["volume"] == 3  # the bad update changed nothing
        t = Settings(fs.root)  # reboot
        assert t.source == "file" and t["volume"] == 3 and t["lang"] == "en" and t["hints"] is True
        # the last good copy is the file before the last save
        b, why = parse(logfs.read(fs.root + "/" + settings.BAK))
        assert why is None and b["hints"] is False and b["lang"] == "en"


def test_corrupt_file_falls_back_to_last_good_then_defaults():
    with logfs.Fs() as fs:
        s = Settings(fs.root)
        s.set("volume", 1)
        s.set("brightness", 200)
        path = fs.root + "/" + settings.FILE
        logfs.write(path, b'{"volume": 1, "brightn')  # torn
        t = Settings(fs.root)
        assert t.source == "backup" and t["volume"] == 1 and t["brightness"] == 32
        assert t.message == "settings.json not valid JSON: using last good copy"
        assert parse(logfs.read(path))[0] == t.values  # repaired from the last good copy
        logfs.write(path, b'{"volume": 7}')
        logfs.write(fs.root + "/" + settings.BAK, b"[]")
        u = Settings(fs.root)
        assert u.source == "defaults" and u.values == settings.defaults()
        assert u.message == "settings.json volume must be 0..3, last good copy not a JSON object: using defaults"


def test_unknown_keys_ignored_missing_keys_default():
    vals, why = parse(b'{"lang": "en", "from_the_future": 1}')
    assert why is None and vals["lang"] == "en" and "from_the_future" not in vals and vals["volume"] == 2


def test_leftover_temp_file_is_ignored():
    with logfs.Fs() as fs:
        Settings(fs.root).set("sensitivity", 9)
        logfs.write(fs.root + "/" + settings.FILE + ".tmp", b"half")
        assert Settings(fs.root)["sensitivity"] == 9
        settings.remove_all(Settings(fs.root))
        assert Settings(fs.root).source == "defaults"


def test_fuzz_loader_never_raises():
    # the CPython host test runs 100,000; here a smaller count on both interpreters
    r = Rand(11)
    base = settings.dump(settings.defaults())
    pieces = [b"{", b"}", b'"', b",", b":", b"true", b"1e400", b"-0", b"\xff", b"[", b"null", b'"lang"', b"99999999999999999999"]
    for _ in range(400 if MPY else 3000):
        data = bytearray(base)
        for _ in range(r.randint(1, 5)):
            j = r.randint(0, len(data))
            op = r.randint(0, 2)
            if op == 0:
                data = data[:j] + data[j + r.randint(1, 10):]
            elif op == 1:
                data[j:j] = r.choice(pieces)
            elif data:
                data[min(j, len(data) - 1)] = r.randint(0, 255)
        vals, why = parse(bytes(data))
        assert (vals is None) != (why is None)
        if vals is not None:
            for k, v in vals.items():
                assert check(k, v) is None
