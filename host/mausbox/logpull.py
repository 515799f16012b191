"""Pull game logs from a unit: one listing call, one streaming raw-REPL exec per log, resumable and verified.

Wire format of a stream (what `_STREAM_CODE` prints on the unit), a run of frames:

    ~ T OOOOOOOO LLLL PPPP CCCCCCCC  payload
    | | offset   raw  payload crc32 of the raw bytes (all hex, lower case)
    | type: R = raw bytes, B = base64 (a chunk holding 0x04, which ends raw-REPL output), E = end
    start mark

Every frame is checked (header syntax, expected offset, CRC32) before its bytes reach the partial file, so the
partial file only ever holds verified bytes and a broken transfer resumes from its length. A duplicated frame is
skipped; anything else unexpected interrupts the exec and resumes. The whole file is then checked against the
unit's sha256 and parsed with `maus.logread`, written to the destination as temp file + rename, and only then
marked pulled on the unit.
"""

from __future__ import annotations

import binascii
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

CHUNK = 4096
FRAME_HDR = 26  # "~" + type + 8 + 4 + 4 + 8 hex digits
MAX_LOG_BYTES = 16 * 1024 * 1024
MAX_NAME = 64
LOG_DIR = "logs"

_NAME_RE = re.compile(r"[0-9]{1,10}-[a-z0-9_][a-z0-9_-]{0,31}\.jsonl")
_UNIT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_SHA_RE = re.compile(r"[0-9a-f]{64}")
_HEX = frozenset(b"0123456789abcdef")


class PullError(Exception):
    """A log could not be pulled (after retries); the message says why."""


class LinkLost(Exception):
    """The connection to the unit broke (cable, reset, port gone)."""


class DeviceError(Exception):
    """Code run on the unit raised; the message is the unit's traceback."""


class FrameError(Exception):
    """The byte stream broke the framing rules: the exec is interrupted and resumed."""


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
    """One line of the unit's listing, after checking."""

    name: str
    size: int
    sha256: str
    pulled: bool


@dataclass
class Listing:
    unit: str | None
    entries: list[Entry] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why each refused line was refused


def parse_listing(raw: bytes) -> Listing:
    """The JSON the listing exec prints, checked line by line; a bad line is refused, never trusted."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise DeviceError("the unit's listing is not JSON: %s" % e) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("logs"), list):
        raise DeviceError("the unit's listing has no log list")
    out = Listing(check_unit_id(doc.get("unit")))
    for item in doc["logs"]:
        if isinstance(item, dict):
            item = [item.get("name"), item.get("size"), item.get("sha256"), item.get("pulled")]
        if not isinstance(item, (list, tuple)) or len(item) < 4:
            out.refused.append("malformed listing line %r" % (item,))
            continue
        name, size, sha, pulled = item[:4]
        if isinstance(name, str) and name.startswith(LOG_DIR + "/"):
            name = name[len(LOG_DIR) + 1:]
        try:
            check_name(name)
        except ValueError as e:
            out.refused.append(str(e))
            continue
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_LOG_BYTES:
            out.refused.append("%s: absurd size %r" % (name, size))
            continue
        if not isinstance(sha, str) or not _SHA_RE.fullmatch(sha):
            out.refused.append("%s: bad sha256 %r" % (name, sha))
            continue
        out.entries.append(Entry(name, size, sha, bool(pulled)))
    return out


# --- code run on the unit (MicroPython; kept small: it is sent over the link for every exec) ---

LISTING_CODE = """\
import json
from maus.logstore import LogStore
def _u(l):
 try:
  import machine,binascii
  return binascii.hexlify(machine.unique_id()).decode()
 except Exception:
  pass
 for e in reversed(l):
  try:
   with open('logs/'+e[0]) as f:
    return json.loads(f.readline())['unit']
  except Exception:
   pass
