"""The host's log store: one SQLite file (games, players, events) plus the raw logs, organised by unit id.

    <store dir>/logs.sqlite          the database (path chosen with --store)
    <store dir>/raw/<unit>/<name>    every pulled log, byte for byte as on the unit (unless --dest says elsewhere)
    <store dir>/partial/<unit>/      verified prefixes of interrupted pulls (resume from here)

The raw files are the truth; the database is a cache of the folders that hold them. `Store.open` checks it
(SQLite's `PRAGMA integrity_check`, its format, and each game's row against its file: the file's size, and a
digest of the game's event rows kept with it) and rebuilds it from the folders when it is missing or damaged
(a damaged file is kept aside as `logs.sqlite.damaged-<time>`); it also takes in every log a folder holds that
it does not index yet. `notes` says in one line each what it did. The folders are `<store dir>/raw` and every
`--dest` a pull used (listed in `logs.sqlite.folders`, next to the database, so they outlive it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mausbox.paths import data_home

SCHEMA_VERSION = 2  # 2: games.events_sha

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
    events_sha TEXT NOT NULL, -- sha256 of the game's event rows (Store.events checks it)
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


_LOG_FILE = re.compile(r"[0-9]{1,10}-[a-z0-9_][a-z0-9_-]{0,31}(~[0-9a-f]{12})?\.jsonl")
_UNIT_DIR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class StoreDamaged(Exception):
    pass


class StoreUnusable(Exception):
    """The store's path cannot be used as given (a folder, unreadable, read-only): nothing was changed."""


def _normal(path: str | Path) -> Path:
    """One spelling for one store: `s.sqlite`, `./s.sqlite` and its absolute path are the same store (the rows
    keep absolute paths of their files, so a relative spelling found none and re-read every folder)."""
    return Path(os.path.realpath(Path(path).expanduser()))


def _check_usable(p: Path) -> None:
    """StoreUnusable, saying why in one line, when `p` cannot be this store; only a file that is a damaged
    store is ever moved aside, never a folder or a file the user cannot read or write."""
    if p.is_dir():
        raise StoreUnusable("%s is a folder, not a store file: give a file name, such as %s" % (
            p, p / "logs.sqlite"))
    if p.exists():
        if not p.is_file():
            raise StoreUnusable("%s is not a plain file" % p)
        try:
            with open(p, "rb"):
                pass
        except OSError as e:
            raise StoreUnusable("cannot read %s: %s" % (p, e.strerror or e)) from None
        if not os.access(p, os.W_OK) or not os.access(p.parent, os.W_OK):
            raise StoreUnusable("%s is read-only (or its folder is): the store needs to write there" % p)
        return
    q = p.parent
    while not q.exists() and q != q.parent:
        q = q.parent
    if not q.is_dir():
        raise StoreUnusable("cannot make the store %s: %s is not a folder" % (p, q))
    if not os.access(q, os.W_OK | os.X_OK):
        raise StoreUnusable("cannot make the store %s: %s is read-only" % (p, q))


