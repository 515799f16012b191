"""Pull game logs from a unit over the host link, while it plays: one listing, one stream per log, resumable
and verified.

The unit lists its logs folder (`logs`: names and sizes of logs and pulled markers, docs/protocol.md) and
streams a log from any offset (`read`: data frames, each checked, then the sha256 of the whole file as the
unit read it). Verified bytes go to a partial file, so a broken transfer resumes from its length; the whole
file is checked against the unit's sha256, parsed with `maus.logread`, written to the destination as temp
file + rename, and only then marked pulled on the unit (`mark`, which the unit checks against the file).
Device-supplied names are checked before they become paths.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mausbox.link.bounds import LIST_TRIES, MAX_LOG_BYTES, MAX_SILENT, MAX_STALLS, backoff
from mausbox.link.unit import FrameGap, LinkError, LinkLost, UnitError

MAX_NAME = 64
PULLED = ".pulled"

_NAME_RE = re.compile(r"[0-9]{1,10}-[a-z0-9_][a-z0-9_-]{0,31}\.jsonl")
_UNIT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class PullError(Exception):
    """A log could not be pulled (after retries); the message says why."""


def check_name(name: object) -> str:
    """A device-supplied log name, returned if it is a plain `NNNNN-game.jsonl`; else ValueError saying why."""
    if not isinstance(name, str):
        raise ValueError("not a string: %r" % (name,))
    if len(name) > MAX_NAME:
        raise ValueError("name too long (%d characters): %r..." % (len(name), name[:MAX_NAME]))
    if not name:
        raise ValueError("empty name")
    if "/" in name or "\\" in name or ".." in name or name.startswith("."):
        raise ValueError("path escape in name: %r" % name)
    if not _NAME_RE.fullmatch(name):
        raise ValueError("odd characters or not a log name: %r" % name)
    return name


def check_unit_id(uid: object) -> str | None:
    if isinstance(uid, str) and _UNIT_RE.fullmatch(uid):
        return uid
    return None


@dataclass
class Entry:
    """One log of the unit's listing, after checking."""

    name: str
    size: int
    pulled: bool  # the unit holds a pulled marker for it (removed by any change to the log)


@dataclass
class Listing:
    unit: str | None
    entries: list[Entry] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why each refused line was refused
    strays: list[str] = field(default_factory=list)  # files in the unit's logs/ that are none of its logs
    stray_count: int = 0


def parse_listing(unit: object, rows: list[tuple[str, int]]) -> Listing:
    """The unit's (name, size) rows: logs paired with their markers; a bad row is refused, never trusted."""
    out = Listing(check_unit_id(unit))
    marked = {n[:-len(PULLED)] for n, _ in rows if isinstance(n, str) and n.endswith(PULLED)}
    seen = set()
    for name, size in rows:
        if isinstance(name, str) and name.endswith(PULLED):
            continue
        try:
            check_name(name)
        except ValueError as e:
            out.refused.append(str(e))
            continue
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_LOG_BYTES:
            out.refused.append("%s: absurd size %r" % (name, size))
            continue
        if name in seen:
            continue  # a directory listed while a log was being created may repeat an entry
        seen.add(name)
        out.entries.append(Entry(name, size, name in marked))
    out.entries.sort(key=lambda e: e.name)
    return out


@dataclass
class Outcome:
    name: str
    status: str  # pulled | skipped | refused | failed
    path: Path | None = None
    detail: str = ""
    retries: int = 0
    nbytes: int = 0
    damage: list[str] = field(default_factory=list)
    finished: bool = True


def verify_log(data: bytes) -> tuple[list[str], bool]:
    """Check a log with the firmware's pure reader: (damage reports, finished?)."""
    from maus import logread  # the one reader shared with the firmware and its tests

    res = logread.read(data, keep=False)
    return [repr(p) for p in res.damaged()], res.end is not None


