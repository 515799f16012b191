"""Pull game logs from a unit over the host link, while it plays: one listing, one stream per log, resumable
and verified.

The unit lists its logs folder (`logs`: names and sizes of logs and pulled markers, docs/protocol.md) and
streams a log from any offset (`read`: data frames, each checked, then the sha256 of the whole file as the
unit read it). Verified bytes go to a partial file, so a broken transfer resumes from its length; the whole
file is checked against the unit's sha256, parsed with `maus.log.read`, written to the destination as temp
file + rename, and only then marked pulled on the unit (`mark`, which the unit checks against the file).
Device-supplied names are checked before they become paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mausbox.link.bounds import (
    GAME_POLL,
    LIST_TRIES,
    LIST_TRIES_ALIVE,
    MAX_FAILED_RUN,
    MAX_SILENT,
    MAX_STALLS,
    backoff,
)
from mausbox.link.errors import FrameGap, LinkError, LinkLost, NoService, UnitError
from mausbox.pulldest import (
    NOFOLLOW,
    Entry,
    Listing,
    Outcome,
    PlantedLink,
    kind_at,
    name_folder,
    open_folder,
    parse_listing,
    read_at,
    unlink_at,
    verify_log,
)

BRINGUP = "bringup.json"  # the bring-up check's summary on the unit (firmware/maus/checks/bringup.py FILE)
MAX_BRINGUP = 64 * 1024  # bytes: a summary of a dozen parts is ~2 KB

class PullError(Exception):
    """A log could not be pulled (after retries); the message says why."""


class LinePullError(PullError):
    """A log not fetched because the line kept failing (worth another pass while the unit answers)."""


class Puller:
    """Pulls the logs of one unit over `link` (a UnitLink) into `dest` (verified files only), `staging` for
    partial copies. `reconnect()` gives a new link after the port went away (or raises LinkLost)."""

    max_stalls = MAX_STALLS  # consecutive attempts without progress before a file is given up (for this pass)
    max_silent = MAX_SILENT  # attempts in a row to which the unit sent no byte at all: then it counts as gone
    max_failed_run = MAX_FAILED_RUN  # logs in a row given up while the unit talks: then it counts as gone too

    def __init__(self, link, dest: Path | None = None, staging: Path | None = None, *, mark: bool = True,
                 verify: Callable[[bytes], tuple[list[str], bool]] | None = None,
                 log: Callable[[str], None] = lambda s: None, reconnect: Callable[[], object] | None = None,
                 progress: Callable[[str, int, int], None] | None = None, dest_base: Path | None = None,
                 staging_base: Path | None = None, notice: Callable[[str], None] | None = None):
        self.link = link
        _resending(link)
        self.silent = 0  # attempts in a row that brought no byte at all from the unit
        self.heard_at = time.monotonic()  # when an attempt last brought something
        self.failed_run = 0  # logs in a row given up
        self.dest = Path(dest) if dest else Path(".")
        self.staging = Path(staging) if staging else self.dest / ".partial"
        self.dest_base = Path(dest_base) if dest_base else self.dest  # followed as given; below: never a link
        self.staging_base = Path(staging_base) if staging_base else self.staging
        self._dfd = self._sfd = -1
        self.mark = mark
        self.verify = verify or verify_log
        self.log = log
        self.reconnect = reconnect
        self.progress = progress  # (log name, bytes so far, size)
        self.notice = notice or log  # what the user is told whatever the verbosity (a wait for a game's end)
        self.listing: Listing | None = None
        self.on_done: Callable[[Outcome], None] | None = None  # each log's outcome as it is known (pull_unit)
        self.gone = ""  # set when the unit cannot be reached again: the remaining logs are not tried
        self.bringup: Outcome | None = None  # the bring-up summary, when the unit has one (pull_bringup)

    def fetch_listing(self) -> Listing:
        info = self._retry(self.link.hello)
        rows = self._retry(self.link.listing)
        self.listing = parse_listing(info.get("unit"), rows)
        self.listing.strays = list(getattr(self.link, "strays", []) or [])
        self.listing.stray_count = int(getattr(self.link, "stray_count", 0) or 0)
        return self.listing

    def _retry(self, fn, tries: int = LIST_TRIES, alive_tries: int = LIST_TRIES_ALIVE):
        """fn() again after a failure of the line, with a growing pause (bounds.py): up to `tries` attempts to
        which the unit sent nothing, `alive_tries` in all while it sends something (it is there, the line
        damages its answers, or it is starting again after a reset)."""
        waited = False
        i = 0
        while i < alive_tries:
            before = self._heard()
            try:
                return fn()
            except UnitError as e:
                if e.error != "game":
                    raise
                # The unit is in a game and serves no pull meanwhile (docs/protocol.md, "In a game"): wait for
                # its end, as long as it lasts; the user sees why and may stop with Ctrl-C.
                if not waited:
                    self.notice("a game is in progress: waiting for its end to pull (Ctrl-C stops)")
                    waited = True
                time.sleep(GAME_POLL)
                continue
            except LinkLost as e:
                self.log("link: %s; reconnecting" % e)
                if i == alive_tries - 1:
                    raise PullError("the unit stopped answering: %s" % e) from None
                self._reconnect()
                i += 1
                continue
            except LinkError as e:
                self.log("link: %s" % e)
                self._note_silence(before)
                if (self.silent >= tries and self._silent_long()) or i == alive_tries - 1:
                    raise PullError("the unit stopped answering: %s" % e) from None
                if isinstance(e, NoService) and getattr(self.link, "info", None) is not None:
                    self.link.info = None  # its app stopped (a crash): the next hello starts the service again
                time.sleep(backoff(i + 1))
            i += 1
        raise AssertionError

    def _ask(self, op: str, **args) -> dict:
        """A request, after `hello` (which starts the service again when the app stopped meanwhile)."""
        self.link.hello()
        return self.link.request(op, **args)

    def _note_silence(self, heard: tuple[int, int]) -> None:
        """After an attempt that failed: did the unit send anything during it?"""
        if self._heard() != heard:
            self.silent, self.heard_at = 0, time.monotonic()
        else:
            self.silent += 1

    def _silent_long(self) -> bool:
        """The unit counts as gone: MAX_SILENT attempts in a row brought no byte at all, over at least as many
        timeouts (a kilobyte dropped on the line can swallow several short answers whole)."""
        quiet = time.monotonic() - self.heard_at
        return self.silent >= self.max_silent and quiet >= self.max_silent * float(getattr(self.link, "timeout", 0))

    def _heard(self) -> tuple[int, int]:
        """What the unit has sent so far: (the link, its bytes in). Differs after an attempt it answered in any
        way (a reconnect counts as an answer)."""
        return id(self.link), int(getattr(self.link, "bytes_in", 0) or 0)

    def _reconnect(self) -> None:
        if self.reconnect is None:
            self.gone = "the port went away"
            raise PullError("lost the unit: the port went away")
        try:
            self.link = self.reconnect()
            _resending(self.link)
        except LinkError as e:
            self.gone = str(e)
            raise PullError("lost the unit: %s" % e) from None

    def _folders(self) -> tuple[int, int]:
        """(destination, staging) folders open as descriptors, made if missing: every component below the
        bases the user chose (`dest_base`, `staging_base`) opened without following a link (PlantedLink)."""
        fds = []
        try:
            for base, d in ((self.dest_base, self.dest), (self.staging_base, self.staging)):
                fds.append(open_folder(base, d))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return fds[0], fds[1]

    def pull_all(self, only_new: bool = True) -> list[Outcome]:
        listing = self.listing or self.fetch_listing()
        out = [Outcome(r, "refused", detail=r) for r in listing.refused]
        for name in listing.strays:  # the unit neither lists nor numbers them: left there, never pulled
            out.append(Outcome(name, "skipped", detail="not a log this unit wrote: left on the unit"))
        more = listing.stray_count - len(listing.strays)
        if more > 0:
            out.append(Outcome("(%d more)" % more, "skipped", detail="not logs this unit wrote: left on the unit"))
        if not listing.entries and self._bringup_size() is None:
            return out
        try:
            self._dfd, self._sfd = self._folders()
        except PlantedLink as err:
            raise PullError(str(err)) from None
        except OSError as err:
            return out + [Outcome(e.name, "failed", detail="cannot make the folder %s: %s" % (
                getattr(err, "filename", None) or self.dest, err.strerror or err)) for e in listing.entries]
        try:
            newest = max((e.name for e in listing.entries), default=None)
            first: list[Outcome] = []
            for e in listing.entries:
                first.append(self._one(e, only_new, e.name == newest))
                if self.on_done is not None:
                    self.on_done(first[-1])
            # A second pass for the logs given up on the line (the unit still answers): a long stretch of
            # damage, or the unit starting again after a reset, should not cost them.
            by_name = {e.name: e for e in listing.entries}
            for i, oc in enumerate(first):
                if oc.status == "failed" and oc.line and not self.gone:
                    self.failed_run = 0
                    again = self._one(by_name[oc.name], only_new, oc.name == newest)
                    again.retries += oc.retries
                    first[i] = again
                    if self.on_done is not None:
                        self.on_done(again)
            out += first
            if self._bringup_size() is not None and not self.gone:
                self.bringup = self.pull_bringup()
        finally:
            os.close(self._dfd)
            os.close(self._sfd)
        return out

    def _bringup_size(self) -> int | None:
        """The size of the unit's bring-up summary (maus.checks.bringup) as its listing gave it, or None: it has none."""
        size = (getattr(self.link, "listed", None) or {}).get("bringup")
        if isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= MAX_BRINGUP:
            return size
        return None

    def pull_bringup(self) -> Outcome:
        """The bring-up check's one-screen summary, beside the unit's logs as bringup.json: read as a log is
        (each chunk checked, the whole against the unit's sha256, resumed and asked again on a bad line), and
        it must be a JSON object. A newer one replaces the copy here; it is never marked on the unit."""
        size = self._bringup_size() or 0
        oc = Outcome(BRINGUP, "failed")
        why = "no answer"
        for attempt in range(self.max_stalls):
            buf = bytearray()
            heard = self._heard()
            try:
                got, sha = self.link.read(BRINGUP, 0, buf.extend, size=size)
            except UnitError as err:
                oc.detail = "the unit failed reading it: %s" % err.msg
                return oc
            except LinkLost as err:
                why = str(err)
                try:
                    self._reconnect()
                except PullError as gone:
                    oc.detail = str(gone)
                    return oc
                continue
            except LinkError as err:  # FrameGap too: the summary is small, it is read again whole
                why = str(err)
                if isinstance(err, NoService):
                    self.link.info = None
                self._note_silence(heard)
                time.sleep(backoff(attempt + 1))
                continue
            data = bytes(buf)
            if len(data) == got and hashlib.sha256(data).hexdigest() == sha:
                break
            why = "sha256 differs from the unit's"
        else:
            oc.detail = "the bring-up summary was not fetched: %s" % why
            return oc
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            oc.detail = "the unit's bringup.json is not a bring-up summary: not kept"
            return oc
        oc.nbytes = len(data)
        try:
            oc.path = self._place(Entry(BRINGUP, len(data), False), self.dest / BRINGUP, data, sha, oc, replace=True)
        except OSError as err:  # PlantedLink too
            oc.detail = "verified, but cannot write %s: %s" % (self.dest / BRINGUP, err.strerror or err)
            return oc
        oc.status = "pulled"
        oc.detail = "passed" if doc.get("passed") else "%d part(s) failed" % sum(
            1 for p in doc.get("parts") or [] if isinstance(p, dict) and p.get("result") == "FAIL")
        return oc

    def _one(self, e: Entry, only_new: bool, newest: bool) -> Outcome:
        """One log of the listing: skipped when pulled already (and its copy here is sound), else pulled."""
        if self.gone:
            return Outcome(e.name, "failed", detail="not tried: %s" % self.gone)
        refetch = False
        if only_new and e.pulled:
            old = read_at(self._dfd, e.name)
            if old is not None and len(old) == e.size:
                if not self._damaged(old):
                    return Outcome(e.name, "skipped", self.dest / e.name, "already pulled")
                refetch = True  # the copy here fails its check: the unit's may not
        oc = self.pull(e, in_progress_ok=newest, refetch=refetch)
        if oc.status == "failed" and oc.line:
            self.failed_run += 1
            if self.failed_run >= self.max_failed_run and not self.gone:
                self.gone = "the unit answers, but not what is asked (%d logs in a row failed)" % self.failed_run
        elif oc.status == "pulled":
            self.failed_run = 0
        return oc

    def _damaged(self, data: bytes) -> bool:
        try:
            return bool(self.verify(data)[0])
        except Exception:  # noqa: BLE001 - a reader bug: treat the copy as suspect, fetch it again
            return True

    def pull(self, e: Entry, in_progress_ok: bool = False, refetch: bool = False) -> Outcome:
        """One log into the open folders (pull_all opens them)."""
        final = self.dest / e.name
        part = self.staging / (e.name + ".part")
        oc = Outcome(e.name, "failed")
        try:
            data, sha = self._fetch(e, part, oc)
        except LinePullError as err:
            oc.detail, oc.line = str(err), True
            return oc
        except PullError as err:
            oc.detail = str(err)
            return oc
        oc.nbytes = len(data)
        try:
            oc.damage, oc.finished = self.verify(data)
        except Exception as err:  # a reader bug must not lose the copy: report it
            oc.damage, oc.finished = ["log reader failed: %r" % err], False
        if refetch:
            old = read_at(self._dfd, e.name)
            if old == data:  # the unit's copy is the same: damaged there, nothing better to be had
                oc.status, oc.path = "pulled", final
                oc.detail = "the copy here fails its check, and so does the unit's"
                unlink_at(self._sfd, part.name)
                return oc
        try:
            final = self._place(e, final, data, sha, oc, replace=refetch)
        except PlantedLink as err:
            oc.detail = str(err)
            return oc
        except OSError as err:  # the destination is odd (a directory there, read-only, full): say so, keep the copy
            oc.detail = "verified, but cannot write %s: %s (the copy stays in %s)" % (
                final, err.strerror or err, part.parent)
            return oc
        unlink_at(self._sfd, part.name)
        oc.path, oc.status = final, "pulled"
        if refetch:
            oc.detail = "the copy here failed its check: fetched again from the unit"
        if not oc.finished and in_progress_ok:
            oc.detail = "unfinished (game may be running): copied, not marked pulled"
            return oc
        if self.mark and not e.pulled:
            try:
                res = self._retry(lambda: self._ask("mark", name=e.name, sha256=sha))
                if not res.get("marked"):
                    oc.marked = False
                    oc.detail = "the unit refused the pulled mark (the log changed meanwhile)"
            except (UnitError, PullError) as err:
                oc.marked = False
                oc.detail = "copied and verified, but marking it pulled failed: %s" % err
        return oc

    def _place(self, e: Entry, final: Path, data: bytes, sha: str, oc: Outcome, replace: bool = False) -> Path:
        """Write the verified log to the destination: a temp file made exclusively there (never a planted
        file or symlink followed), then renamed over the name (atomic). Returns the name used."""
        dfd = self._dfd
        name = final.name
        kind = kind_at(dfd, name)
        if kind == "link":
            raise PlantedLink("%s is a symbolic link: refused (nothing is written through a link)" % final)
        if kind not in (None, "file"):
            raise IsADirectoryError(21, "something other than a file is in the way", str(final))
        if kind == "file" and not replace:
            old = read_at(dfd, name) or b""
            if old != data and not data.startswith(old):
                # Another game under the same name (the unit's flash was wiped and numbering restarted):
                # never overwrite it; the new one gets a host-made name.
                name = "%s~%s.jsonl" % (e.name[:-6], sha[:12])
                final = self.dest / name
                oc.detail = "another log already has this name here: kept as %s" % name
                kind = kind_at(dfd, name)
                if kind == "link":
                    raise PlantedLink("%s is a symbolic link: refused (nothing is written through a link)" % final)
        if kind is None or read_at(dfd, name) != data:
            tmp = ".%s.%s.tmp" % (name, os.urandom(6).hex())
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644, dir_fd=dfd)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                if kind_at(dfd, name) == "link":  # planted meanwhile
                    raise PlantedLink("%s is a symbolic link: refused (nothing is written through a link)" % final)
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                unlink_at(dfd, tmp)
                raise
        return final

    def _fetch(self, e: Entry, part: Path, oc: Outcome) -> tuple[bytes, str]:
        """The log's bytes and their sha256, checked against the unit's; resumes from what `part` holds."""
        sfd = self._sfd
        kind = kind_at(sfd, part.name)
        if kind == "link":
            raise PullError("%s is a symbolic link: refused (nothing is written through a link)" % part)
        if kind not in (None, "file"):
            raise PullError("%s is not a plain file: remove it" % part)
        if kind == "file" and os.stat(part.name, dir_fd=sfd).st_size > max(e.size, 0):
            os.unlink(part.name, dir_fd=sfd)
        stalls = fails = 0
        restarts = 0
        prog = self.progress
        moved = (lambda n: prog(e.name, n, max(e.size, n))) if prog else None
        try:  # never through a symlink planted at the name meanwhile
            fd = os.open(part.name, os.O_RDWR | os.O_CREAT | os.O_APPEND | NOFOLLOW, 0o600, dir_fd=sfd)
        except OSError as err:
            raise PullError("cannot write the partial copy %s: %s" % (part, err.strerror or err)) from None
        with os.fdopen(fd, "a+b") as fh:
            while True:
                fh.seek(0, 2)
                have = fh.tell()
                before = have
                heard = self._heard()
                try:
                    size, sha = self.link.read(e.name, have, fh.write, moved, size=e.size)
                    fh.flush()
                    fh.seek(0)
                    data = fh.read()
                    if len(data) == size and hashlib.sha256(data).hexdigest() == sha:
                        self.silent, self.heard_at = 0, time.monotonic()
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
                    fails += 1
                    if isinstance(err, NoService):  # the service stopped (a Ctrl-C made by a damaged byte):
                        self.link.info = None  # the next hello starts it again from the REPL
                    self.log("%s: %s; asking again" % (e.name, err))
                    time.sleep(backoff(fails))
                # The unit is there while it sends anything at all; silent attempts in a row across logs
                # mean it is gone (unplugged, off, hung), and the logs left are not tried.
                self._note_silence(heard)
                fh.seek(0, 2)
                if fh.tell() == before:
                    stalls += 1
                    oc.retries += 1
                    if self._silent_long():
                        self.gone = "the unit stopped answering"
                    if stalls >= self.max_stalls or self.gone:
                        raise LinePullError("no progress after %d attempts at offset %d" % (stalls, before))
                else:
                    oc.retries += 1
                    stalls = fails = 0


