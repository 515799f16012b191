"""Statistics, timelines, exports and the class HTML report, all read from the log store.

Reaction data in a log (docs/log-format.md: `press` with `player`, `offset_us`, `false_start`) is read
leniently, so every game's way of logging a race counts:
- a record whose type contains "press" with "player" and a µs offset from the reveal ("offset_us", "us",
  "dt_us" or "reaction_us"): a reaction time when the offset is >= 0 and its "kind" (if any) is valid;
  a false start when "false_start" is true, the offset is negative or its kind says so;
- a record of type "false_start" with "player";
- a record with "presses": [[player, offset_us, kind], ...] (kind as in maus.capture.arbiter: 0 false start, 1 valid).
Every press of a reveal is used (log format v2 logs them all, docs/log-format.md): a player's first timed
press after each `reveal` is their reaction time, whether it took part in the race, came after it was
decided (`late`) or was ignored by it (`locked`); every press counts in `presses`, `late` and `locked`. Players are (unit, player id) pairs; a names file on the host gives them names (never sent to a unit).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mausbox.shown import plural
from mausbox.store import Game, Store

_OFFSET_KEYS = ("offset_us", "us", "dt_us", "reaction_us")
# The games by the name a log gives them (game_start "game"), in words; M is for Mouse's variants as its
# rulebook calls them (docs/games/mim.md).
GAME_NAMES = {"mg": "Mausgeflippt", "mausgeflippt": "Mausgeflippt", "mim": "M is for Mouse",
              "mms": "Mucks Mäuschen Still"}
VARIANT_NAMES = {("mim", "A"): "A, turns", ("mim", "B"): "B, the game leader", ("mim", "C"): "C, all together"}
# Children's reaction times are 200-2000 ms: a histogram's axis spans the data's p2..p98 in whole 100 ms
# steps, at least this wide, with what lies outside in the first and last bar (the page says so).
AXIS_MIN_SPAN_MS = 400


def reaction_kind(game: str | None, variant: str | None) -> str:
    """Which reaction times compare: a Mausgeflippt race (a reveal to the first press, well under 2 s) is not
    an M is for Mouse claim in variant B or C (seconds of searching the cards), nor variant A's turn."""
    if game == "mim":
        return "mim-A" if variant == "A" else "mim-BC" if variant in ("B", "C") else "mim"
    return "mg" if game == "mausgeflippt" else game or "?"


KIND_TITLES = {"mg": "Mausgeflippt: the races", "mausgeflippt": "Mausgeflippt: the races",
               "mim-A": "M is for Mouse, variant A (turns)",
               "mim-BC": "M is for Mouse, variants B and C: the claims", "mim": "M is for Mouse",
               "mms": "Mucks Mäuschen Still"}


def game_title(game: str | None, variant: str | None = None) -> str:
    name = GAME_NAMES.get(game or "", game or "unknown game")
    if variant:
        name += " (variant %s)" % VARIANT_NAMES.get((game or "", variant), variant)
    return name


