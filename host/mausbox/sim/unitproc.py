"""The virtual unit's interpreter: one MicroPython unix-port process running `replserver.py`, and its pipes.

Its stdout is the unit's console (stdout and stderr in one pipe, in order, as one UART); its stdin is the code's
`sys.stdin`. Beside them: a status pipe (the interpreter's words to the bridge, one line each, some with a body:
see serial.SerialUnit._on_status), a command pipe (code to run, `e` to print an ended code's error, Tab's
completion), a ping pipe (answered once a SIGINT has been taken) and the flash accounting it is sent at start.
A reset is a new Interpreter: the process is ended and another started, as a board's RAM is lost.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
from pathlib import Path

REPLSERVER = Path(__file__).with_name("replserver.py")
REPLBOOT = REPLSERVER.with_name("replboot.py")  # what the interpreter runs: replserver, imported, then its REPL
_mpy_dir: list[str] = []  # the folder with replserver.mpy ("" none), made once per process


def replserver_mpy() -> str | None:
    """A folder holding replserver.py compiled by mpy-cross (kept in the cache by source, path and compiler), or
    None: the interpreter compiles the source itself. Loaded from .mpy the REPL server leaves no parser's temporaries
    between its objects: its heap at the prompt is one large free block, as a board's (issue 28 item 6)."""
    if not _mpy_dir:
        found = ""
        try:
            import hashlib

            from mausbox.build import compile_file, mpy_cross_cmd
            from mausbox.paths import cache_dir

            # its path too: the .mpy names it in tracebacks, whose bridge frames are cut by this checkout's path
            key = hashlib.sha256(REPLSERVER.read_bytes() + repr((mpy_cross_cmd(), str(REPLSERVER))).encode()).hexdigest()[:16]
            d = cache_dir() / "sim-mpy" / key
            if not (d / "replserver.mpy").is_file():
                d.mkdir(parents=True, exist_ok=True)
                tmp = d / f"replserver.{os.getpid()}.tmp"
                if compile_file(REPLSERVER, tmp, march=None, shown=REPLSERVER) is None:
                    tmp.replace(d / "replserver.mpy")  # whole or not at all: other processes read it meanwhile
            if (d / "replserver.mpy").is_file():
                found = str(d)
        except Exception:  # noqa: BLE001 - no compiler, a read-only cache: the source it is
            found = ""
        _mpy_dir.append(found)
    return _mpy_dir[0] or None


_parts_dir: list[str] = []  # the folder with the emulated machine's modules ("" none), made once per process
# What the unit's `machine` loads at the first use of a part (firmware/maus/sim/vuparts.py and what it imports): the
# board's machine is C, there whatever the flash holds, so these come from this checkout, not the unit's folder; and
# vuload.py, the bridge's loader of them.
PARTS = ("__init__.py", "sim/__init__.py", "sim/vuparts.py", "sim/vuart.py", "sim/machine.py", "sim/esp32.py",
         "sim/neopixel.py", "sim/wiring.py", "sim/world.py", "sim/piezo.py", "sim/mfrc522_emu.py", "sim/mfrc522_rf.py",
         "sim/rf_field.py", "sim/nfc_tags.py", "drivers/mfrc522.py")
VULOAD = REPLSERVER.with_name("vuload.py")
VULFS = REPLSERVER.with_name("vulfs.py")  # the unit's vfs.VfsLfs2 (its mtimes on the unit's clock)


