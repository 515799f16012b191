# mypy: ignore-errors
# The virtual unit's interpreter: run UNDER the MicroPython unix port by mausbox.sim.serial.
# The CPython bridge speaks the REPL protocol on the pty; this process boots like a board
# (boot.py, then main.py in friendly mode) and then runs the code blocks the bridge sends.
#
# argv: replserver.py ROOT MODE STATUS_FD [DIR ...]   MODE: "f" friendly, "r" raw REPL at boot.
# Each DIR is mounted read-write at /.simN and put on sys.path (simulated hardware modules).
# Commands on stdin: b"<kind><id> <len>\n" + source; kind "s" single (a friendly REPL line),
#                    "x" file input (raw REPL, paste mode).
# Status lines on STATUS_FD: S<id> user code runs (Ctrl-C becomes SIGINT), E<id> [K] output
# done (K: it ended with KeyboardInterrupt), D<id> finished, R<id> soft reset asked (SystemExit),
# B<banner> booted. Duplicates may occur after a late Ctrl-C: the bridge ignores them.
import io
import os
import sys
import time

import micropython

_root, _mode, _fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
_ctl = open("/dev/fd/%d" % _fd, "wb")  # before the remount hides /dev
_inp = sys.stdin.buffer



def _mount():
    # The folder is the unit's flash: "/" inside the unit is ROOT, as on the board.
    os.umount("/")
    os.mount(os.VfsPosix(_root), "/")
    path = ["", ".frozen", "/lib"]
    for i, p in enumerate(sys.argv[4:]):
        os.mount(os.VfsPosix(p), "/.sim%d" % i)
        path.append("/.sim%d" % i)
    sys.path[:] = path
    os.chdir("/")


_mount()
_g = {"__name__": "__main__"}  # the REPL's globals: boot.py, main.py and every command share them


def _status(line):
    # A late Ctrl-C can surface during the write: the bridge tolerates a repeat.
    while True:
        try:
            _ctl.write(line)
            return
        except KeyboardInterrupt:
            pass


def _unlock():
    # Code interrupted inside heap_lock() leaves the heap locked; a board's REPL forces it open.
    while micropython.heap_unlock():
        pass


def _print_exception(exc):
    # As a board prints it, without this script's frame; on stderr, so the bridge can put it after
    # the first \x04 of the raw REPL (output written before E<id> is all on stdout).
    try:
        buf = io.StringIO()
        sys.print_exception(exc, buf)
        text = buf.getvalue()
    except MemoryError:
        sys.print_exception(exc, sys.stderr)
        return
    me = '"%s"' % sys.argv[0]
    for ln in text.split("\n"):
        if ln and me not in ln:
            print(ln, file=sys.stderr)


def _run(kind, cid, src, name):
    # Compile and run one block; then report, print any error, report again.
    exc = None
    forced = False
    try:
        # From S on a Ctrl-C is for this code: no retry here, which would swallow it (_status drops them).
        _ctl.write(b"S%d\n" % cid)
        exec(compile(str(src, "utf-8"), name, "single" if kind == "s" else "exec"), _g)
    except SystemExit:
        _unlock()
        forced = True
    except BaseException as e:  # noqa: B036 - the REPL reports everything, as a board does
        _unlock()
        exc = e
    st = 0
    while st < 4:
        try:
            if st == 0:
                _status(b"E%d K\n" % cid if isinstance(exc, KeyboardInterrupt) else b"E%d\n" % cid)
                st = 1
            if st == 1:
                st = 2
                if exc is not None:
                    _print_exception(exc)
            if st == 2:
                st = 3
                time.sleep_ms(2)  # a Ctrl-C sent just before the bridge saw E lands here
            if st == 3:
                _status(b"%s%d\n" % (b"R" if forced else b"D", cid))
                st = 4
        except KeyboardInterrupt:
            pass
    return forced


def _run_file(name):
    try:
        os.stat(name)
    except OSError:
        return False
    with open(name) as f:
        src = f.read()
    _g["__file__"] = name
    return _run("x", 0, src, name)


def _banner():
    v = sys.implementation.version
    built = sys.version.split(" on ")[-1]
    return "MicroPython v%d.%d.%d on %s; Mausbox virtual unit (unix port, %s)" % (
        v[0], v[1], v[2], built, sys.implementation._machine.split(" ")[0])


_rx = bytearray()  # the command stream read so far


def _command():
    # The next command as (kind, id, source), or None at the end of input. A late Ctrl-C (one the bridge
    # sent while it still saw code running) can surface at any jump in here: what was read stays in _rx,
    # so calling again resumes without losing a byte.
    while True:
        i = _rx.find(b"\n")
        if i >= 0:
            break
        b = _inp.readline()
        _rx.extend(b)
        if not b:
            return None
    hdr = bytes(_rx[:i])
    try:
        kind = chr(hdr[0])
        cid, n = hdr[1:].split()
        cid = int(cid)
        end = i + 1 + int(n)
    except (ValueError, IndexError):
        raise ValueError("bad command header %r" % hdr) from None
    while len(_rx) < end:
        b = _inp.read(end - len(_rx))
        _rx.extend(b)
        if not b:
            return None
    src = bytes(_rx[i + 1:end])
    _rx[:end] = b""
    return kind, cid, src


def _serve():
    while True:
        try:
            while True:
                try:
                    cmd = _command()
                except ValueError:
                    _status(b"X\n")  # out of step with the bridge: it restarts the unit
                    return
                if cmd is None:
                    return
                if _run(cmd[0], cmd[1], cmd[2], "<stdin>"):
                    return
        except KeyboardInterrupt:
            pass  # between commands a board's REPL has no interrupt armed: the Ctrl-C is dropped


def _main():
    # boot.py, then main.py (friendly mode), the banner, the commands. A late Ctrl-C between these steps
    # (the bridge still saw code running) is dropped; it never takes the interpreter down.
    todo = ["boot.py", "main.py"] if _mode == "f" else ["boot.py"]
    forced = False
    booted = False
    while True:
        try:
            while todo and not forced:
                forced = _run_file(todo.pop(0))
            if forced:
                return  # _run reported R0: the bridge soft-resets
            if not booted:
                _status(b"B" + _banner().encode() + b"\n")
                booted = True
            _serve()
            return
        except KeyboardInterrupt:
            pass


try:
    _main()
except KeyboardInterrupt:
    # A Ctrl-C outside user code (only in a race with the bridge): restart cleanly.
    _status(b"X\n")
