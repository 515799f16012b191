"""The class in one minute (report.class_summary): per child across units and seats, game by game (the seats a
game's start recorded), with the median per kind of game and the trend over the term; per unit, by its name,
anything odd. Old logs without names or seats are counted by unit and button, as before."""

from __future__ import annotations

from maus.log import writer as gamelog
from mausbox import report
from mausbox.store import Store


def _log(unit: str, wall: str, seats: dict | None, name: str | None, times: dict[int, list[int]],
         extra: list[tuple[str, dict]] = (), game: str = "mg", winner: int = 1) -> bytes:
    start = {"v": 2, "game": game, "variant": None, "board": "sim", "unit": unit, "fw": "0.1", "settings": {},
             "wall": wall, "ticks": 0, "players": [{"id": p, "colour": "red", "young": False} for p in times]}
    if name:
        start["name"] = name
    if seats:
        start["seats"] = seats
    recs = [("game_start", start)]
    for r in range(max(len(v) for v in times.values())):
        recs.append(("reveal", {"card": "mg/mouse/%02d" % r}))
        for p, ts in times.items():
            if r < len(ts):
                recs.append(("press", {"player": p, "offset_us": ts[r], "false_start": False}))
    recs += list(extra)
    recs.append(("game_end", {"scores": {str(p): int(p == winner) for p in times}, "winners": [winner],
                              "breakdown": {}, "why": "test"}))
    return b"".join(gamelog.encode(i, 100 * i, t, f) for i, (t, f) in enumerate(recs))


def _put(s: Store, unit: str, n: int, data: bytes, game: str = "mg") -> None:
    p = s.raw_dir(unit) / ("%05d-%s.jsonl" % (n, game))
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    s.ingest(unit, p)


def test_children_by_seat_and_units_by_name(tmp_path):
    s = Store(tmp_path / "s" / "logs.sqlite")
    # Anna sits at P1 on Tisch 1 for two games, then at P2 on Tisch 2 for two: one child, getting quicker
    for i in range(2):
        _put(s, "aa01", i + 1, _log("aa01", "2026-09-0%dT09:00:00" % (i + 1), {"1": "Anna", "2": "Ben"}, "Tisch 1",
                                    {1: [400_000, 410_000], 2: [500_000, 500_000]},
                                    extra=[("note", {"text": "stuck button", "player": 2})] if i else []))
    for i in range(2):
        _put(s, "bb02", i + 1, _log("bb02", "2026-12-0%dT09:00:00" % (i + 1), {"1": "Ben", "2": "Anna"}, "Tisch 2",
                                    {1: [520_000], 2: [300_000, 310_000]}, winner=2,
                                    extra=[("tap", {"identity": None, "uid": "04aabb"}),
                                           ("alarm", {"player": None})]))
    _put(s, "cc03", 1, _log("cc03", None, None, None, {1: [350_000]}))  # an old log: no name, no seats
    out = report.class_summary(s)
    kids = {c["name"]: c for c in out["children"]}
    assert set(kids) == {"Anna", "Ben", "cc03/P1"}
    anna = kids["Anna"]
    assert anna["games"] == 4 and anna["wins"] == 4 and anna["timed_games"] == 4
    assert anna["median_ms"] == {"mg": 355.0} and anna["trend_ms"] is not None and anna["trend_ms"] < -90
    assert kids["Ben"]["games"] == 4 and kids["Ben"]["wins"] == 0
    units = {u["name"] or u["unit"]: u for u in out["units"]}
    assert units["Tisch 1"]["games"] == 2 and units["Tisch 1"]["odd"] == {"stuck buttons": 1}
    assert units["Tisch 2"]["odd"] == {"cards the reader could not read": 2, "alarms with nobody at the castle": 2}
    assert units["cc03"]["odd"] == {}
    html = report.html_report(s)
    assert "The class in one minute" in html and "quicker by" in html and "Tisch 2 (bb02)" in html
    assert "2 cards the reader could not read" in html