def parts_dir() -> str:
    """A folder holding vuload and `maus/` with the emulated machine's modules (PARTS), compiled by mpy-cross for
    this interpreter (kept in the cache by their sources and the compiler); without a compiler their sources, which
    the interpreter compiles itself (slower, and parser garbage in the unit's heap). "" when neither can be made."""
    if not _parts_dir:
        found = ""
        try:
            import hashlib
            import shutil

            from mausbox.build import compile_file, mpy_cross_cmd
            from mausbox.mpbuild import sim_march
            from mausbox.paths import FIRMWARE_PKG, cache_dir

            files = [(FIRMWARE_PKG / rel, Path("maus") / rel) for rel in PARTS] + [(VULOAD, Path("vuload.py")), (VULFS, Path("vulfs.py"))]
            try:
                cmd, march = repr(mpy_cross_cmd()), sim_march()
            except Exception:  # noqa: BLE001 - no compiler: the sources
                cmd, march = "", ""
            h = hashlib.sha256(repr((cmd, march)).encode())
            for src, rel in files:
                h.update(str(rel).encode() + src.read_bytes())
            d = cache_dir() / "sim-mpy" / ("parts-" + h.hexdigest()[:16])
            if not (d / "done").is_file():
                tmp = d.with_name(d.name + f".{os.getpid()}.tmp")
                for src, rel in files:
                    out = tmp / rel
                    out.parent.mkdir(parents=True, exist_ok=True)
                    if not cmd or compile_file(src, out.with_suffix(".mpy"), march=march) is not None:
                        shutil.copyfile(src, out)
                (tmp / "done").write_text("")
                try:
                    tmp.rename(d)  # whole or not at all: other processes read it meanwhile
                except OSError:  # another process made it first
                    shutil.rmtree(tmp, ignore_errors=True)
            if (d / "done").is_file():
                found = str(d)
        except Exception:  # noqa: BLE001 - a read-only cache: no parts (machine keeps RTC, UART(0), the resets)
            found = ""
        _parts_dir.append(found)
    return _parts_dir[0]


