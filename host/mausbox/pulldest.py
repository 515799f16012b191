"""What a pull takes from a unit, checked, and where it lands on the host: the unit's listing, the names it supplies
(checked before they become paths), a log's bytes (checked by the firmware's own reader), the outcome of each log,
and the folders a pull writes in (opened without following a link planted in the tree)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mausbox.link.bounds import MAX_LOG_BYTES

MAX_NAME = 64
PULLED = ".pulled"  # a log's pulled marker on the unit: <log>.pulled (docs/protocol.md)
_NAME_RE = re.compile(r"[0-9]{1,10}-[a-z0-9_][a-z0-9_-]{0,31}\.jsonl")
_UNIT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class PlantedLink(OSError):
    """A symbolic link (or something not a folder) where the pull writes: refused, nothing written there."""


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def open_folder(base: Path, target: Path) -> int:
    """`target` open as a descriptor (its folders made as needed): `base` is the user's choice and followed as
    given; every component of `target` below it is made or opened without following a link, so nothing planted
    in the tree (a link at DEST/<unit>, at partial/) takes the pull elsewhere. PlantedLink if one is there."""
    base, target = Path(base), Path(target)
    try:
        rel = target.relative_to(base).parts
    except ValueError:
        base, rel = target, ()
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | _DIRECTORY)
    here = base
    for name in rel:
        here = here / name
        try:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            nfd = os.open(name, os.O_RDONLY | _DIRECTORY | NOFOLLOW, dir_fd=fd)
        except OSError as err:
            kind = kind_at(fd, name)
            os.close(fd)
            if kind == "link":
                raise PlantedLink("%s is a symbolic link: refused (nothing is written through a link)" % here) from None
            if kind is not None and kind != "dir":
                raise PlantedLink("%s is not a folder: refused" % here) from None
            raise err
        os.close(fd)
        fd = nfd
    return fd


def kind_at(dfd: int, name: str) -> str | None:
    import stat

    try:
        st = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return "link"
    return "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"


def read_at(dfd: int, name: str) -> bytes | None:
    """A plain file's bytes in the folder `dfd`, never through a link; None if there is none."""
    try:
        fd = os.open(name, os.O_RDONLY | NOFOLLOW, dir_fd=dfd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        import stat

        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read()


def unlink_at(dfd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        pass


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


def name_folder(dest: Path, name: str, log: Callable[[str], None] = lambda s: None) -> Path | None:
    """Beside the unit's folder (<folder>/<unit>), a link to it named for the unit: `Tisch 3 (5e1db134)`, so a
    teacher finds a unit's logs by its name. The store reads only the id's folder (it skips links), so the
    name changes nothing it holds; a unit renamed gets its new link and loses the old one."""

    unit = dest.name
    safe = re.sub(r"[\x00-\x1f\x7f/\\:*?\"<>|]", "-", name).strip(" .") or "-"
    want = "%s (%s)" % (safe, unit)
    base = dest.parent
    try:
        for e in os.scandir(base):
            if e.is_symlink() and e.name != want and e.name.endswith(" (%s)" % unit) and os.readlink(e.path) == unit:
                os.unlink(e.path)  # this unit's link under an old name
        link = base / want
        if link.is_symlink() and os.readlink(link) == unit:
            return link
        if os.path.lexists(link):
            log("not linking %s: something else has that name" % link)
            return None
        os.symlink(unit, link, target_is_directory=True)
        return link
    except OSError as e:  # a filesystem without links (FAT, some Windows setups): the id's folder still holds all
        log("no name link for %s: %s" % (dest, e.strerror or e))
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
    marked: bool = True  # False: copied, but the unit refused (or never answered) the pulled mark
    line: bool = False  # failed because the line kept failing (not refused, not a problem of the log)


def verify_log(data: bytes) -> tuple[list[str], bool]:
    """Check a log with the firmware's pure reader: (damage reports, finished?)."""
    from maus.log import check as logcheck

    res = logcheck.read(data, keep=False)
    return [repr(p) for p in res.damaged()], res.end is not None
