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
    _status(b"S%d\n" % cid)
    try:
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


def _read_exact(n):
    buf = bytearray(n)
    mv = memoryview(buf)
    got = 0
    while got < n:
        k = _inp.readinto(mv[got:])
        if not k:
            raise EOFError
        got += k
    return buf


def _serve():
    while True:
        try:
            hdr = _inp.readline()
        except KeyboardInterrupt:
            continue
        if not hdr:
            return
        try:
            kind = chr(hdr[0])
            cid, n = hdr[1:].split()
            cid = int(cid)
            src = _read_exact(int(n))
        except (ValueError, IndexError, EOFError):
            _status(b"X\n")  # out of step with the bridge: it restarts the unit
            return
        if _run(kind, cid, src, "<stdin>"):
            return


def _main():
    forced = _run_file("boot.py")
    if not forced and _mode == "f":
        forced = _run_file("main.py")
    if forced:
        return  # _run reported R0: the bridge soft-resets
    _status(b"B" + _banner().encode() + b"\n")
    _serve()


try:
    _main()
except KeyboardInterrupt:
    # A Ctrl-C outside user code (only in a race with the bridge): restart cleanly.
    _status(b"X\n")