def _clock(ms: int) -> str:
    h, m = divmod(ms // 60000, 60)
    return "%d h %02d min" % (h, m) if h else "%d min %02d s" % (m, ms // 1000 % 60)


def when(g: Game, start: dict[str, Any] | None) -> str:
    """When a game was played: the unit's clock from the log, or, when it was never set, its time since
    power-on (game_start `ticks`), said so."""
    if g.wall:
        return g.wall.replace("T", " ")
    ticks = (start or {}).get("ticks")
    if isinstance(ticks, int) and ticks >= 0:
        return "clock not set: %s after the unit was switched on" % _clock(ticks)
    return "clock not set"


def axis(values: list[float]) -> tuple[float, float]:
    """lo, hi (ms) for reaction histograms: the data's p2..p98 on whole 100 ms, at least AXIS_MIN_SPAN_MS."""
    xs = sorted(values)
    lo = math.floor((percentile(xs, 2) or 0.0) / 100.0) * 100.0
    hi = math.ceil((percentile(xs, 98) or 100.0) / 100.0) * 100.0
    if hi - lo < AXIS_MIN_SPAN_MS:
        mid = (lo + hi) / 2
        lo = max(0.0, math.floor((mid - AXIS_MIN_SPAN_MS / 2) / 100.0) * 100.0)
        hi = lo + AXIS_MIN_SPAN_MS
    return lo, hi
_FALSE = ("false_start", "false", "early", 0)
_VALID = ("valid", "win", "first", "tie", 1, None)
PALETTE = {"red": "#d62728", "blue": "#1f77b4", "green": "#2ca02c", "yellow": "#d4a017", "purple": "#9467bd",
           "cyan": "#17becf"}


def load_names(path: str | Path | None) -> dict[str, str]:
    """A names file: JSON {"<unit>/<player>": "Anna", "<player>": "Ben", ...} (the second for any unit)."""
    if not path:
        return {}
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError("names file %s: %s" % (path, e)) from None
    if not isinstance(doc, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in doc.items()):
        raise ValueError("names file %s: want a JSON object of \"unit/player\": \"name\"" % path)
    return doc


def unit_label(unit: str, name: str | None) -> str:
    """A unit as the report names it: `Tisch 3 (5e1db134)`, or its id's first 8 digits."""
    return "%s (%s)" % (name, unit[:8]) if name else unit[:8]


def label(unit: str, pid: int, names: dict[str, str]) -> str:
    return names.get("%s/%d" % (unit, pid)) or names.get(str(pid)) or "%s/P%d" % (unit[:8], pid)


def reactions(rec: dict[str, Any]) -> list[tuple[int, int | None]]:
    """(player, offset_us) pairs in one record; offset None marks a false start."""
    out: list[tuple[int, int | None]] = []
    typ = rec.get("type", "")
    if typ == "false_start" and isinstance(rec.get("player"), int):
        return [(rec["player"], None)]
    presses = rec.get("presses")
    if isinstance(presses, list):
        for p in presses:
            if isinstance(p, (list, tuple)) and len(p) >= 2 and isinstance(p[0], int) and isinstance(p[1], int):
                kind = p[2] if len(p) > 2 else None
                if kind in _FALSE or p[1] < 0:
                    out.append((p[0], None))
                elif kind in _VALID:
                    out.append((p[0], p[1]))
        return out
    if "press" in typ and isinstance(rec.get("player"), int):
        off = next((rec[k] for k in _OFFSET_KEYS if isinstance(rec.get(k), int)), None)
        if off is None:
            return out
        kind = rec.get("kind")
        if rec.get("false_start") is True or kind in _FALSE or off < 0:
            out.append((rec["player"], None))
        elif kind in _VALID:
            out.append((rec["player"], off))
    return out


def percentile(xs: list[float], p: float) -> float | None:
    """Linear-interpolated percentile (p in 0..100) of sorted xs."""
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


@dataclass
class PlayerStats:
    unit: str
    player: int
    name: str
    games: int = 0
    wins: int = 0
    false_starts: int = 0
    presses: int = 0  # every press record of a reveal, false starts, late and locked presses included
    late: int = 0  # presses after the race was decided
    locked: int = 0  # presses the race ignored (locked out after a false start, or a repeat)
    reactions_ms: list[float] = field(default_factory=list)
    scores: list[tuple[int, str, int]] = field(default_factory=list)  # (game id, game, score)
    per_game_ms: dict[int, list[float]] = field(default_factory=dict)  # game id -> reaction times, in order

    def summary(self) -> dict[str, Any]:
        rs = sorted(self.reactions_ms)
        def r(v):
            return (None if v is None else round(v, 1))
        return {"unit": self.unit, "player": self.player, "name": self.name, "games": self.games,
                "wins": self.wins, "false_starts": self.false_starts, "presses": self.presses, "late": self.late,
                "locked": self.locked, "reactions": len(rs),
                "median_ms": r(percentile(rs, 50)), "p10_ms": r(percentile(rs, 10)), "p90_ms": r(percentile(rs, 90))}


def collect(store: Store, names: dict[str, str] | None = None, unit: str | None = None,
            game: str | None = None) -> tuple[list[Game], list[PlayerStats]]:
    names = names or {}
    games = store.games(unit=unit, game=game)
    stats: dict[tuple[str, int | str], PlayerStats] = {}

    seats: dict[int, str] = {}  # the game's seats (its game_start: `mausbox class seats`): a child by name

    def ps(u: str, pid: int) -> PlayerStats:
        child = seats.get(pid)
        if child:  # the same child on any unit, at any seat: one row (unit "", player 0)
            key = ("", child.casefold())
            if key not in stats:
                stats[key] = PlayerStats("", 0, child)
            return stats[key]
        if (u, pid) not in stats:
            stats[(u, pid)] = PlayerStats(u, pid, label(u, pid, names))
        return stats[(u, pid)]

    for g in games:
        seats = store.seats(g.id)
        for p in store.players(g.id):
            s = ps(g.unit, p["player"])
            s.games += 1
            s.wins += p["winner"]
            if p["score"] is not None:
                s.scores.append((g.id, g.game or "?", p["score"]))
        timed: set[int] = set()  # players with a reaction time since the last reveal: later presses don't count
        for rec in store.events(g.id):
            if rec.get("type") == "reveal":
                timed.clear()
            rs = reactions(rec)
            if len(rs) == 1 and "press" in rec.get("type", ""):
                s = ps(g.unit, rs[0][0])
                s.presses += 1
                s.late += rec.get("late") is True
                s.locked += rec.get("locked") is True
            for pid, off in rs:
                s = ps(g.unit, pid)
                if off is None:
                    s.false_starts += 1
                elif pid not in timed:
                    timed.add(pid)
                    s.reactions_ms.append(off / 1000.0)
                    s.per_game_ms.setdefault(g.id, []).append(off / 1000.0)
    return games, sorted(stats.values(), key=lambda s: (s.unit, s.player))


# --- the class in one minute: per child, per unit ---------------------------------------------------

def _median(xs: list[float]) -> float | None:
    return percentile(sorted(xs), 50)


def class_summary(store: Store, names: dict[str, str] | None = None, unit: str | None = None,
                  game: str | None = None) -> dict[str, Any]:
    """What a teacher reads in a minute, from every pull in the store. Per child (seated by name, or unit and
    button): games, wins, the median reaction time per kind of game, and the trend over the term (the median of
    the later half of their timed games against the earlier half, in ms: negative is quicker). Per unit (by its
    name beside its id): games, and anything odd: stuck buttons, alarms with nobody at the castle, cards the
    reader could not read, aborted games, damaged logs, records lost to a full flash."""
    games, stats = collect(store, names, unit, game)
    by_id = {g.id: g for g in games}
    children = []
    for s in stats:
        kinds: dict[str, list[float]] = {}
        order = sorted(s.per_game_ms, key=lambda gid: ((by_id[gid].wall or ""), gid))
        for gid in order:
            g = by_id[gid]
            kinds.setdefault(reaction_kind(g.game, g.variant), []).extend(s.per_game_ms[gid])
        trend = None
        per = [x for x in (_median(s.per_game_ms[gid]) for gid in order) if x is not None]
        if len(per) >= 4:
            half = len(per) // 2
            a, b = _median(per[:half]), _median(per[-half:])
            trend = None if a is None or b is None else round(b - a, 1)
        children.append({"name": s.name, "games": s.games, "wins": s.wins, "false_starts": s.false_starts,
                         "median_ms": {k: round(_median(v) or 0, 1) for k, v in sorted(kinds.items())},
                         "trend_ms": trend, "timed_games": len(per)})
    units: dict[str, dict[str, Any]] = {}
    for g in games:
        u = units.setdefault(g.unit, {"unit": g.unit, "name": None, "games": 0, "odd": {}})
        u["games"] += 1
        u["name"] = store.unit_name(g.id) or u["name"]
        odd = u["odd"]

        def add(what: str, n: int = 1, odd: dict = odd) -> None:
            odd[what] = odd.get(what, 0) + n

        if g.status == "aborted":
            add("aborted games")
        if g.damage:
            add("damaged logs")
        for rec in store.events(g.id):
            t = rec.get("type")
            if t == "note" and rec.get("text") == "stuck button":
                add("stuck buttons")
            elif t == "note" and rec.get("text") == "flash full: records lost":
                add("records lost (flash full)", int(rec.get("lost") or 0) or 1)
            elif t == "alarm" and rec.get("player") is None:
                add("alarms with nobody at the castle")
            elif t == "tap" and rec.get("identity") is None:
                add("cards the reader could not read")
    return {"games": len(games), "children": children,
            "units": sorted(units.values(), key=lambda u: ((u["name"] or "~").casefold(), u["unit"]))}


def _summary_html(summary: dict[str, Any]) -> list[str]:
    out = ["<h2>The class in one minute</h2>"]
    kinds = sorted({k for c in summary["children"] for k in c["median_ms"]})
    out.append("<table><tr><th>Child</th><th>Games</th><th>Wins</th>%s<th>Trend</th></tr>" % "".join(
        "<th>Median: %s</th>" % _esc(k) for k in kinds))
    for c in summary["children"]:
        t = c["trend_ms"]
        trend = ("–" if t is None else "quicker by %.0f ms" % -t if t < 0 else "slower by %.0f ms" % t if t > 0
                 else "steady")
        out.append("<tr><td>%s</td><td>%d</td><td>%d</td>%s<td>%s</td></tr>" % (
            _esc(c["name"]), c["games"], c["wins"], "".join(
                "<td>%s</td>" % ("%.0f ms" % c["median_ms"][k] if k in c["median_ms"] else "–") for k in kinds),
            _esc(trend)))
    out.append("</table><table><tr><th>Unit</th><th>Games</th><th>Anything odd</th></tr>")
    for u in summary["units"]:
        odd = ", ".join("%d %s" % (n, what) for what, n in sorted(u["odd"].items())) or "nothing"
        out.append("<tr><td>%s</td><td>%d</td><td%s>%s</td></tr>" % (
            _esc(unit_label(u["unit"], u["name"])), u["games"], ' class="warn"' if u["odd"] else "", _esc(odd)))
    out.append("</table>")
    return out


# --- a readable timeline -------------------------------------------------------------------------

def _fmt_t(ms: int) -> str:
    return "%d:%02d.%03d" % (ms // 60000, ms // 1000 % 60, ms % 1000)


def timeline(store: Store, g: Game, names: dict[str, str] | None = None) -> list[str]:
    names = names or {}
    start = next((r for r in store.events(g.id) if r.get("type") == "game_start"), None)
    lines = ["%s/%s  %s  %s  %s  %s%s" % (
        g.unit, g.name, game_title(g.game, g.variant), when(g, start), plural(g.records, "record"), g.status,
        ": " + g.reason if g.reason else "")]
    for d in g.damage:
        lines.append("  DAMAGE %s" % d)
    timed: set[int] = set()
    for rec in store.events(g.id):
        typ = rec.get("type", "?")
        who = ""
        if isinstance(rec.get("player"), int):
            who = label(g.unit, rec["player"], names) + " "
        rest = {k: v for k, v in rec.items() if k not in ("seq", "t", "type", "crc", "player")}
        if typ == "game_start":
            pl = ", ".join("%s %s%s" % (label(g.unit, p.get("id", 0), names), p.get("colour", ""),
                                        " (young)" if p.get("young") else "")
                           for p in rest.get("players", []) if isinstance(p, dict))
            text = "game %s, players: %s" % (rest.get("game"), pl)
        elif typ == "game_end":
            sc = rest.get("scores") or {}
            text = "end (%s): %s; winners %s" % (
                rest.get("why"), ", ".join("%s %s" % (label(g.unit, int(k), names), v) for k, v in sc.items()
                                           if str(k).isdigit()),
                ", ".join(label(g.unit, w, names) for w in rest.get("winners", []) if isinstance(w, int)))
        else:
            if typ == "reveal":
                timed.clear()
            rt = reactions(rec)
            extra = ""
            if len(rt) == 1 and who:
                pid, off = rt[0]
                for k in _OFFSET_KEYS + ("false_start", "kind"):
                    rest.pop(k, None)
                if off is None:
                    extra = "FALSE START"
                elif pid in timed:
                    extra = "again at %.1f ms (not a reaction time)" % (off / 1000.0)
                else:
                    timed.add(pid)
                    extra = "%.1f ms" % (off / 1000.0)
            text = " ".join([extra] * bool(extra) + ["%s=%s" % (k, json.dumps(v, ensure_ascii=False))
                                                       for k, v in rest.items()])
        lines.append("  %10s  #%-4d %-14s %s%s" % (_fmt_t(rec.get("t", 0)), rec.get("seq", 0), typ, who, text))
    return lines


# --- exports -------------------------------------------------------------------------------------

def export_json(store: Store, names: dict[str, str] | None = None, unit: str | None = None,
                game: str | None = None) -> str:
    games, stats = collect(store, names, unit, game)
    doc = {"games": [dict(id=g.id, unit=g.unit, name=g.name, game=g.game, variant=g.variant, wall=g.wall,
                          status=g.status, reason=g.reason, damage=g.damage, sha256=g.sha256,
                          players=store.players(g.id), events=store.events(g.id)) for g in games],
           "players": [s.summary() for s in stats]}
    return json.dumps(doc, indent=1, ensure_ascii=False)


def export_csv(store: Store, what: str, names: dict[str, str] | None = None, unit: str | None = None,
               game: str | None = None) -> str:
    """what: games | players (statistics) | events | reactions."""
    games, stats = collect(store, names, unit, game)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if what == "games":
        w.writerow(["id", "unit", "name", "game", "variant", "wall", "records", "status", "reason", "damage",
                    "player", "name_of_player", "score", "winner"])
        for g in games:
            for p in store.players(g.id) or [{}]:
                w.writerow([g.id, g.unit, g.name, g.game, g.variant, g.wall, g.records, g.status, g.reason,
                            len(g.damage), p.get("player"), label(g.unit, p["player"], names or {}) if p else "",
                            p.get("score"), int(bool(p.get("winner")))])
    elif what == "players":
        keys = ["unit", "player", "name", "games", "wins", "false_starts", "presses", "late", "locked", "reactions",
                "median_ms", "p10_ms", "p90_ms"]
        w.writerow(keys)
        for s in stats:
            d = s.summary()
            w.writerow([d[k] for k in keys])
    elif what in ("events", "reactions"):
        w.writerow(["game_id", "unit", "log", "seq", "t_ms", "type", "player", "reaction_ms" if what == "reactions"
                    else "data"])
        for g in games:
            for rec in store.events(g.id):
                if what == "events":
                    w.writerow([g.id, g.unit, g.name, rec["seq"], rec["t"], rec["type"], rec.get("player", ""),
                                json.dumps(rec, ensure_ascii=False)])
                    continue
                for pid, off in reactions(rec):
                    w.writerow([g.id, g.unit, g.name, rec["seq"], rec["t"], rec["type"], pid,
                                "false_start" if off is None else off / 1000.0])
    else:
        raise ValueError("unknown export %r" % what)
    return buf.getvalue()


# --- the HTML report: self-contained, inline SVG ----------------------------------------------

def _esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def svg_histogram(values: list[float], lo: float, hi: float, bins: int = 20, w: int = 300, h: int = 90,
                  colour: str = "#1f77b4", marks: tuple[float | None, ...] = ()) -> str:
    """A small histogram of reaction times (ms) on a shared axis lo..hi, with p10/median/p90 marks."""
    counts = [0] * bins
    for v in values:
        i = int((min(max(v, lo), hi) - lo) / (hi - lo) * bins) if hi > lo else 0
        counts[min(i, bins - 1)] += 1
    top = max(counts) or 1
    pad_b, pad_l = 16, 4
    bw = (w - pad_l) / bins
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img">'
             % (w, h, w, h)]
    for i, c in enumerate(counts):
        bh = (h - pad_b - 4) * c / top
        parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%d-%d ms: %d</title>'
                     '</rect>' % (pad_l + i * bw + 1, h - pad_b - bh, bw - 2, bh, colour, lo + i * (hi - lo) / bins,
                                  lo + (i + 1) * (hi - lo) / bins, c))
    for m, dash in zip(marks, ("3,2", "", "3,2")):
        if m is not None and hi > lo:
            x = pad_l + (min(max(m, lo), hi) - lo) / (hi - lo) * (w - pad_l)
            parts.append('<line x1="%.1f" x2="%.1f" y1="2" y2="%d" stroke="#000" stroke-width="1.2"%s/>'
                         % (x, x, h - pad_b, ' stroke-dasharray="%s"' % dash if dash else ""))
    parts.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#888"/>' % (pad_l, w, h - pad_b, h - pad_b))
    secs = hi >= 10_000  # claims of many seconds: "12.5 s" reads better than "12500 ms"
    for frac in (0, 0.25, 0.5, 0.75, 1):
        x = pad_l + frac * (w - pad_l)
        anchor = "start" if frac == 0 else "end" if frac == 1 else "middle"
        v = lo + frac * (hi - lo)
        said = ("%.1f" % (v / 1000) if secs else "%d" % v) + ((" s" if secs else " ms") if frac in (0, 1) else "")
        parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="%s" fill="#444">%s</text>'
                     % (x, h - 3, anchor, said))
    parts.append("</svg>")
    return "".join(parts)