@dataclass
class UnitResult:
    port: str
    unit: str | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    error: str = ""
    unreachable: bool = False  # the port would not even open
    bringup: Outcome | None = None  # the bring-up summary, when the unit has one (saved beside its logs)
    name: str | None = None  # the unit's name (`mausbox name set`), as its hello said

    @property
    def ok(self) -> bool:
        return not self.error and all(o.status in ("pulled", "skipped") and not o.damage and o.marked
                                      for o in self.outcomes) and (self.bringup is None or
                                                                   self.bringup.status == "pulled")


def pull_unit(link, store, dest_root: Path | None = None, *, mark: bool = True,
              log: Callable[[str], None] = lambda s: None, port: str = "", reconnect=None,
              progress=None, notice: Callable[[str], None] | None = None) -> UnitResult:
    """List, pull every new log, index each verified copy in `store` (a mausbox.store.Store)."""
    res = UnitResult(port or getattr(link, "port", ""))
    p = Puller(link, mark=mark, log=log, reconnect=reconnect, progress=progress, notice=notice)
    try:
        listing = p.fetch_listing()
    except (PullError, LinkError, UnitError) as e:  # UnitError: it refused `hello` or `logs`
        res.error = str(e)
        return res
    unit = res.unit = listing.unit or "unknown"
    p.dest_base = Path(dest_root) if dest_root else store.dir
    p.dest = (Path(dest_root) if dest_root else store.dir / "raw") / unit
    p.staging_base = store.dir
    p.staging = store.partial_dir(unit)
    # Each copy is indexed while the next one comes over the line (a worker: 40 ms a log, a tenth of its line time)
    todo: queue.SimpleQueue[Outcome | None] = queue.SimpleQueue()
    failed: list[BaseException] = []  # what indexing raised beyond OSError: raised here once the pull is over

    def index() -> None:
        while (o := todo.get()) is not None:
            if failed or o.status not in ("pulled", "skipped") or o.path is None:
                continue
            try:
                store.ingest(unit, o.path)  # a skipped one too: the store may have been rebuilt without it
            except OSError as err:
                o.detail = (o.detail + "; " if o.detail else "") + "not indexed: %s" % (err.strerror or err)
            except BaseException as err:  # noqa: BLE001 - handed to the pull's thread, as if it had indexed
                failed.append(err)

    worker = threading.Thread(target=index, name="index " + unit, daemon=True)
    worker.start()
    p.on_done = todo.put
    try:
        res.outcomes = p.pull_all()
    except PullError as e:
        res.error = str(e)
        return res
    finally:
        todo.put(None)
        worker.join()
        if failed:
            raise failed[0]
    res.bringup = p.bringup
    info = getattr(link, "info", None)
    res.name = info.get("name") if isinstance(info, dict) and isinstance(info.get("name"), str) else None
    if res.name:
        name_folder(p.dest, res.name, log)
    return res


def _resending(link) -> None:
    """A pull asks again: its link gives up on a quick request's answer as soon as it is clearly lost."""
    if hasattr(link, "resend_lost"):
        link.resend_lost = True