class Store:
    def __init__(self, path: str | Path | None = None):
        self.path = _normal(path) if path else default_path()
        self.dir = self.path.parent
        self.dir.mkdir(parents=True, exist_ok=True)
        self.notes: list[str] = []  # what opening or rebuilding did, one line each
        self.db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.executescript("BEGIN;\n" + _SCHEMA + "\nCOMMIT;")  # one transaction: one sync, not one a table
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        self.db.commit()
        self.lock = threading.RLock()  # pulls from several units share one store

    # --- the cache of the folders -----------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path | None = None, folders: list[Path] | None = None) -> Store:
        """The store, checked; rebuilt from the folders if it is missing or damaged, brought up to date with
        what they hold. `folders`: more destination folders to remember (a pull's --dest)."""
        p = _normal(path) if path else default_path()
        _check_usable(p)
        missing = not p.exists() or p.stat().st_size == 0
        why = ""
        if not missing:
            why = _damage(p)
            if why:
                aside = p.with_name("%s.damaged-%s" % (p.name, time.strftime("%Y%m%d-%H%M%S")))
                for ext in ("", "-wal", "-shm", "-journal"):
                    q = Path(str(p) + ext)
                    if q.exists():
                        os.replace(q, str(aside) + ext)
        st = cls(p)
        for f in folders or []:
            st.remember(f)
        if missing or why:
            n = st.rebuild()
            if missing and not n:
                return st  # a new store, and nothing to rebuild it from: nothing to say
            st.notes = ["store %s %s: rebuilt from %s: %d games" % (
                p, "was missing" if missing else "was damaged (%s), kept aside as %s" % (why, aside.name),
                ", ".join(str(f) for f in st.folders()) or "no folders", n)]
        else:
            st.sync()
        return st

    def _folders_file(self) -> Path:
        return Path(str(self.path) + ".folders")

    def folders(self) -> list[Path]:
        """The destination folders this store caches: raw/ beside it and every --dest a pull used."""
        out = [self.dir / "raw"]
        try:
            for line in self._folders_file().read_text(encoding="utf-8").splitlines():
                if line.strip() and Path(line) not in out:
                    out.append(Path(line))
        except (OSError, UnicodeDecodeError):
            pass
        return out

    def remember(self, folder: Path) -> None:
        folder = Path(folder).absolute()
        if folder in self.folders():
            return
        with open(self._folders_file(), "a", encoding="utf-8") as f:
            f.write("%s\n" % folder)

    def _files(self):
        """(unit, path) of every log file in the folders (<folder>/<unit>/<name>)."""
        for root in self.folders():
            try:
                units = sorted(root.iterdir())
            except OSError:
                continue
            for ud in units:
                if not _UNIT_DIR.fullmatch(ud.name) or ud.is_symlink() or not ud.is_dir():
                    continue
                for f in sorted(ud.iterdir()):
                    if _LOG_FILE.fullmatch(f.name) and f.is_file() and not f.is_symlink():
                        yield ud.name, f

    def rebuild(self) -> int:
        """Forget every row, index every log in the folders again; returns how many games."""
        with self.lock, self.db:
            self.db.execute("DELETE FROM events")
            self.db.execute("DELETE FROM players")
            self.db.execute("DELETE FROM games")
        n = 0
        for unit, f in self._files():
            try:
                self.ingest(unit, f)
                n += 1
            except OSError:
                pass
        return n

    def sync(self) -> None:
        """Rows checked against their files; logs the folders hold but the store lacks taken in."""
        gone, redone, added = 0, 0, 0
        known = {}
        for gid, unit, raw, size, records in self.db.execute(
                "SELECT id, unit, raw_path, size, records FROM games").fetchall():
            known[raw] = gid
            try:
                ok = Path(raw).stat().st_size == size
            except OSError:
                with self.lock, self.db:
                    self.db.execute("DELETE FROM games WHERE id=?", (gid,))
                gone += 1
                continue
            n = self.db.execute("SELECT count(*) FROM events WHERE game_id=?", (gid,)).fetchone()[0]
            if not ok or n != records:
                self._redo(gid, unit, Path(raw))
                redone += 1
        for unit, f in self._files():
            if str(f) not in known:
                try:
                    self.ingest(unit, f)
                    added += 1
                except OSError:
                    pass
        if gone or redone or added:
            self.notes.append("store %s: %s" % (self.path, ", ".join(x for x in (
                "%d new in the folders taken in" % added if added else "",
                "%d re-read from their changed files" % redone if redone else "",
                "%d whose file is gone dropped" % gone if gone else "") if x)))

    def _redo(self, gid: int, unit: str, raw: Path) -> None:
        with self.lock:
            with self.db:
                self.db.execute("DELETE FROM games WHERE id=?", (gid,))
            try:
                self.ingest(unit, raw)
            except OSError:
                pass

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
        from maus.log import check as logcheck

        if data is None:
            data = Path(raw_path).read_bytes()
        name = Path(raw_path).name
        sha = hashlib.sha256(data).hexdigest()
        row = self.db.execute("SELECT id, sha256 FROM games WHERE unit=? AND name=?", (unit, name)).fetchone()
        if row and row[1] == sha:
            return row[0], False
        res = logcheck.read(data)
        start: dict[str, Any] = res.start or {}
        end: dict[str, Any] = res.end or {}
        status = "unfinished"
        reason = None
        if end.get("type") == "game_end":
            status, reason = "finished", _text(end.get("why"))
        elif end.get("type") == "game_abort":
            status, reason = "aborted", _text(end.get("reason"))
        damage = [repr(p) for p in res.damaged()]
        rows = [(r["seq"], r["t"], r["type"], r.get("player") if isinstance(r.get("player"), int) else None,
                 json.dumps(r, sort_keys=True)) for r in res.records]
        first: dict[int, tuple] = {}
        for r in rows:
            first.setdefault(r[0], r)  # one row per seq, the first, as the table keeps them
        rows = list(first.values())
        with self.db:
            if row:
                self.db.execute("DELETE FROM games WHERE id=?", (row[0],))
            cur = self.db.execute(
                "INSERT INTO games (unit, name, sha256, size, game, variant, board, fw, wall, records, status, reason,"
                " damage, raw_path, events_sha) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (unit, name, sha, len(data), _text(start.get("game")), _text(start.get("variant")),
                 _text(start.get("board")), _text(start.get("fw")), _text(start.get("wall")), len(rows),
                 status, reason, json.dumps(damage), str(raw_path), _rows_sha(r[4] for r in sorted(rows))))
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
            self.db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?)", [(gid, *r) for r in rows])
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
        """The game's records; rows that no longer match their digest are read again from the log file."""
        q = "SELECT data FROM events WHERE game_id=? ORDER BY seq"
        data = [r[0] for r in self.db.execute(q, (game_id,))]
        row = self.db.execute("SELECT events_sha, unit, raw_path FROM games WHERE id=?", (game_id,)).fetchone()
        if row and _rows_sha(data) != row[0]:
            self.notes.append("store %s: the rows of game %d were damaged: read again from %s" % (
                self.path, game_id, row[2]))
            self._redo(game_id, row[1], Path(row[2]))
            got = self.db.execute("SELECT id FROM games WHERE raw_path=?", (row[2],)).fetchone()
            data = [r[0] for r in self.db.execute(q, (got[0],))] if got else []
        out = []
        for d in data:
            try:
                out.append(json.loads(d))
            except ValueError:
                pass
        return out

    def start(self, game_id: int) -> dict[str, Any]:
        """The game's game_start record ({} if it has none): its unit's name and seats (docs/log-format.md)."""
        row = self.db.execute("SELECT data FROM events WHERE game_id=? AND seq=0", (game_id,)).fetchone()
        try:
            rec = json.loads(row[0]) if row else {}
        except ValueError:
            rec = {}
        return rec if isinstance(rec, dict) and rec.get("type") == "game_start" else {}

    def unit_name(self, game_id: int) -> str | None:
        """The name the game's unit had when the game started (`mausbox name set`), or None."""
        n = self.start(game_id).get("name")
        return n if isinstance(n, str) and n else None

    def seats(self, game_id: int) -> dict[int, str]:
        """Who sat at which button in this game (seat -> child's name), as the game's start recorded it."""
        s = self.start(game_id).get("seats")
        out: dict[int, str] = {}
        if isinstance(s, dict):
            for k, v in s.items():
                if isinstance(k, str) and k.isdigit() and 1 <= int(k) <= 6 and isinstance(v, str) and v.strip():
                    out[int(k)] = v.strip()
        return out

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