def ticks(lo: float, hi: float, most: int = 6) -> list[int]:
    """Axis marks from lo to hi (both inside): whole steps of 1, 2 or 5 x 10^k, at most `most` of them."""
    span = max(hi - lo, 1)
    step = 1
    while True:
        for s in (1, 2, 5):
            k = s * step
            first, last = math.floor(lo / k) * k, math.ceil(hi / k) * k
            if (last - first) // k + 1 <= most:
                return list(range(int(first), int(last) + 1, int(k)))
        step *= 10
        if step > span * 10:
            return [int(math.floor(lo)), int(math.ceil(hi))]


def svg_scores(series: list[tuple[str, str, list[int]]], w: int = 620, h: int = 240, x_label: str = "session",
               unit: str = "") -> str:
    """Scores over sessions: one line per player (label, colour, scores in game order)."""
    n = max((len(s[2]) for s in series), default=0)
    allv = [v for s in series for v in s[2]] or [0]
    marks = ticks(min(min(allv), 0), max(max(allv), 1))
    lo, hi = marks[0], marks[-1]
    pl, pr, pt, pb = 44, 130, 10, 28
    def X(i):
        return (pl + (w - pl - pr) * (i / max(n - 1, 1)))
    def Y(v):
        return (pt + (h - pt - pb) * (1 - (v - lo) / (hi - lo)))
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img">'
             % (w, h, w, h)]
    for v in marks:  # whole steps of 1, 2 or 5 x 10^k: labels at least a fifth of the height apart
        parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" '
                     'font-size="10" text-anchor="end" fill="#444">%d</text>'
                     % (pl, w - pr, Y(v), Y(v), pl - 4, Y(v) + 3, v))
    for i in range(n):
        parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle" fill="#444">%d</text>'
                     % (X(i), h - pb + 14, i + 1))
    parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle" fill="#444">%s</text>'
                 % ((pl + w - pr) / 2, h - 2, _esc(x_label)))
    for k, (name, colour, vals) in enumerate(series):
        pts = " ".join("%.1f,%.1f" % (X(i), Y(v)) for i, v in enumerate(vals))
        parts.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (pts, colour))
        for i, v in enumerate(vals):
            parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s %d: %d%s</title></circle>'
                         % (X(i), Y(v), colour, _esc(name), _esc(x_label), i + 1, v, unit))
        parts.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="11">'
                     '%s</text>' % (w - pr + 10, pt + 16 * k, colour, w - pr + 24, pt + 16 * k + 9, _esc(name)))
    parts.append("</svg>")
    return "".join(parts)


