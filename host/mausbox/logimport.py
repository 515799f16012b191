"""`mausbox logs import FILE...`: logs that came by another way than a pull (the web page's download, a tar of
a unit's logs/ folder, single .jsonl files) taken into the store, checked as a pull checks them.

Each log is named as on a unit (pulldest.check_name), read by the firmware's own reader (pulldest.verify_log:
damage is reported, the copy kept), filed under its unit (the id in its game_start record) in the store's
raw/ folder exactly as a pull files it (Puller._place: never over another game of the same name), and
indexed (Store.ingest)."""

from __future__ import annotations

import hashlib
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from mausbox.logpull import Puller
from mausbox.pulldest import Entry, Outcome, check_name, check_unit_id, verify_log

MAX_LOG = 16 * 1024 * 1024  # no unit writes a log this big: a larger member is not a log


class ImportError_(ValueError):
    pass


@dataclass
class Imported:
    source: str
    unit: str = ""
    outcome: Outcome | None = None
    new: bool = False
    error: str = ""
    damage: list[str] = field(default_factory=list)


def read_sources(path: Path) -> list[tuple[str, str, bytes]]:
    """(where, log name, bytes) of each log in FILE: a .jsonl, or a tar (the page's download) of them."""
    if not path.is_file():
        raise ImportError_(f"{path}: no such file")
    if tarfile.is_tarfile(path):
        out = []
        try:
            with tarfile.open(path) as tf:
                for m in tf.getmembers():
                    if not m.isfile() or not m.name.endswith(".jsonl"):
                        continue
                    if m.size > MAX_LOG:
                        raise ImportError_(f"{path}:{m.name}: {m.size} bytes is too big for a game log")
                    f = tf.extractfile(m)
                    assert f is not None
                    out.append((f"{path}:{m.name}", Path(m.name).name, f.read()))
        except tarfile.TarError as e:
            raise ImportError_(f"{path}: a damaged tar file ({e})") from None
        if not out:
            raise ImportError_(f"{path}: no game logs (NNNNN-game.jsonl) in this tar file")
        return out
    if path.stat().st_size > MAX_LOG:
        raise ImportError_(f"{path}: too big for a game log")
    return [(str(path), path.name, path.read_bytes())]


def unit_of(data: bytes) -> str | None:
    from maus.log import check as logcheck

    start = logcheck.read(data, keep=False).start or {}
    return check_unit_id(start.get("unit"))


def import_log(store, where: str, name: str, data: bytes) -> Imported:
    res = Imported(where)
    try:
        check_name(name)
    except ValueError as e:
        res.error = f"not a unit's log name ({e})"
        return res
    try:
        res.damage, finished = verify_log(data)
    except Exception as e:  # noqa: BLE001 - a reader bug must not lose the file: report it
        res.damage, finished = [f"log reader failed: {e!r}"], False
    uid = unit_of(data)
    if uid is None:
        res.error = "no game_start record with the unit's id: not a game log"
        return res
    res.unit = uid
    dest = store.raw_dir(uid)
    # the folders below the store's opened as a pull opens them: never through a planted link
    p = Puller(None, dest=dest, mark=False, dest_base=store.dir, staging_base=store.dir,
               staging=store.partial_dir(uid))
    oc = Outcome(name, "pulled", nbytes=len(data), damage=res.damage, finished=finished)
    try:
        p._dfd, p._sfd = p._folders()
    except OSError as err:  # PlantedLink included
        res.error = f"cannot file it under {dest}: {err}"
        return res
    try:
        path = p._place(Entry(name, len(data), False), dest / name, data, hashlib.sha256(data).hexdigest(), oc)
    finally:
        os.close(p._dfd)
        os.close(p._sfd)
    oc.path = path
    res.outcome = oc
    _, res.new = store.ingest(uid, path)
    return res