_l=LogStore().listing()
print(json.dumps({'unit':_u(_l),'logs':[list(e) for e in _l]}))
"""

MARK_CODE = """\
from maus.logstore import LogStore
print(1 if LogStore().mark_pulled(%r,%r) else 0)
"""

_STREAM_CODE = """\
import sys,binascii
def _s(n,o,e):
 w=sys.stdout.buffer.write
 b=bytearray(%d);m=memoryview(b)
 f=open(n,'rb')
 f.seek(o)
 while o<e:
  k=f.readinto(m[:min(e-o,len(b))])
  if not k:break
  c=m[:k]
  x=binascii.crc32(c)
  if b.find(b'\\x04',0,k)<0:
   w(b'~R%%08x%%04x%%04x%%08x'%%(o,k,k,x));w(c)
  else:
   d=binascii.b2a_base64(c);w(b'~B%%08x%%04x%%04x%%08x'%%(o,k,len(d),x));w(d)
  o+=k
 f.close()
 w(b'~E%%08x0000000000000000'%%o)
_s(%r,%d,%d)
"""


def stream_code(path: str, offset: int, end: int, chunk: int = CHUNK) -> str:
    return _STREAM_CODE % (chunk, path, offset, end)


def encode_frames(data: bytes, offset: int, end: int, chunk: int = CHUNK) -> list[bytes]:
    """What `stream_code` prints for a file holding `data`, frame by frame: the fake link's unit."""
    frames = []
    o = offset
    end = min(end, len(data))
    while o < end:
        c = data[o:o + chunk] if end - o >= chunk else data[o:end]
        x = binascii.crc32(c)
        if b"\x04" not in c:
            frames.append(b"~R%08x%04x%04x%08x" % (o, len(c), len(c), x) + c)
        else:
            d = binascii.b2a_base64(c)
            frames.append(b"~B%08x%04x%04x%08x" % (o, len(c), len(d), x) + d)
        o += len(c)
    frames.append(b"~E%08x0000000000000000" % o)
    return frames