_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#d4a017", "#17becf", "#8c564b", "#e377c2", "#7f7f7f")

_CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child{text-align:left}.grid{display:flex;flex-wrap:wrap;gap:10px 24px}
.card{width:310px}.card b{display:block}.muted{color:#777}.warn{color:#b00}h3{font-size:15px;margin-top:20px}
table.games td,table.games th{text-align:left}"""


def _reaction_section(kind: str, kgames: list[Game], stats: list[PlayerStats], games: list[Game]) -> list[str]:
    """One kind of reaction time: each player's median, p10 and p90, histograms on an axis of their own, and
    each player's median per game over the session."""
    ids = {g.id for g in kgames}
    order = {g.id: n for n, g in enumerate(games)}
    mine = [(s, sorted(v for gid, vs in s.per_game_ms.items() if gid in ids for v in vs)) for s in stats]
    mine = [(s, rs) for s, rs in mine if rs]
    title = KIND_TITLES.get(kind, kind)
    lo, hi = axis([v for _s, rs in mine for v in rs])
    out = ["<h3>%s</h3><table><tr><th>Player</th><th>Reactions</th><th>Median ms</th><th>p10 ms</th>"
           "<th>p90 ms</th></tr>" % _esc(title)]
    for s, rs in mine:
        out.append("<tr><td>%s</td><td>%d</td>%s</tr>" % (_esc(s.name), len(rs), "".join(
            "<td>%.0f</td>" % (percentile(rs, p) or 0) for p in (50, 10, 90))))
    out.append('</table><p class="muted">%sTimes above %d ms are in the last bar.</p><div class=grid>'
               % ("Times below %d ms are in the first bar. " % lo if lo > 0 else "", hi))
    for i, (s, rs) in enumerate(mine):
        out.append('<div class=card><b>%s</b><span class=muted>%s, median %.0f ms</span>%s</div>'
                   % (_esc(s.name), plural(len(rs), "reaction"), percentile(rs, 50) or 0,
                      svg_histogram(rs, lo, hi, colour=_COLOURS[i % len(_COLOURS)],
                                    marks=(percentile(rs, 10), percentile(rs, 50), percentile(rs, 90)))))
    out.append("</div>")
    series = []
    for i, (s, _rs) in enumerate(mine):
        meds = [round(percentile(sorted(v), 50) or 0) for gid, v in
                sorted(s.per_game_ms.items(), key=lambda kv: order.get(kv[0], 0)) if gid in ids]
        series.append((s.name, _COLOURS[i % len(_COLOURS)], meds))
    out.append("<h3>Reaction times over the session: %s</h3><p class=\"muted\">Each player's median reaction "
               "time (ms) in each of these games they played, in the order the games were played: going down "
               "is getting quicker.</p>%s" % (_esc(title), svg_scores(series, x_label="game", unit=" ms")))
    return out


def html_report(store: Store, names: dict[str, str] | None = None, title: str = "Mausbox class report",
                unit: str | None = None, game: str | None = None) -> str:
    games, stats = collect(store, names, unit, game)
    out = ["<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style>"
           "</head><body><h1>%s</h1>" % (_esc(title), _CSS, _esc(title))]
    units = sorted({g.unit for g in games})
    out.append('<p class="muted">%s from %s; %s.</p>'
               % (plural(len(games), "game"), plural(len(units), "unit"), plural(len(stats), "player")))
    out += _summary_html(class_summary(store, names, unit, game))
    damaged = [g for g in games if g.damage]
    if damaged:
        out.append('<p class="warn">%d log(s) are damaged: %s</p>'
                   % (len(damaged), _esc(", ".join("%s/%s" % (g.unit, g.name) for g in damaged))))
    out.append("<h2>Players</h2><table><tr><th>Player</th><th>Games</th><th>Wins</th><th>False starts</th>"
               "<th>Presses</th><th>Late</th><th>Locked out</th><th>Reactions</th></tr>")
    for s in stats:
        d = s.summary()
        out.append("<tr><td>%s</td>%s</tr>" % (_esc(s.name), "".join(
            "<td>%s</td>" % ("–" if d[k] is None else d[k]) for k in
            ("games", "wins", "false_starts", "presses", "late", "locked", "reactions"))))
    out.append("</table>")
    kinds: dict[str, list[Game]] = {}
    for g in games:
        kinds.setdefault(reaction_kind(g.game, g.variant), []).append(g)
    shown_kinds = [(k, gs) for k, gs in sorted(kinds.items())
                   if any(gid in s.per_game_ms for s in stats for gid in (g.id for g in gs))]
    if shown_kinds:
        out.append("<h2>Reaction times</h2><p class=\"muted\">Per game (and per variant where a reaction means "
                   "something else): a race in Mausgeflippt and a claim in M is for Mouse are not compared. Each "
                   "bar counts presses; the solid line is the median, dashed lines p10 and p90.</p>")
    for kind, kgames in shown_kinds:
        out += _reaction_section(kind, kgames, stats, games)
    by_game: dict[str, list[PlayerStats]] = {}
    for s in stats:
        for _gid, gname, _v in s.scores:
            if s not in by_game.setdefault(gname, []):
                by_game[gname].append(s)
    for gname, players in sorted(by_game.items()):
        series = []
        for i, s in enumerate(players):
            series.append((s.name, _COLOURS[i % len(_COLOURS)], [v for _g, gn, v in s.scores if gn == gname]))
        out.append("<h2>Scores over sessions: %s</h2>%s" % (_esc(game_title(gname)), svg_scores(series)))
    out.append("<h2>Games</h2><table class=games><tr><th>Log</th><th>Game</th><th>When</th><th>Status</th><th>Winners</th></tr>")
    for g in games:
        seats = store.seats(g.id)
        winners = ", ".join(seats.get(p["player"]) or label(g.unit, p["player"], names or {})
                            for p in store.players(g.id) if p["winner"])
        start = store.start(g.id) or None
        out.append("<tr><td>%s/%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            _esc(unit_label(g.unit, store.unit_name(g.id))), _esc(g.name), _esc(game_title(g.game, g.variant)), _esc(when(g, start)),
            _esc(g.status + (" (damaged)" if g.damage else "")), _esc(winners or "–")))
    out.append("</table></body></html>\n")
    return "".join(out)
