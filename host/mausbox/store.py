"""The host's log store: one SQLite file (games, players, events) plus the raw logs, organised by unit id.

    <store dir>/logs.sqlite          the database (path chosen with --store)
    <store dir>/raw/<unit>/<name>    every pulled log, byte for byte as on the unit (unless --dest says elsewhere)
    <store dir>/partial/<unit>/      verified prefixes of interrupted pulls (resume from here)

The raw files are the truth; the database is an index that can be rebuilt from them (`Store.ingest`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mausbox.paths import data_home

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    unit TEXT NOT NULL,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    game TEXT, variant TEXT, board TEXT, fw TEXT,
    wall TEXT,                -- the unit's clock at game start, if it was set
    records INTEGER NOT NULL,
    status TEXT NOT NULL,     -- finished | aborted | unfinished
    reason TEXT,              -- why it ended (game_end "why", game_abort "reason")
    damage TEXT NOT NULL,     -- JSON list of the reader's damage reports (empty: clean)
    raw_path TEXT NOT NULL,
    pulled_at TEXT NOT NULL DEFAULT (datetime('now')),
    UNIQUE (unit, name)
);
CREATE TABLE IF NOT EXISTS players (
    game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    player INTEGER NOT NULL,  -- 1..6, the button / seat on that unit
    colour TEXT, young INTEGER NOT NULL DEFAULT 0,
    score INTEGER,            -- NULL when the game did not finish
    winner INTEGER NOT NULL DEFAULT 0,
    breakdown TEXT,           -- JSON, the game_end breakdown for this player
    PRIMARY KEY (game_id, player)
);
CREATE TABLE IF NOT EXISTS events (
    game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    t INTEGER NOT NULL,       -- ms since game start
    type TEXT NOT NULL,
    player INTEGER,           -- the record's "player" field, if any
    data TEXT NOT NULL,       -- the whole record as JSON
    PRIMARY KEY (game_id, seq)
);
CREATE INDEX IF NOT EXISTS events_type ON events (type);
"""


def default_path() -> Path:
    return data_home() / "logs.sqlite"


@dataclass
class Game:
    id: int
    unit: str
    name: str
    game: str | None
    variant: str | None
    wall: str | None
    records: int
    status: str
    reason: str | None
    damage: list[str]
    raw_path: str
    sha256: str
    board: str | None = None
    fw: str | None = None


class Store:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_path()
        self.dir = self.path.parent
        self.dir.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.executescript(_SCHEMA)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        self.db.commit()
        self.lock = threading.RLock()  # pulls from several units share one store

    def close(self) -> None:
        self.db.close()

    def raw_dir(self, unit: str) -> Path:
        return self.dir / "raw" / unit

    def partial_dir(self, unit: str) -> Path:
        return self.dir / "partial" / unit

    def ingest(self, unit: str, raw_path: Path, data: bytes | None = None) -> tuple[int, bool]:
        """Index one verified log file; returns (game id, new?). The same bytes again change nothing."""
        with self.lock:
            return self._ingest(unit, raw_path, data)

    def _ingest(self, unit: str, raw_path: Path, data: bytes | None) -> tuple[int, bool]:
        from maus import logread

        if data is None:
            data = Path(raw_path).read_bytes()
        name = Path(raw_path).name
        sha = hashlib.sha256(data).hexdigest()
        row = self.db.execute("SELECT id, sha256 FROM games WHERE unit=? AND name=?", (unit, name)).fetchone()
        if row and row[1] == sha:
            return row[0], False
        res = logread.read(data)
        start: dict[str, Any] = res.start or {}
        end: dict[str, Any] = res.end or {}
        status = "unfinished"
        reason = None
        if end.get("type") == "game_end":
            status, reason = "finished", _text(end.get("why"))
        elif end.get("type") == "game_abort":
            status, reason = "aborted", _text(end.get("reason"))
        damage = [repr(p) for p in res.damaged()]
        with self.db:
            if row:
                self.db.execute("DELETE FROM games WHERE id=?", (row[0],))
            cur = self.db.execute(
                "INSERT INTO games (unit, name, sha256, size, game, variant, board, fw, wall, records, status, reason,"
                " damage, raw_path) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (unit, name, sha, len(data), _text(start.get("game")), _text(start.get("variant")),
                 _text(start.get("board")), _text(start.get("fw")), _text(start.get("wall")), len(res.records),
                 status, reason, json.dumps(damage), str(raw_path)))
            gid = cur.lastrowid
            assert gid is not None
            scores: dict[str, Any] = _typed(end.get("scores"), dict)
            winners: list[Any] = _typed(end.get("winners"), list)
            breakdown: dict[str, Any] = _typed(end.get("breakdown"), dict)
            seen = set()
            for p in start.get("players") or []:
                if not isinstance(p, dict) or not isinstance(p.get("id"), int) or p["id"] in seen:
                    continue
                pid = p["id"]
                seen.add(pid)
                score = scores.get(str(pid))
                self.db.execute("INSERT INTO players VALUES (?,?,?,?,?,?,?)",
                                (gid, pid, _text(p.get("colour")), int(bool(p.get("young"))),
                                 score if isinstance(score, int) else None, int(pid in winners),
                                 json.dumps(breakdown.get(str(pid))) if str(pid) in breakdown else None))
            self.db.executemany("INSERT OR IGNORE INTO events VALUES (?,?,?,?,?,?)", [
                (gid, r["seq"], r["t"], r["type"], r.get("player") if isinstance(r.get("player"), int) else None,
                 json.dumps(r, sort_keys=True)) for r in res.records])
        return gid, True

    def games(self, unit: str | None = None, game: str | None = None) -> list[Game]:
        q = ("SELECT id, unit, name, game, variant, wall, records, status, reason, damage, raw_path, sha256, board, fw"
             " FROM games")
        cond, args = [], []
        if unit:
            cond.append("unit=?")
            args.append(unit)
        if game:
            cond.append("game=?")
            args.append(game)
        if cond:
            q += " WHERE " + " AND ".join(cond)
        q += " ORDER BY wall IS NULL, wall, unit, name"
        return [Game(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], json.loads(r[9]), r[10], r[11], r[12],
                     r[13]) for r in self.db.execute(q, args)]

    def find(self, ref: str) -> Game:
        """A game by id (`12`), by log name (`00003-mg.jsonl`, `00003`) or `unit/name`; KeyError if not one."""
        games = self.games()
        hits = [g for g in games if ref in (str(g.id), g.name, g.name.split("-")[0], "%s/%s" % (g.unit, g.name))]
        if len(hits) != 1:
            raise KeyError("no game %r" % ref if not hits else "%r is ambiguous: %s" % (
                ref, ", ".join("%s/%s" % (g.unit, g.name) for g in hits)))
        return hits[0]

    def events(self, game_id: int) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.db.execute("SELECT data FROM events WHERE game_id=? ORDER BY seq",
                                                          (game_id,))]

    def players(self, game_id: int) -> list[dict[str, Any]]:
        cur = self.db.execute("SELECT player, colour, young, score, winner, breakdown FROM players WHERE game_id=?"
                              " ORDER BY player", (game_id,))
        return [{"player": r[0], "colour": r[1], "young": bool(r[2]), "score": r[3], "winner": bool(r[4]),
                 "breakdown": json.loads(r[5]) if r[5] else None} for r in cur]


def _typed(v: Any, kind: type) -> Any:
    return v if isinstance(v, kind) else kind()


def _text(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v)