class Interpreter:
    """One run of the unit's interpreter, from power-on or a reset to its end (module docstring)."""

    def __init__(self, exe: str, heapsize: str, root: Path, mode: str, env: dict, extra_path: list[str]) -> None:
        status_r, status_w = os.pipe()
        cmd_r, cmd_w = os.pipe()
        ping_r, ping_w = os.pipe()
        pre_r, pre_w = os.pipe()
        env = dict(env, MAUSBOX_SIM_PRECOUNT=str(pre_r))
        mpy = replserver_mpy()
        if mpy:
            env["MAUSBOX_SIM_MPY"] = mpy
        env.setdefault("MAUSBOX_SIM_PARTS", parts_dir())
        self.proc = subprocess.Popen(
            [exe, "-X", f"heapsize={heapsize}", str(REPLBOOT), str(root), mode, str(status_w), str(cmd_r),
             str(ping_r), str(REPLSERVER.parent), *extra_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(status_w, cmd_r, ping_r, pre_r), cwd=root, env=env, start_new_session=True,
            preexec_fn=_die_with_parent())
        for fd in (status_w, cmd_r, ping_r, pre_r):
            os.close(fd)
        # the flash's accounting, counted here in C-speed stats while the interpreter starts (vflash.host_count)
        threading.Thread(target=_precount, args=(root, env, pre_w), name="mausbox-precount", daemon=True).start()
        self.status_fd = status_r
        self.cmd_fd = cmd_w
        self.ping_fd = ping_w
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.out_fd = self.proc.stdout.fileno()
        self.in_fd = self.proc.stdin.fileno()
        for fd in (status_r, self.out_fd, self.in_fd):
            os.set_blocking(fd, False)
        self.status_buf = b""
        self.eof = False  # the last read() found its pipe closed

    def read(self, fd: int, limit: int = 1 << 20) -> bytes:
        """What one of its pipes holds now (up to `limit`), without waiting."""
        chunks = []
        total = 0
        while total < limit:
            try:
                b = os.read(fd, 65536)
            except (BlockingIOError, OSError):
                break
            if not b:
                self.eof = True
                break
            chunks.append(b)
            total += len(b)
        return b"".join(chunks)

    def next_status(self) -> tuple[bytes, bytes, bytes] | None:
        """The next whole status line received, as (tag, rest, body), or None until one is complete. D (a code's
        end, with the keys it left) and C (a completion) carry a body of the length their line names."""
        buf = self.status_buf
        i = buf.find(b"\n")
        if i < 0:
            return None
        line = buf[:i]
        tag, rest = line[:1], line[1:]
        body = b""
        if tag in (b"D", b"C"):
            try:
                n = int(rest.split()[-1]) if tag == b"D" else int(rest)
            except (ValueError, IndexError):
                n = 0
            if len(buf) < i + 1 + n:
                return None  # the rest of the body is still on its way
            body = buf[i + 1:i + 1 + n]
            self.status_buf = buf[i + 1 + n:]
        else:
            self.status_buf = buf[i + 1:]
        return tag, rest, body

    def command(self, data: bytes) -> None:
        try:
            os.write(self.cmd_fd, data)
        except OSError:
            pass

    def write_stdin(self, data: bytearray) -> int:
        """Keys for the running code's sys.stdin: -> how many the pipe took."""
        try:
            return os.write(self.in_fd, data)
        except (BlockingIOError, OSError):
            return 0

    def interrupt(self) -> bool:
        """SIGINT: KeyboardInterrupt at the interpreter's next check point (the unix port raises it from its
        scheduler, as the ESP32's UART interrupt does). False when the process is gone."""
        try:
            os.kill(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            return False
        return True

    def ping(self) -> bool:
        """Once the SIGINT has been taken: the ping is answered (status P) after its KeyboardInterrupt. False: the
        signal is still pending, ask again."""
        if not _signal_delivered(self.proc):
            return False
        try:
            os.write(self.ping_fd, b"p")
        except OSError:
            pass
        return True

    def kill(self) -> None:
        proc = self.proc
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass
        for fd in (self.status_fd, self.cmd_fd, self.ping_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def _precount(root: Path, env: dict, fd: int) -> None:
    """Send a new interpreter its folder's flash accounting (host/mausbox/sim/vflash.py host_count), the count it
    would take itself with one stat a file, which with 2,000 logs was most of its boot. Two JSON lines: the
    links of its large directories, then {"cap", "n"}; "null" where it failed: the interpreter looks itself."""

    def send(obj) -> None:
        b = (json.dumps(obj) + "\n").encode()
        while b:
            b = b[os.write(fd, b):]

    sent = False
    try:
        from mausbox.sim import vflash

        cap = max(4, int(env.get("MAUSBOX_FLASH_BYTES") or 0x200000) // vflash.BS)

        def links(found) -> None:
            nonlocal sent
            send(found)
            sent = True

        send({"cap": cap, "n": vflash.host_count(str(root), cap, links)})
    except Exception:  # noqa: BLE001 - a folder it cannot read (or the interpreter has gone): it counts itself
        try:
            if not sent:
                send(None)  # no links
            send(None)  # no counts
        except OSError:
            pass
    finally:
        os.close(fd)


def _signal_delivered(proc) -> bool:
    """SIGINT has left the kernel's queue for the interpreter: its handler has run (or runs before any
    other code of the thread that took it), so a ping now is answered only after the KeyboardInterrupt."""
    if proc is None:
        return True
    mask = 1 << (signal.SIGINT - 1)
    try:
        files = [f"/proc/{proc.pid}/status"] + [str(p / "status") for p in Path(f"/proc/{proc.pid}/task").iterdir()]
        for f in files:
            for ln in Path(f).read_text().splitlines():
                if ln.startswith(("SigPnd:", "ShdPnd:")) and int(ln.split()[1], 16) & mask:
                    return False
    except (OSError, ValueError):
        return True
    return True


def unit_id(root: Path) -> str:
    """The unit's machine.unique_id() as hex: made once per flash folder (ROOT/.sim/unique_id) and kept,
    like the MAC address an ESP32 has from its eFuses. 5e:1d: a locally administered MAC prefix."""
    f = Path(root) / ".sim" / "unique_id"
    try:
        uid = f.read_text().strip()
        bytes.fromhex(uid)
        if len(uid) == 12:
            return uid
    except (OSError, ValueError):
        pass
    uid = "5e1d" + secrets.token_hex(4)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(uid + "\n")
        os.replace(tmp, f)
    except OSError:
        pass
    return uid


def _die_with_parent():
    """Linux: the interpreter gets SIGKILL when the bridge's process dies, even by SIGKILL, so no firmware
    is left running without its pty. (Strictly when the thread that spawned it ends: start() from a
    thread that outlives the unit, as the main thread does; restarts come from the bridge's own thread.)
    Resolved here, in the parent: the child only makes one C call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    sigkill = int(signal.SIGKILL)
    return lambda: prctl(pr_set_pdeathsig, sigkill)
