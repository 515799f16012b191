"""Fuzz: 100,000 random and mutated lines through the log reader, and as many documents through the
settings loader: 0 unhandled exceptions, 0 reader errors, every verdict consistent."""

from __future__ import annotations

import random

from maus.log import check as logcheck
from maus.log import read as logread
from maus.log import writer as gamelog
from maus.settings import values as settings

N = 100_000


def seeds() -> list[bytes]:
    return [
        gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mausgeflippt", "variant": None,
                                            "players": [{"id": 1, "colour": "red", "young": False}],
                                            "board": "devkitc", "unit": "ab", "fw": "0.1.0",
                                            "settings": settings.defaults(), "wall": None, "ticks": 1}),
        gamelog.encode(5, 1200, "press", {"player": 2, "offset_us": -4000, "false_start": True}),
        gamelog.encode(6, 1300, "tap", {"identity": "mg/clothing/31", "uid": "04a1b2"}),
        gamelog.encode(9, 9999, "game_end", {"scores": {"1": 1}, "winners": [1], "breakdown": {"1": {}}, "why": "x"}),
        gamelog.encode(3, 10, "note", {"text": "Käse \u00fc \"quoted\" \\ back"}),
    ]


PIECES = [b"{", b"}", b'"', b",", b":", b"\n", b"\\", b"\\u00", b"\xff", b"\xc3", b'"crc":"', b',"crc":"',
          b"1e999", b"-0", b"NaN", b"[", b"]", b"null", b"true", b'"seq":', b"\x00", b"9" * 30, b"\r"]


def mutate(rnd: random.Random, line: bytes) -> bytes:
    b = bytearray(line)
    for _ in range(rnd.randint(1, 6)):
        op = rnd.randint(0, 5)
        j = rnd.randint(0, len(b))
        if op == 0 and b:
            del b[j:j + rnd.randint(1, 12)]
        elif op == 1:
            b[j:j] = rnd.choice(PIECES)
        elif op == 2 and b:
            b[min(j, len(b) - 1)] ^= 1 << rnd.randint(0, 7)
        elif op == 3:
            b = b[:j]
        elif op == 4:
            b[j:j] = bytes(rnd.randint(0, 255) for _ in range(rnd.randint(1, 8)))
        else:
            # re-seal a mutated body with a valid crc: gets past the CRC into the JSON and record checks
            body = bytes(b).split(logread.CRC_KEY)[0]
            b = bytearray(body + logread.CRC_KEY + logread.crc_hex(body) + b'"}')
    return bytes(b)


def test_reader_fuzz():
    rnd = random.Random(4)
    base = seeds()
    kinds: dict[str, int] = {}
    ok = 0
    batch: list[bytes] = []
    for i in range(N):
        if i % 10 == 0:
            line = bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 80)))
        else:
            line = mutate(rnd, rnd.choice(base).rstrip(b"\n"))
        rec, err = logread.check_line(line)
        assert (rec is None) != (err is None)
        if rec is not None:
            ok += 1
            assert isinstance(rec, dict) and isinstance(rec["seq"], int) and isinstance(rec["type"], str)
        else:
            kinds[err[0]] = kinds.get(err[0], 0) + 1
        batch.append(line + b"\n")
        if len(batch) == 50:
            rep = logcheck.read(b"".join(batch))
            assert not any(p.what == logread.INTERNAL for p in rep.problems), rep.problems
            assert rep.lines >= 50
            batch = []
    assert {logread.BAD_JSON, logread.BAD_CRC, logread.BAD_RECORD} <= set(kinds), kinds
    assert ok > 100  # resealed lines get through: the record checks are exercised too


def test_settings_loader_fuzz():
    rnd = random.Random(9)
    base = [settings.dump(settings.defaults()), b'{"lang":"en","volume":3,"hints":true}', b"{}"]
    good = 0
    for i in range(N):
        if i % 10 == 0:
            data = bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 60)))
        else:
            data = mutate(rnd, rnd.choice(base))
        vals, why = settings.parse(data)
        assert (vals is None) != (why is None)
        if vals is not None:
            good += 1
            assert set(vals) == set(settings.SCHEMA)
            assert all(settings.check(k, v) is None for k, v in vals.items())
    assert good > 100