def _rows_sha(rows) -> str:
    h = hashlib.sha256()
    for r in rows:
        h.update(r.encode("utf-8", "surrogatepass") if isinstance(r, str) else bytes(r))
        h.update(b"\n")
    return h.hexdigest()


def _damage(p: Path) -> str:
    """Why the database file at p cannot be trusted, or "" if it can."""
    try:
        db = sqlite3.connect("file:%s?mode=ro" % p, uri=True, timeout=30)
        try:
            res = db.execute("PRAGMA integrity_check").fetchall()
            if res != [("ok",)]:
                return "integrity check: %s" % "; ".join(str(r[0]) for r in res[:2])
            v = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if not v or v[0] != str(SCHEMA_VERSION):
                return "format %s, this mausbox uses %d" % (v[0] if v else "unknown", SCHEMA_VERSION)
            cols = {r[1] for r in db.execute("PRAGMA table_info(games)")}
            if "events_sha" not in cols:
                return "tables missing"
        finally:
            db.close()
    except sqlite3.OperationalError as e:  # locked, cannot open: not damage; the file is left alone
        if "malformed" in str(e) or "not a database" in str(e):
            return str(e)
        raise StoreUnusable("cannot open the store %s: %s" % (p, e)) from None
    except sqlite3.Error as e:
        return str(e)
    return ""
