"""The log store, statistics, exports and the HTML report, through the `mausbox` CLI."""

from __future__ import annotations

import csv
import io
import json
import random
import xml.etree.ElementTree as ET

import pytest
from maus.log import writer as gamelog
from mausbox import report
from mausbox.cli import main
from mausbox.store import Store


def game_log(rng: random.Random, unit: str, reactions: dict[int, list[int]], false_starts: dict[int, int],
             scores: dict[int, int], wall: str | None = "2026-11-30T09:00:00", game: str = "mg",
             variant: str | None = None) -> bytes:
    recs = [("game_start", {"v": 1, "game": game, "variant": variant, "board": "sim", "unit": unit, "fw": "0.1",
                            "settings": {}, "wall": wall, "ticks": 0,
                            "players": [{"id": p, "colour": "red", "young": p == 2} for p in scores]})]
    rounds = max(len(v) for v in reactions.values())
    for r in range(rounds):
        recs.append(("reveal", {"card": "mg/mouse/%02d" % r}))
        for p, rts in reactions.items():
            if r < len(rts):
                recs.append(("press", {"player": p, "offset_us": rts[r], "false_start": False}))
                recs.append(("press", {"player": p, "offset_us": rts[r] + 900_000, "false_start": False}))  # again
        for p, n in false_starts.items():
            if r < n:
                recs.append(("press", {"player": p, "offset_us": -rng.randrange(1000, 90000), "false_start": True}))
    best = max(scores.values())
    recs.append(("game_end", {"scores": {str(k): v for k, v in scores.items()},
                              "winners": [k for k, v in scores.items() if v == best], "breakdown": {},
                              "why": "last mouse"}))
    t = 0
    out = []
    for seq, (typ, f) in enumerate(recs):
        t += rng.randrange(100, 4000)
        out.append(gamelog.encode(seq, t, typ, f))
    return b"".join(out)


@pytest.fixture
def store(tmp_path):
    rng = random.Random(11)
    s = Store(tmp_path / "store" / "logs.sqlite")
    for i in range(4):
        data = game_log(rng, "u1", {1: [200_000 + 1000 * k for k in range(11)], 2: [400_000] * 5 + [500_000] * 5},
                        {2: 2}, {1: 3 + i, 2: 5 - i})
        p = s.raw_dir("u1") / ("%05d-mg.jsonl" % (i + 1))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        s.ingest("u1", p)
    bad = game_log(rng, "u2", {1: [300_000]}, {}, {1: 1}, wall=None, game="mim")
    bad = bad.replace(b'"offset_us":300000', b'"offset_us":300001').replace(
        b'"offset_us":1200000', b'"offset_us":1200001')  # changed bytes: the reader flags both press lines
    p = s.raw_dir("u2") / "00001-mim.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(bad)
    s.ingest("u2", p)
    return s


@pytest.fixture
def class_store(tmp_path):
    """A morning of a class: Mausgeflippt races (100-400 ms) with penalties (scores below 0), and M is for
    Mouse variant B, whose claims take 10-23 s, and variant A."""
    rng = random.Random(7)
    s = Store(tmp_path / "class" / "logs.sqlite")
    plays = []
    for i in range(3):
        plays.append(("mg", None, {1: [rng.randrange(100_000, 400_000) for _ in range(12)],
                                   2: [rng.randrange(150_000, 450_000) for _ in range(12)]},
                      {1: 20 - 4 * i, 2: (-1, 0, -1)[i]}))  # a penalty leaves P2 at -1
    for _ in range(2):
        plays.append(("mim", "B", {1: [rng.randrange(10_000_000, 23_000_000) for _ in range(5)],
                                   2: [rng.randrange(12_000_000, 23_000_000) for _ in range(5)]}, {1: 12, 2: 4}))
    for n, (game, variant, rts, scores) in enumerate(plays, 1):
        p = s.raw_dir("u1") / ("%05d-%s.jsonl" % (n, game))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(game_log(rng, "u1", rts, {}, scores, game=game, variant=variant))
        s.ingest("u1", p)
    return s