class Link:
    """A raw-REPL connection as the puller needs it. Every call returns within its bounded timeout."""

    def exec(self, code: str, timeout: float = 10.0) -> bytes:
        raise NotImplementedError

    def stream(self, path: str, offset: int, end: int) -> None:
        """Start the streaming exec; its frames are then read with `read`."""
        raise NotImplementedError

    def read(self, n: int) -> bytes:
        """Up to n bytes; fewer (maybe none) when the link stays silent for its timeout. LinkLost if gone."""
        raise NotImplementedError

    def finish(self) -> None:
        """After the end frame: the exec's tail (its two EOF marks); DeviceError if the unit raised."""
        raise NotImplementedError

    def abort(self) -> None:
        """Interrupt whatever runs and get back to a clean raw-REPL prompt."""
        raise NotImplementedError

    def reconnect(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


def _read_exact(link: Link, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        got = link.read(n - len(buf))
        if not got:
            raise FrameError("link silent mid-frame (%d of %d bytes)" % (len(buf), n))
        buf += got
    return buf


def receive(link: Link, offset: int, end: int, sink: Callable[[bytes], object], max_skip: int = 256) -> int:
    """Read frames for [offset, end), passing each verified chunk to `sink`; returns the end offset.

    Raises FrameError at the first broken frame; the bytes sunk so far are all verified."""
    skipped = 0
    first = True
    while True:
        c = link.read(1)
        if not c:
            raise FrameError("link silent between frames at offset %d" % offset)
        if c != b"~":
            # Stray output before the first frame (a warning print) is tolerated, within reason; later, no.
            skipped += 1
            if not first or skipped > max_skip:
                raise FrameError("garbage between frames at offset %d" % offset)
            continue
        first = False
        hdr = _read_exact(link, FRAME_HDR - 1)
        kind, digits = hdr[:1], hdr[1:]
        if kind not in (b"R", b"B", b"E") or not _HEX.issuperset(digits):
            raise FrameError("bad frame header at offset %d: %r" % (offset, hdr))
        o, rawlen, plen, crc = int(digits[:8], 16), int(digits[8:12], 16), int(digits[12:16], 16), int(digits[16:], 16)
        if kind == b"E":
            if o != offset or o != end:
                raise FrameError("stream ended at %d, expected %d" % (o, end))
            return o
        if rawlen == 0 or rawlen > CHUNK or plen > 2 * CHUNK or kind == b"R" and plen != rawlen:
            raise FrameError("bad frame lengths at offset %d" % offset)
        payload = _read_exact(link, plen)
        if kind == b"B":
            try:
                payload = binascii.a2b_base64(payload)
            except binascii.Error:
                raise FrameError("bad base64 frame at offset %d" % offset) from None
        if len(payload) != rawlen or binascii.crc32(payload) != crc:
            raise FrameError("CRC mismatch in frame at offset %d" % o)
        if o + rawlen <= offset:
            continue  # a duplicate of bytes we already hold
        if o != offset or o + rawlen > end:
            raise FrameError("frame at offset %d, expected %d" % (o, offset))
        sink(payload)
        offset += rawlen


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
    """Pulls the logs of one unit over `link` into `dest` (verified files only) using `staging` for partials."""

    max_stalls = 8  # consecutive attempts without progress before a file is given up

    def __init__(self, link: Link, dest: Path | None = None, staging: Path | None = None, *, mark: bool = True,
                 verify: Callable[[bytes], tuple[list[str], bool]] | None = None,
                 log: Callable[[str], None] = lambda s: None):
        self.link = link
        self.dest = Path(dest) if dest else Path(".")
        self.staging = Path(staging) if staging else self.dest / ".partial"
        self.mark = mark
        self.verify = verify or verify_log
        self.log = log
        self.listing: Listing | None = None
        self.gone = ""  # set when the unit cannot be reached again: the remaining logs are not tried

    def fetch_listing(self) -> Listing:
        # sha256 of every log on the unit: seconds on a full flash, so a longer bound than other execs
        self.listing = parse_listing(self._retry(lambda: self.link.exec(LISTING_CODE, timeout=60.0)))
        return self.listing

    def _retry(self, fn, tries: int = 3):
        for i in range(tries):
            try:
                return fn()
            except (LinkLost, FrameError) as e:
                self.log("link: %s; reconnecting" % e)
                if i == tries - 1:
                    raise PullError("the unit stopped answering: %s" % e) from None
                self._recover(e)
        raise AssertionError

    def _recover(self, e: Exception) -> None:
        try:
            if isinstance(e, LinkLost):
                self.link.reconnect()
            else:
                self.link.abort()
        except LinkLost as e2:
            self.gone = str(e2)
            raise PullError("lost the unit: %s" % e2) from None
        except (FrameError, DeviceError, OSError) as e2:
            self.log("link: recovery failed: %s" % e2)

    def pull_all(self, only_new: bool = True) -> list[Outcome]:
        listing = self.listing or self.fetch_listing()
        out = [Outcome(r, "refused", detail=r) for r in listing.refused]
        newest = max((e.name for e in listing.entries), default=None)
        for e in sorted(listing.entries, key=lambda e: e.name):
            if self.gone:
                out.append(Outcome(e.name, "failed", detail="not tried: %s" % self.gone))
                continue
            if only_new and e.pulled and (self.dest / e.name).exists():
                out.append(Outcome(e.name, "skipped", self.dest / e.name, "already pulled"))
                continue
            out.append(self.pull(e, in_progress_ok=e.name == newest))
        return out

    def pull(self, e: Entry, in_progress_ok: bool = False) -> Outcome:
        self.staging.mkdir(parents=True, exist_ok=True)
        self.dest.mkdir(parents=True, exist_ok=True)
        part = self.staging / (e.name + ".part")
        final = self.dest / e.name
        oc = Outcome(e.name, "failed")
        if final.exists() and _sha256_file(final) == e.sha256:
            data = final.read_bytes()
        else:
            try:
                data = self._fetch(e, part, oc)
            except PullError as err:
                oc.detail = str(err)
                return oc
        oc.nbytes = len(data)
        try:
            oc.damage, oc.finished = self.verify(data)
        except Exception as err:  # a reader bug must not lose the copy: report it
            oc.damage, oc.finished = ["log reader failed: %r" % err], False
        if final.exists():
            old = final.read_bytes()
            if old != data and not data.startswith(old):
                # Another game under the same name (the unit's flash was wiped and numbering restarted):
                # never overwrite it; the new one gets a host-made name.
                final = self.dest / ("%s~%s.jsonl" % (e.name[:-6], e.sha256[:12]))
                oc.detail = "another log already has this name here: kept as %s" % final.name
        if not final.exists() or final.read_bytes() != data:
            tmp = self.dest / (".%s.tmp" % final.name)
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        part.unlink(missing_ok=True)
        oc.path, oc.status = final, "pulled"
        if not oc.finished and in_progress_ok:
            oc.detail = "unfinished (game may be running): copied, not marked pulled"
            return oc
        if self.mark and not e.pulled:
            try:
                res = self._retry(lambda: self.link.exec(MARK_CODE % (e.name, e.sha256)))
                if res.strip() != b"1":
                    oc.detail = "the unit refused the pulled mark"
            except (DeviceError, PullError) as err:
                oc.detail = "copied and verified, but marking it pulled failed: %s" % err
        return oc

    def _fetch(self, e: Entry, part: Path, oc: Outcome) -> bytes:
        have = part.stat().st_size if part.exists() else 0
        if have > e.size:
            part.unlink()
            have = 0
        stalls = 0
        restarts = 0
        with open(part, "ab") as fh:
            while True:
                fh.seek(0, 2)
                have = fh.tell()
                if have == e.size:
                    fh.flush()
                    data = part.read_bytes()
                    if hashlib.sha256(data).hexdigest() == e.sha256:
                        return data
                    # Every chunk passed its CRC, yet the whole differs: the file changed on the unit.
                    restarts += 1
                    if restarts > 1:
                        raise PullError("sha256 differs from the unit's listing (file changed on the unit?)")
                    fh.truncate(0)
                    continue
                before = have
                try:
                    self.link.stream(LOG_DIR + "/" + e.name, have, e.size)
                    receive(self.link, have, e.size, fh.write)
                    fh.flush()
                    self.link.finish()
                except FrameError as err:
                    fh.flush()
                    self.log("%s: %s; resuming" % (e.name, err))
                    self._recover(err)
                except LinkLost as err:
                    fh.flush()
                    self.log("%s: link lost (%s); reconnecting" % (e.name, err))
                    self._recover(err)
                except DeviceError as err:
                    fh.flush()
                    raise PullError("the unit failed reading %s: %s" % (e.name, _last_line(str(err)))) from None
                fh.seek(0, 2)
                if fh.tell() == before:
                    stalls += 1
                    oc.retries += 1
                    if stalls >= self.max_stalls:
                        raise PullError("no progress after %d attempts at offset %d" % (stalls, before))
                elif fh.tell() < e.size:
                    oc.retries += 1
                    stalls = 0


def _last_line(s: str) -> str:
    lines = [x for x in s.strip().splitlines() if x.strip()]
    return lines[-1] if lines else s


def _sha256_file(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# --- the real link: mpremote's serial transport, with every wait bounded ---

class ReplLink(Link):
    """A unit on a serial port (or the virtual unit's pty), in raw REPL for the whole session."""

    def __init__(self, port: str, baudrate: int = 115200, timeout: float = 2.0, open_tries: int = 5):
        self.port = port
        self.baudrate = baudrate
        self.timeout = timeout
        self.open_tries = open_tries
        self.t: Any = None  # mpremote's SerialTransport while connected
        self._open()

    def _open(self) -> None:
        from mpremote.transport import TransportError  # type: ignore[import-untyped]
        from mpremote.transport_serial import SerialTransport  # type: ignore[import-untyped]

        last: Exception | None = None
        for i in range(self.open_tries):
            try:
                self.t = SerialTransport(self.port, baudrate=self.baudrate, timeout=self.timeout)
                self.t.enter_raw_repl(soft_reset=False, timeout_overall=max(5.0, 3 * self.timeout))
                return
            except (TransportError, OSError) as e:
                last = e
                self._close_quietly()
                time.sleep(0.2 * (i + 1))
        from mausbox.transport import open_error

        raise LinkLost(str(open_error(self.port, last)) if last else "cannot open %s" % self.port)

    def _close_quietly(self) -> None:
        if self.t is not None:
            try:
                self.t.close()
            except Exception:
                pass
            self.t = None

    def _tr(self) -> Any:
        if self.t is None:
            raise LinkLost("not connected")
        return self.t

    def _ser(self) -> Any:
        return self._tr().serial

    def _io(self, fn, *a):
        import serial  # type: ignore[import-untyped]
        from mpremote.transport import TransportError  # type: ignore[import-untyped]

        try:
            return fn(*a)
        except (serial.SerialException, OSError) as e:
            raise LinkLost(str(e)) from None
        except TransportError as e:
            raise FrameError(str(e)) from None

    def exec(self, code: str, timeout: float = 10.0) -> bytes:
        self._io(self._tr().exec_raw_no_follow, code)
        out = self._until_eof(timeout)
        err = self._until_eof(timeout)
        if err:
            raise DeviceError(err.decode("utf-8", "replace"))
        return out

    def _until_eof(self, timeout: float) -> bytes:
        """Output up to the next EOF mark, read so that nothing after it is consumed."""
        ser = self._ser()
        deadline = time.monotonic() + timeout
        buf = b""
        while time.monotonic() < deadline:
            buf += self._io(ser.read_until, b"\x04")
            if buf.endswith(b"\x04"):
                return buf[:-1]
        raise FrameError("the unit did not finish within %.0f s" % timeout)

    def stream(self, path: str, offset: int, end: int) -> None:
        self._io(self._tr().exec_raw_no_follow, stream_code(path, offset, end))

    def read(self, n: int) -> bytes:
        return self._io(self._ser().read, n)

    def finish(self) -> None:
        out = self._until_eof(self.timeout * 3)
        err = self._until_eof(self.timeout * 3)
        if err:
            raise DeviceError(err.decode("utf-8", "replace"))
        if out.strip():
            raise FrameError("unexpected output after the end frame: %r" % out[:80])

    def abort(self) -> None:
        ser = self._ser()
        self._io(ser.write, b"\x03\x03")
        deadline = time.monotonic() + max(3.0, 3 * self.timeout)
        old = ser.timeout
        ser.timeout = 0.1
        try:  # drain the rest of the stream and the traceback until the line goes quiet
            while time.monotonic() < deadline:
                if not self._io(ser.read, 4096):
                    break
        finally:
            ser.timeout = old
        from mpremote.transport import TransportError  # type: ignore[import-untyped]

        try:
            self._tr().enter_raw_repl(soft_reset=False, timeout_overall=max(5.0, 3 * self.timeout))
        except TransportError as e:
            raise FrameError("could not get back to the raw REPL: %s" % e) from None
        except OSError as e:
            raise LinkLost(str(e)) from None
        self._settle()

    def reconnect(self) -> None:
        self._close_quietly()
        self._open()
        try:
            self._settle()
        except DeviceError as e:
            raise LinkLost(str(e)) from None

    def _settle(self) -> None:
        """After an interrupt: a Ctrl-C that reached the unit after its code had ended may still be pending
        (the virtual unit holds it for the next exec); throw-away execs take it, so the next real one runs."""
        for _ in range(3):
            nonce = "sync%d" % time.monotonic_ns()
            try:
                if self.exec("print(%r)" % nonce, timeout=max(3.0, 3 * self.timeout)).strip() == nonce.encode():
                    return
            except DeviceError:
                pass
        raise FrameError("the unit does not settle after an interrupt")

    def close(self, restart: bool = False) -> None:
        if self.t is not None:
            try:
                self.t.exit_raw_repl()
                if restart:
                    self.t.serial.write(b"\x04")  # soft reset: the unit's app starts again
            except Exception:
                pass
        self._close_quietly()


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


def pull_unit(link: Link, store, dest_root: Path | None = None, *, mark: bool = True,
              log: Callable[[str], None] = lambda s: None, port: str = "") -> UnitResult:
    """List, pull every new log, index each verified copy in `store` (a mausbox.store.Store)."""
    res = UnitResult(port)
    p = Puller(link, mark=mark, log=log)
    try:
        listing = p.fetch_listing()
    except (PullError, DeviceError) as e:
        res.error = _last_line(str(e))
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
        if o.status == "pulled" and o.path is not None:
            store.ingest(unit, o.path)
    return res


def unit_ports() -> list[str]:
    """Ports that look like units: ESP32 USB bridges and running virtual units (as `mausbox ports` lists them)."""
    from mausbox.transport import list_ports

    return [p.device for p in list_ports() if p.likely_esp32]