class Puller:
    """Pulls the logs of one unit over `link` (a UnitLink) into `dest` (verified files only), `staging` for
    partial copies. `reconnect()` gives a new link after the port went away (or raises LinkLost)."""

    max_stalls = MAX_STALLS  # consecutive attempts without progress before a file is given up
    max_silent = MAX_SILENT  # of them, unanswered ones: then the unit counts as gone (the others are not tried)

    def __init__(self, link, dest: Path | None = None, staging: Path | None = None, *, mark: bool = True,
                 verify: Callable[[bytes], tuple[list[str], bool]] | None = None,
                 log: Callable[[str], None] = lambda s: None, reconnect: Callable[[], object] | None = None,
                 progress: Callable[[str, int, int], None] | None = None):
        self.link = link
        self.dest = Path(dest) if dest else Path(".")
        self.staging = Path(staging) if staging else self.dest / ".partial"
        self.mark = mark
        self.verify = verify or verify_log
        self.log = log
        self.reconnect = reconnect
        self.progress = progress  # (log name, bytes so far, size)
        self.listing: Listing | None = None
        self.gone = ""  # set when the unit cannot be reached again: the remaining logs are not tried

    def fetch_listing(self) -> Listing:
        info = self._retry(self.link.hello)
        rows = self._retry(self.link.listing)
        self.listing = parse_listing(info.get("unit"), rows)
        self.listing.strays = list(getattr(self.link, "strays", []) or [])
        self.listing.stray_count = int(getattr(self.link, "stray_count", 0) or 0)
        return self.listing

    def _retry(self, fn, tries: int = LIST_TRIES):
        """fn() again after a failure of the line, with a growing pause (bounds.py)."""
        for i in range(tries):
            try:
                return fn()
            except LinkLost as e:
                self.log("link: %s; reconnecting" % e)
                if i == tries - 1:
                    raise PullError("the unit stopped answering: %s" % e) from None
                self._reconnect()
            except LinkError as e:
                self.log("link: %s" % e)
                if i == tries - 1:
                    raise PullError("the unit stopped answering: %s" % e) from None
                time.sleep(backoff(i + 1))
        raise AssertionError

    def _reconnect(self) -> None:
        if self.reconnect is None:
            self.gone = "the port went away"
            raise PullError("lost the unit: the port went away")
        try:
            self.link = self.reconnect()
        except LinkError as e:
            self.gone = str(e)
            raise PullError("lost the unit: %s" % e) from None

    def pull_all(self, only_new: bool = True) -> list[Outcome]:
        listing = self.listing or self.fetch_listing()
        out = [Outcome(r, "refused", detail=r) for r in listing.refused]
        for name in listing.strays:  # the unit neither lists nor numbers them: left there, never pulled
            out.append(Outcome(name, "skipped", detail="not a log this unit wrote: left on the unit"))
        more = listing.stray_count - len(listing.strays)
        if more > 0:
            out.append(Outcome("(%d more)" % more, "skipped", detail="not logs this unit wrote: left on the unit"))
        newest = max((e.name for e in listing.entries), default=None)
        for e in listing.entries:
            if self.gone:
                out.append(Outcome(e.name, "failed", detail="not tried: %s" % self.gone))
                continue
            have = self.dest / e.name
            if only_new and e.pulled and have.exists() and have.stat().st_size == e.size:
                out.append(Outcome(e.name, "skipped", have, "already pulled"))
                continue
            out.append(self.pull(e, in_progress_ok=e.name == newest))
        return out

    def pull(self, e: Entry, in_progress_ok: bool = False) -> Outcome:
        part = self.staging / (e.name + ".part")
        final = self.dest / e.name
        oc = Outcome(e.name, "failed")
        for d in (self.staging, self.dest):
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                oc.detail = "cannot make the folder %s: %s" % (d, err.strerror or err)
                return oc
        try:
            data, sha = self._fetch(e, part, oc)
        except PullError as err:
            oc.detail = str(err)
            return oc
        oc.nbytes = len(data)
        try:
            oc.damage, oc.finished = self.verify(data)
        except Exception as err:  # a reader bug must not lose the copy: report it
            oc.damage, oc.finished = ["log reader failed: %r" % err], False
        try:
            final = self._place(e, final, data, sha, oc)
        except OSError as err:  # the destination is odd (a directory there, read-only, full): say so, keep the copy
            oc.detail = "verified, but cannot write %s: %s (the copy stays in %s)" % (
                final, err.strerror or err, part.parent)
            return oc
        part.unlink(missing_ok=True)
        oc.path, oc.status = final, "pulled"
        if not oc.finished and in_progress_ok:
            oc.detail = "unfinished (game may be running): copied, not marked pulled"
            return oc
        if self.mark and not e.pulled:
            try:
                res = self._retry(lambda: self.link.request("mark", name=e.name, sha256=sha))
                if not res.get("marked"):
                    oc.detail = "the unit refused the pulled mark (the log changed meanwhile)"
            except (UnitError, PullError) as err:
                oc.detail = "copied and verified, but marking it pulled failed: %s" % err
        return oc

    def _place(self, e: Entry, final: Path, data: bytes, sha: str, oc: Outcome) -> Path:
        """Write the verified log to the destination: a temp file made exclusively there (never a planted
        file or symlink followed), then renamed over the name (atomic). Returns the name used."""
        if final.is_symlink() or (final.exists() and not final.is_file()):
            raise IsADirectoryError(21, "something other than a file is in the way", str(final))
        if final.exists():
            old = final.read_bytes()
            if old != data and not data.startswith(old):
                # Another game under the same name (the unit's flash was wiped and numbering restarted):
                # never overwrite it; the new one gets a host-made name.
                final = self.dest / ("%s~%s.jsonl" % (e.name[:-6], sha[:12]))
                oc.detail = "another log already has this name here: kept as %s" % final.name
        if not final.exists() or final.read_bytes() != data:
            fd, tmp = tempfile.mkstemp(prefix=".%s." % final.name, suffix=".tmp", dir=self.dest)  # O_EXCL
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, final)
            except BaseException:
                os.unlink(tmp)
                raise
        return final

    def _fetch(self, e: Entry, part: Path, oc: Outcome) -> tuple[bytes, str]:
        """The log's bytes and their sha256, checked against the unit's; resumes from what `part` holds."""
        if part.is_symlink() or (part.exists() and not part.is_file()):
            raise PullError("%s is not a plain file: remove it" % part)
        if part.exists() and part.stat().st_size > max(e.size, 0):
            part.unlink()
        stalls = silent = 0
        restarts = 0
        prog = self.progress
        moved = (lambda n: prog(e.name, n, max(e.size, n))) if prog else None
        try:  # never through a symlink planted at the name meanwhile
            fd = os.open(part, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as err:
            raise PullError("cannot write the partial copy %s: %s" % (part, err.strerror or err)) from None
        with os.fdopen(fd, "a+b") as fh:
            while True:
                fh.seek(0, 2)
                have = fh.tell()
                before = have
                try:
                    size, sha = self.link.read(e.name, have, fh.write, moved, size=e.size)
                    fh.flush()
                    fh.seek(0)
                    data = fh.read()
                    if len(data) == size and hashlib.sha256(data).hexdigest() == sha:
                        return data, sha
                    # Every chunk passed its check, yet the whole differs: the file changed on the unit.
                    restarts += 1
                    if restarts > 1:
                        raise PullError("sha256 differs from the unit's (the file changed on the unit?)")
                    self.log("%s: the unit's digest differs from the copy; fetching it again" % e.name)
                    fh.truncate(0)
                    continue
                except FrameGap as err:
                    fh.flush()
                    self.log("%s; resuming" % err)
                except LinkLost as err:
                    fh.flush()
                    self.log("%s: %s; reconnecting" % (e.name, err))
                    self._reconnect()
                except UnitError as err:
                    fh.flush()
                    if err.error == "range":  # the file shrank under our copy (recovered after a power cut)
                        fh.truncate(0)
                        continue
                    raise PullError("the unit failed reading %s: %s" % (e.name, err.msg)) from None
                except LinkError as err:
                    fh.flush()
                    silent += 1
                    self.log("%s: %s; asking again" % (e.name, err))
                    time.sleep(backoff(silent))
                fh.seek(0, 2)
                if fh.tell() == before:
                    stalls += 1
                    oc.retries += 1
                    if silent >= self.max_silent:
                        self.gone = "the unit stopped answering"
                    if stalls >= self.max_stalls or silent >= self.max_silent:
                        raise PullError("no progress after %d attempts at offset %d" % (stalls, before))
                else:
                    oc.retries += 1
                    stalls = silent = 0


@dataclass
class UnitResult:
    port: str
    unit: str | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    error: str = ""
    unreachable: bool = False  # the port would not even open

    @property
    def ok(self) -> bool:
        return not self.error and all(o.status in ("pulled", "skipped") and not o.damage for o in self.outcomes)


def pull_unit(link, store, dest_root: Path | None = None, *, mark: bool = True,
              log: Callable[[str], None] = lambda s: None, port: str = "", reconnect=None,
              progress=None) -> UnitResult:
    """List, pull every new log, index each verified copy in `store` (a mausbox.store.Store)."""
    res = UnitResult(port or getattr(link, "port", ""))
    p = Puller(link, mark=mark, log=log, reconnect=reconnect, progress=progress)
    try:
        listing = p.fetch_listing()
    except (PullError, LinkError) as e:
        res.error = str(e)
        return res
    unit = res.unit = listing.unit or "unknown"
    p.dest = (Path(dest_root) if dest_root else store.dir / "raw") / unit
    p.staging = store.partial_dir(unit)
    try:
        res.outcomes = p.pull_all()
    except PullError as e:
        res.error = str(e)
        return res
    for o in res.outcomes:
        if o.status in ("pulled", "skipped") and o.path is not None:
            try:
                store.ingest(unit, o.path)  # a skipped one too: the store may have been rebuilt without it
            except OSError as err:
                o.detail = (o.detail + "; " if o.detail else "") + "not indexed: %s" % (err.strerror or err)
    return res