def test_reaction_times_are_shown_per_game_and_variant(class_store):
    """A 200 ms race and a 15 s claim share no median, no histogram axis and no trend chart."""
    text = report.html_report(class_store)
    mg, mim = text.split("<h3>Mausgeflippt: the races</h3>", 1)[1].split(
        "<h3>M is for Mouse, variants B and C: the claims</h3>", 1)
    mim = mim.split("<h2>", 1)[0]
    assert "Reaction times over the session: Mausgeflippt: the races" in mg
    assert "Reaction times over the session: M is for Mouse, variants B and C" in mim

    def medians(section):
        rows = section.split("</table>", 1)[0].split("<tr>")[2:]
        return [float(r.split("<td>")[3].split("</td>")[0]) for r in rows]

    assert all(100 <= m <= 450 for m in medians(mg)) and all(10_000 <= m <= 23_000 for m in medians(mim))
    last_bar = [int(sec.split("Times above ", 1)[1].split(" ms", 1)[0]) for sec in (mg, mim)]
    assert last_bar[0] <= 600 and last_bar[1] >= 20_000  # each its own axis
    assert "Median ms" not in text.split("<h2>Reaction times</h2>", 1)[0]  # no mixed median in the players table


def test_logs_stats_says_when_its_times_mix_kinds_of_game(class_store, store, capsys):
    assert main(["logs", "stats", "--store", str(class_store.path)]) == 0
    assert "note: these times mix kinds of game; `mausbox report` shows each apart" in capsys.readouterr().out
    assert main(["logs", "stats", "--store", str(class_store.path), "--game", "mg"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_score_axis_marks_are_whole_steps_apart():
    for lo, hi in ((-1, 8), (-10, 30), (0, 1), (-3, 0), (0, 21_600), (0, 7)):
        marks = report.ticks(lo, hi)
        assert marks[0] <= lo and marks[-1] >= hi and 2 <= len(marks) <= 6, (lo, hi, marks)
        assert len({b - a for a, b in zip(marks, marks[1:])}) == 1, marks
    assert report.ticks(-1, 8) == [-2, 0, 2, 4, 6, 8]


def test_ingest_is_idempotent_and_replaces_changed_logs(store):
    g = store.games()
    assert len(g) == 5
    p = store.raw_dir("u1") / "00001-mg.jsonl"
    assert store.ingest("u1", p)[1] is False
    assert len(store.games()) == 5
    damaged = [x for x in g if x.damage]
    assert [x.name for x in damaged] == ["00001-mim.jsonl"] and "bad crc" in damaged[0].damage[0]


def test_percentiles():
    xs = [float(x) for x in range(1, 11)]
    assert report.percentile(xs, 50) == 5.5
    assert report.percentile(xs, 10) == pytest.approx(1.9)
    assert report.percentile(xs, 90) == pytest.approx(9.1)
    assert report.percentile([], 50) is None
    assert report.percentile([7.0], 90) == 7.0


def test_reaction_extraction_variants():
    # the documented press record (docs/log-format.md)
    assert report.reactions({"type": "press", "player": 2, "offset_us": 412345, "false_start": False}) == [
        (2, 412345)]
    assert report.reactions({"type": "press", "player": 2, "offset_us": -5000, "false_start": True}) == [(2, None)]
    assert report.reactions({"type": "press", "player": 2, "offset_us": 100, "false_start": True}) == [(2, None)]
    assert report.reactions({"type": "press", "player": 2, "us": 1500}) == [(2, 1500)]
    assert report.reactions({"type": "press", "player": 2, "us": -5}) == [(2, None)]
    assert report.reactions({"type": "false_start", "player": 4}) == [(4, None)]
    assert report.reactions({"type": "race", "presses": [[1, 900, 1], [3, -20, 0], [2, 5000, 2]]}) == [
        (1, 900), (3, None)]
    assert report.reactions({"type": "press", "player": "x", "us": 5}) == []
    assert report.reactions({"type": "reveal"}) == []


def test_stats_cli(store, capsys):
    assert main(["logs", "stats", "--store", str(store.path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    p = {(d["unit"], d["player"]): d for d in doc["players"]}
    a = p[("u1", 1)]
    assert a["games"] == 4 and a["reactions"] == 44 and a["median_ms"] == 205.0
    assert a["p10_ms"] == 201.0 and a["p90_ms"] == 209.0
    b = p[("u1", 2)]
    assert b["false_starts"] == 8 and b["median_ms"] == 450.0 and b["p10_ms"] == 400.0 and b["p90_ms"] == 500.0
    assert a["wins"] + b["wins"] == 5  # game 2 is a 4:4 draw: shared win


def test_list_show_and_names(store, tmp_path, capsys):
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"u1/1": "Anna", "2": "Ben"}))
    assert main(["logs", "list", "--store", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert out.count("mg.jsonl") == 4 and "finished!" in out
    assert main(["logs", "show", "00002-mg.jsonl", "--store", str(store.path), "--names", str(names)]) == 0
    out = capsys.readouterr().out
    assert "Anna" in out and "Ben" in out and "FALSE START" in out and "200.0 ms" in out
    assert main(["logs", "show", "00001-mim.jsonl", "--store", str(store.path)]) == 1  # damaged
    assert "DAMAGE" in capsys.readouterr().out
    assert main(["logs", "show", "00001", "--store", str(store.path)]) == 2  # ambiguous
    assert "ambiguous" in capsys.readouterr().err
    names.write_text("{nope")
    assert main(["logs", "stats", "--store", str(store.path), "--names", str(names)]) == 2


def test_exports(store, tmp_path, capsys):
    for what in ("games", "players", "events", "reactions"):
        out = tmp_path / ("%s.csv" % what)
        assert main(["logs", "export", "--store", str(store.path), "--what", what, "-o", str(out)]) == 0
        rows = list(csv.DictReader(io.StringIO(out.read_text())))
        assert rows
    rows = list(csv.DictReader(io.StringIO((tmp_path / "reactions.csv").read_text())))
    assert sum(r["reaction_ms"] == "false_start" for r in rows) == 8
    assert main(["logs", "export", "--store", str(store.path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["games"]) == 5 and doc["games"][0]["events"][0]["type"] == "game_start"


def test_html_report_is_self_contained(store, tmp_path):
    out = tmp_path / "r.html"
    assert main(["report", "--store", str(store.path), "-o", str(out), "--title", "Class <3b>"]) == 0
    text = out.read_text()
    assert "Class &lt;3b&gt;" in text and "<script" not in text and "http://" not in text.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    # histograms for u1/P1 and u1/P2 (u2/P1's only press sits on the damaged line), their trend over the
    # session, scores for mg and mim
    assert text.count("<svg") == 2 + 1 + 2
    for svg in text.split("<svg")[1:]:
        ET.fromstring("<svg" + svg.split("</svg>")[0] + "</svg>")  # each chart is well-formed XML
    assert "damaged" in text


def test_stats_use_late_and_locked_presses(tmp_path, capsys):
    """Format v2 logs every press of a reveal: late ones (after the decision) and locked ones (after a false
    start) count as presses, and a player's first of them after a reveal is that player's reaction time."""
    s = Store(tmp_path / "store" / "logs.sqlite")
    recs = [("game_start", {"v": 2, "game": "mg", "variant": None, "board": "sim", "unit": "u3", "fw": "0.1",
                            "settings": {}, "wall": None, "ticks": 0,
                            "players": [{"id": p, "colour": "red", "young": False} for p in (1, 2, 3)]}),
            ("press", {"player": 3, "offset_us": -20000, "false_start": True}),
            ("reveal", {"card": "mg/mouse/01"}),
            ("press", {"player": 1, "offset_us": 300000, "false_start": False}),
            ("press", {"player": 3, "offset_us": 310000, "false_start": False, "locked": True}),
            ("claim", {"player": 1, "offset_us": 300000, "tied": False}),
            ("press", {"player": 2, "offset_us": 900000, "false_start": False, "late": True}),
            ("press", {"player": 1, "offset_us": 1500000, "false_start": False, "late": True}),
            ("game_end", {"scores": {"1": 1, "2": 0, "3": 0}, "winners": [1], "breakdown": {}, "why": "x"})]
    data = b"".join(gamelog.encode(k, k * 10, typ, f) for k, (typ, f) in enumerate(recs))
    p = s.raw_dir("u3") / "00001-mg.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    s.ingest("u3", p)
    assert main(["logs", "stats", "--store", str(s.path), "--json"]) == 0
    doc = {d["player"]: d for d in json.loads(capsys.readouterr().out)["players"]}
    assert (doc[1]["presses"], doc[1]["late"], doc[1]["locked"], doc[1]["median_ms"]) == (2, 1, 0, 300.0)
    assert (doc[2]["presses"], doc[2]["late"], doc[2]["median_ms"]) == (1, 1, 900.0)
    assert (doc[3]["presses"], doc[3]["locked"], doc[3]["false_starts"], doc[3]["median_ms"]) == (2, 1, 1, 310.0)
    assert main(["logs", "stats", "--store", str(s.path)]) == 0
    out = capsys.readouterr().out
    assert "late" in out and "locked" in out


# --- what a teacher reads (issue 20) ----------------------------------------------------------------------------

def test_report_names_games_in_words_and_dates_every_game(tmp_path):
    s = Store(tmp_path / "store" / "logs.sqlite")
    rng = random.Random(3)
    for n, (game, wall) in enumerate((("mg", "2026-11-30T09:00:00"), ("mim", None), ("mms", None)), 1):
        data = game_log(rng, "u1", {1: [300_000, 350_000], 2: [500_000]}, {}, {1: 2, 2: 1}, wall=wall, game=game)
        if wall is None:  # the unit's clock never set: game_start carries ticks_ms since power-on
            data = b"".join(gamelog.encode(r["seq"], r["t"], r["type"], {k: v for k, v in r.items()
                                           if k not in ("seq", "t", "type", "crc")})
                            for r in (dict(json.loads(ln), **({"ticks": n * 3_723_000} if i == 0 else {}))
                                      for i, ln in enumerate(data.splitlines())))
        p = s.raw_dir("u1") / ("%05d-%s.jsonl" % (n, game))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        s.ingest("u1", p)
    text = report.html_report(s)
    for name in ("Mausgeflippt", "M is for Mouse", "Mucks Mäuschen Still"):
        assert name in text
    assert "<td>mg</td>" not in text and "Scores over sessions: mim" not in text
    assert "2026-11-30 09:00:00" in text
    assert "clock not set: 2 h 04 min after the unit was switched on" in text  # 7,446 s
    assert "clock not set: 3 h 06 min after the unit was switched on" in text
    assert report.game_title("mim", "B") == "M is for Mouse (variant B, the game leader)"
    mms = next(g for g in s.games() if g.game == "mms")  # `logs show` says the same
    assert report.timeline(s, mms)[0].startswith("u1/00003-mms.jsonl  Mucks Mäuschen Still  clock not set: 3 h")


def test_histogram_axis_fits_childrens_reactions():
    rng = random.Random(5)
    xs = [rng.uniform(200, 2000) for _ in range(300)] + [4000.0, 3900.0]  # two who looked away
    lo, hi = report.axis(xs)
    assert 100 <= lo <= 300 and 1900 <= hi <= 2100
    assert report.axis([450.0, 455.0]) == (200.0, 600.0)  # one quick player: still a readable span
    assert report.axis([205.0] * 10)[0] >= 0


def test_reaction_trend_over_the_session(store):
    text = report.html_report(store)
    trend = text.split("Reaction times over the session", 1)[1].split("</svg>", 1)[0]
    assert trend.count("<polyline") == 2  # u1/P1 and u1/P2, one line each
    assert trend.count("<circle") == 4 + 4  # a median per game they played
    assert "game 4: 205 ms" in trend  # P1's reactions 200..210 ms in every game


CHROMIUM = __import__("shutil").which("chromium") or __import__("shutil").which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None and not __import__("os").environ.get("CI"), reason="no chromium")
@pytest.mark.parametrize("which", ["store", "class_store"])
def test_report_in_a_browser_fits_the_page(which, request, tmp_path):
    """A screenshot of the report in headless Chromium, and its layout measured there: nothing wider than the
    page, every chart drawn, every axis label inside its chart and clear of the others (a class's
    Mausgeflippt scores, -1..20, had 0 and -1 on top of each other)."""
    import re
    import struct
    import subprocess

    store = request.getfixturevalue(which)
    page = tmp_path / "r.html"
    html = report.html_report(store)
    page.write_text(html.replace("</body>", """<pre id="result"></pre><script>
const out = {overflow: document.documentElement.scrollWidth - window.innerWidth, charts: 0, bad: [], overlap: []};
for (const svg of document.querySelectorAll("svg")) {
  out.charts++;
  const box = svg.getBoundingClientRect();
  const seen = [];
  for (const t of svg.querySelectorAll("text")) {
    const b = t.getBoundingClientRect();
    if (b.left < box.left - 1 || b.right > box.right + 1 || b.top < box.top - 1 || b.bottom > box.bottom + 1)
      out.bad.push(t.textContent);
    for (const [o, ob] of seen)
      if (b.left < ob.right - 1 && ob.left < b.right - 1 && b.top < ob.bottom - 1 && ob.top < b.bottom - 1)
        out.overlap.push(o + " / " + t.textContent);
    seen.push([t.textContent, b]);
  }
}
document.getElementById("result").textContent = JSON.stringify(out);
</script></body>"""))
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1100,1600"]
    shot = tmp_path / "report.png"  # kept in the test's folder to look at
    subprocess.run(flags + [f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=300)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1100, 1600)
    assert len(data) > 20_000  # text and charts, not a blank page
    proc = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=300)
    m = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    assert m, proc.stderr[-2000:]
    got = json.loads(m.group(1).replace("&quot;", '"'))
    assert got["overflow"] <= 0 and got["charts"] == html.count("<svg") >= 5 and got["bad"] == [], got
    assert got["overlap"] == [], got


def test_logs_output_fits_80_columns_and_json_stays_whole(tmp_path, capsys, monkeypatch):
    """`logs show`, `list` and `stats` on an 80-column terminal: a long line wraps under its column, a long
    name is cut; --json is the records as they are."""
    monkeypatch.setenv("COLUMNS", "80")
    rng = random.Random(3)
    unit = "5e1d31b1f8f5a0b1"
    s = Store(tmp_path / "logs.sqlite")
    p = s.raw_dir(unit) / "00001-mg.jsonl"
    p.parent.mkdir(parents=True)
    p.write_bytes(game_log(rng, unit, {1: [210_000] * 3, 2: [330_000] * 3, 3: [250_000] * 3, 4: [400_000] * 3},
                           {2: 1}, {1: 3, 2: 1, 3: 2, 4: 0}))
    s.ingest(unit, p)
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"1": "Annabella-Maximiliane von Oberhausen", "2": "Ben"}))
    for argv in (["show", "1"], ["show", "1", "--names", str(names)], ["list"], ["stats", "--names", str(names)]):
        assert main(["logs", *argv, "--store", str(s.path)]) == 0
        out = capsys.readouterr().out
        assert out and all(len(line) <= 80 for line in out.splitlines()), [ln for ln in out.splitlines()
                                                                            if len(ln) > 80]
    assert main(["logs", "show", "1", "--store", str(s.path), "--names", str(names)]) == 0
    out = capsys.readouterr().out
    assert "Annabella-Maximiliane von Oberhausen" in " ".join(out.split())  # wrapped, not cut
    assert main(["logs", "show", "1", "--store", str(s.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == s.events(s.games()[0].id)
