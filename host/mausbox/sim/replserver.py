# mypy: ignore-errors
# The virtual unit's interpreter: run UNDER the MicroPython unix port by mausbox.sim.unitproc (for serial.SerialUnit).
# The CPython bridge speaks the REPL protocol on the pty; this process boots like a board
# (boot.py, then main.py in friendly mode) and runs the code blocks the bridge sends, as
# shared/runtime/pyexec.c's parse_compile_execute does on an ESP32.
# Over 600 lines on purpose: it runs as one file under the MicroPython unix port, in a process of its own,
# before any package is on that interpreter's path.
#
# argv: replserver.py ROOT MODE CTL_FD CMD_FD PING_FD SHIM_DIR [DIR ...]   MODE: "f" friendly, "r" raw.
# Each DIR is mounted read-only at /.simN and put on sys.path (simulated hardware modules).
# fd 0 is the console's input (what the host types while code runs), fd 1 and 2 its output: the bridge
# turns "\n" into "\r\n" there, as a board's stdout does for text.
# Commands on CMD_FD: b"<kind><id> <len>\n" + source (kind "s" single: a friendly REPL line; "x" file
# input: raw REPL, paste mode); b"e\n" the bridge has seen E; b"w\n" go on with a raw write;
# b"c<len>\n" + text: Tab completion. PING_FD: one byte a ping, answered by P from the main thread.
# Status lines on CTL_FD: S<id> code runs, E<id> [K] it ended (K: by KeyboardInterrupt), D<id> [L] <n>\n
# + n bytes of console input it left unread (L: a Ctrl-C sent while it ran landed after its end, and is
# the next reader's), R<id> soft reset asked (SystemExit), H hard reset asked
# (machine.reset), K<c> kbd_intr(c), W<n> the next n bytes on fd 1 are binary, P pong, C<n>\n + n
# bytes: completion, B<banner> booted.
import _thread
import builtins
import os
import select
import sys
import time

import micropython

_root, _mode = sys.argv[1], sys.argv[2]
_ctl = open("/dev/fd/%s" % sys.argv[3], "wb")  # before the remount hides /dev
_cmd = open("/dev/fd/%s" % sys.argv[4], "rb")
_ping = open("/dev/fd/%s" % sys.argv[5], "rb")
_pre = os.getenv("MAUSBOX_SIM_PRECOUNT")  # the bridge's count of the folder (vflash.host_count): its pipe
_pre = open("/dev/fd/%s" % _pre, "rb") if _pre else None
_shim = sys.argv[6]
_inp = sys.stdin.buffer
_out = sys.stdout.buffer
_sys = sys
_poll = select.poll()
_poll.register(_cmd, select.POLLIN)
_inpoll = select.poll()
_inpoll.register(sys.stdin, select.POLLIN)
_main_id = _thread.get_ident()


class _Jail:
    # The unit's flash is the folder ROOT, and nothing outside it. Code on the unit reaches files through
    # `open` and `os` (mpremote's fs commands too), and those given to it check every path here: made
    # absolute and normalised ("/.." is "/", as on a board's filesystem), and a path through a symlink is
    # refused (a board's flash has none; one planted in the folder must not lead out of it). VfsPosix then
    # only ever sees clean absolute paths, which it puts under ROOT. Imports stay on MicroPython's C path
    # (a Ctrl-C during one must stay pending, as on a board).
    # The links of a large directory read, by the directory: its inode, size, mtime and ctime when read. A
    # directory of 2,000 logs is not read again at every path in it, only once it changed: a link planted in it
    # changes its mtime. Kept only when read 2 s or more after its last change (mtimes are whole seconds: a
    # change in the same second as the reading would look like none).
    _seen = {}

    def links(self, d):
        now = int(time.time())
        st = os.stat(d)
        k = (st[1], st[6], st[8], st[9])
        got = self._seen.get(d)
        if got is not None and got[0] == k:
            return got[1]
        out = ()
        n = 0
        # read to its end, never left early: an ilistdir iterator given up before its end is closed by its
        # finaliser, which releases the GIL inside the GC's sweep (docs/micropython-bugs.md)
        for e in os.ilistdir(d):
            n += 1
            # S_IFLNK; a filesystem without d_type says 0: then the link's inode is not the target's
            if e[1] == 0xA000 or (e[1] == 0 and e[2] != os.stat(d + e[0])[1]):
                out += (e[0],)
        if n >= 64 and max(st[8], st[9]) <= now - 2:  # only large ones (logs/): the REPL's heap share is small
            if len(self._seen) >= 4:
                self._seen.clear()
            self._seen[d] = (k, out)
        return out

    def p(self, path):
        b = not isinstance(path, str)
        parts = _top_names(path)
        d = "/"
        for c in parts:  # each step a plain file or directory of its parent, never a link
            try:
                link = c in self.links(d)
            except OSError:
                break  # the parent is missing: the operation says so itself
            if link:
                raise OSError(13)  # EACCES
            d += c + "/"
        path = "/" + "/".join(parts)
        return bytes(path, "utf-8") if b else path

    def one(self, f):
        return lambda path="": f(self.p(path))

    def rename(self, a, b):
        # VfsPosix builds both absolute paths in one buffer: rename between paths relative to ROOT
        a, b, here = self.p(a), self.p(b), os.getcwd()
        os.chdir("/")
        try:
            os.rename(a[1:], b[1:])
        finally:
            os.chdir(here)


def _make_os():
    m = _module("os")
    d = m.__dict__
    for k in dir(os):
        if k[0] != "_":
            d[k] = getattr(os, k)
    j = _Jail()
    for k in ("stat", "statvfs", "remove", "rmdir", "mkdir", "ilistdir", "listdir", "chdir", "unlink"):
        if k in d:
            d[k] = j.one(getattr(os, k))
    d["rename"] = j.rename
    real_open = builtins.open

    def open(path, *a, **kw):
        return real_open(j.p(path) if isinstance(path, (str, bytes)) else path, *a, **kw)

    # the flash's capacity and littlefs's block accounting (vflash.py): statvfs, and ENOSPC past the capacity
    sys.path.append("/.vu")
    import vflash

    sys.path.pop()
    sys.modules.pop("vflash", None)
    builtins.open = vflash.hook(d, j.p, open, _precount(vflash.CAP))
    return m


def _precount(cap):
    # The bridge's count of the folder, taken while this interpreter starts (vflash.host_count): first the links
    # of its large directories as _Jail.links keeps them (read here), then the blocks in use (-> a function that
    # waits for them, None: count here).
    global _pre
    f, _pre = _pre, None
    if f is None:
        return None
    import json

    try:
        for d, k, names in (json.loads(f.readline() or "null") or [])[:4]:
            _Jail._seen[d] = (tuple(k), tuple(names))
    except (OSError, ValueError, TypeError):
        f.close()
        return None

    def counts():
        try:
            got = json.loads(f.readline() or "null")
        except (OSError, ValueError):
            got = None
        finally:
            f.close()
        return got["n"] if got and got["cap"] == cap else None

    return counts


def _mount():
    # The folder is the unit's flash: "/" inside the unit is ROOT, as on the board.
    os.umount("/")
    os.mount(os.VfsPosix(_root), "/")
    # Read-only: code on the unit (mpremote's `fs rm -r :/`, say) must not delete the host's sources.
    os.mount(os.VfsPosix(_shim), "/.vu", readonly=True)
    parts = os.getenv("MAUSBOX_SIM_PARTS")  # the emulated machine's modules (unitproc.parts_dir): _load_parts
    if parts:
        os.mount(os.VfsPosix(parts), _PARTS_AT, readonly=True)
    path = ["", ".frozen", "/lib"]
    for i, p in enumerate(sys.argv[7:]):
        os.mount(os.VfsPosix(p), "/.sim%d" % i, readonly=True)
        path.append("/.sim%d" % i)
    sys.path[:] = path
    os.chdir("/")


_PARTS_AT = "/.simparts"  # hidden as the other /.simN mounts: vfs.mount() does not list it, umount refuses it
_mount()


_late = [False]  # a Ctrl-C surfaced in _status or _wait: after the code it was sent to had ended


def _status(line):
    # A late Ctrl-C (one the bridge sent while the code still ran) can surface here: noted, retry.
    while True:
        try:
            _ctl.write(line)
            return
        except KeyboardInterrupt:
            _late[0] = True


def _wait(tag):
    # The bridge's answer on CMD_FD. Polled in short steps: each step is a point where a pending
    # KeyboardInterrupt is raised (noted for D, see _run) and the scheduled pong runs.
    while True:
        try:
            if _poll.poll(20):
                line = _cmd.readline()
                if line[:1] == tag or not line:
                    return line
        except KeyboardInterrupt:
            _late[0] = True


def _pinger():
    # The bridge pings after each SIGINT it sends; the pong runs on the main thread at its next
    # check point, so it is only written once the KeyboardInterrupt has been raised there.
    b = bytearray(1)
    while _ping.readinto(b):
        while True:
            try:
                micropython.schedule(_pong, 0)
                break
            except RuntimeError:  # the queue is full: the app's own callbacks come first
                time.sleep_ms(1)


_PONG = b"P\n"
_ctl_write = _ctl.write
_schedule = micropython.schedule
_get_ident = _thread.get_ident


def _pong(_):
    # Allocates nothing: it may run while the app holds the heap locked.
    try:
        if _get_ident() != _main_id:  # with the GIL any thread runs callbacks: hand it on
            _schedule(_pong, 0)
            return
        _ctl_write(_PONG)
    except Exception:  # noqa: BLE001 - a full queue or a locked heap: try again at the next check point
        try:
            _schedule(_pong, 0)
        except Exception:  # noqa: BLE001
            pass


_thread.start_new_thread(_pinger, ())


# -- what code on the unit sees: a board's sys, micropython and machine --------------------------

def _module(name):
    # A fresh module object (the unix port cannot make one directly): the empty shim file, imported
    # again for each name.
    sys.path.append("/.vu")
    try:
        import _vumod

        m = _vumod
    finally:
        sys.path.pop()
        sys.modules.pop("_vumod", None)
    m.__name__ = name
    m.__dict__.pop("__file__", None)
    return m


import io  # noqa: E402


class FileIO(io.IOBase):
    """sys.stdout.buffer: bytes pass unmodified. The bridge is told first, so that it does not turn
    their "\\n" into "\\r\\n" as it does for text. Named as a board's (io.FileIO)."""

    def write(self, b, n=None):
        mv = memoryview(b)
        if n is not None:
            mv = mv[:n]
        k = len(mv)
        if not k:
            return 0
        irq = False
        _status(b"W%d\n" % k)
        while True:
            try:
                _wait(b"w")
                break
            except KeyboardInterrupt:
                irq = True
        _out.write(mv)
        if irq:
            raise KeyboardInterrupt
        return k

    def flush(self):
        pass

    def __repr__(self):
        return "<io.FileIO 1>"


class TextIOWrapper(io.IOBase):
    # sys.stdout and sys.stderr, named and shown as a board's (run-tests.py's basics/sys_stdio.py looks)
    def __init__(self, f, fd):
        self.f = f
        self.fd = fd
        self.buffer = FileIO()

    def write(self, s):
        return self.f.write(s)

    def flush(self):
        pass

    def fileno(self):
        return 1

    def __repr__(self):
        return "<io.TextIOWrapper %d>" % self.fd


_set = object.__setattr__


class module:  # noqa: N801 - what type(sys) is called on a board
    # The board's sys is a ROM module: setting an attribute raises AttributeError, but for path, ps1 and ps2
    # (MICROPY_PY_SYS_ATTR_DELEGATION), and a new sys.path is where imports look. A module object of the unix
    # port would take any attribute and leave the import's path as it was.
    def __setattr__(self, k, v):
        if k not in ("path", "ps1", "ps2"):
            raise AttributeError("'module' object has no attribute '%s'" % k)
        if k == "path":
            _sys.path = v  # the import's own
        else:  # the friendly REPL's prompt is the bridge's (serial.py): it prints the new one from the next line
            import binascii

            _status(b"Q%s %s\n" % (k[2:].encode(), binascii.hexlify(str(v).encode())))
        _set(self, k, v)

    def __repr__(self):
        return "<module '%s'>" % self.__name__


def _kbd_intr(c):
    # The unix port's kbd_intr(-1) restores SIGINT's default action (a Ctrl-C would kill the unit);
    # the bridge keeps the interrupt char instead and sends other keys as data, as a board's UART does.
    c = int(c)
    _status(b"K%d\n" % c)


def _stdin_text():
    return sys.stdin


_SYS = ("argv", "version", "version_info", "implementation", "platform", "byteorder", "maxsize", "exit", "stdin",
        "stdout", "stderr", "modules", "print_exception", "path", "ps1", "ps2")  # ESP32_GENERIC's (py/modsys.c)


def _make_sys():
    m = module()
    _set(m, "__name__", "sys")
    out = TextIOWrapper(_sys.stdout, 1)

    def print_exception(e, f=out):
        _print_board_exception(e, f)

    # one console: stdout and stderr are the same UART on a board
    d = {"stdout": out, "stderr": TextIOWrapper(_sys.stdout, 2), "platform": "esp32", "argv": [], "ps1": ">>> ",
         "ps2": "... ", "print_exception": print_exception}
    for k in _SYS:
        _set(m, k, d[k] if k in d else getattr(_sys, k))
    return m


_MICROPYTHON = ("const", "opt_level", "mem_info", "qstr_info", "stack_use", "alloc_emergency_exception_buf",
                "heap_lock", "heap_unlock", "kbd_intr", "RingIO", "schedule")  # ESP32_GENERIC's, in its order


def _make_micropython():
    m = _module("micropython")
    d = {"kbd_intr": _kbd_intr, "alloc_emergency_exception_buf": lambda n: None}
    for k in _MICROPYTHON:
        setattr(m, k, d[k] if k in d else getattr(micropython, k))  # a qstr as key: what dir() finds
    return m


_rom_help = help
# help() with no argument: ports/esp32/help.c (v1.28.0, MIT licence), esp32_help_text
_ESP32_HELP = """Welcome to MicroPython on the ESP32!

For online docs please visit http://docs.micropython.org/

For access to the hardware use the 'machine' module:

import machine
pin12 = machine.Pin(12, machine.Pin.OUT)
pin12.value(1)
pin13 = machine.Pin(13, machine.Pin.IN, machine.Pin.PULL_UP)
print(pin13.value())
i2c = machine.I2C(scl=machine.Pin(21), sda=machine.Pin(22))
i2c.scan()
i2c.writeto(addr, b'1234')
i2c.readfrom(addr, 4)

Basic WiFi configuration:

import network
sta_if = network.WLAN(network.WLAN.IF_STA); sta_if.active(True)
sta_if.scan()                             # Scan for available access points
sta_if.connect("<AP_name>", "<password>") # Connect to an AP
sta_if.isconnected()                      # Check for successful connection

Control commands:
  CTRL-A        -- on a blank line, enter raw REPL mode
  CTRL-B        -- on a blank line, enter normal REPL mode
  CTRL-C        -- interrupt a running program
  CTRL-D        -- on a blank line, do a soft reset of the board
  CTRL-E        -- on a blank line, enter paste mode

For further help on a specific object, type help(obj)
For a list of available modules, type help('modules')"""


def _help(*a):
    # help(module) lists a board's ROM module in its table's order (basics/builtin_help.py looks at the first lines);
    # the unit's are Python modules, whose order is their hash's
    if a and a[0] is _help:
        a = (_rom_help,)  # the builtin's own
    if len(a) == 1 and a[0] is _board.get("micropython"):
        print("object <module 'micropython'> is of type module")
        for k in ("__name__",) + _MICROPYTHON:
            v = getattr(a[0], k)
            print("  %s -- %s" % (k, "<function>" if type(v) in (type(_help), type(_kbd_intr)) else v))
        return
    if not a:
        print(_ESP32_HELP)  # the C text ends with a newline: print gives it
        return
    _rom_help(*a)


# -- the board's os, vfs, io and time (issue 28 item 5) --------------------------------------------
# The ESP32_GENERIC image's modules: os without the unix port's host functions (system, getenv, putenv,
# unsetenv, errno) and without VfsPosix (so no host folder can be mounted), uname() with the image's values;
# vfs and io the same way; time from vutime.py (epoch 2000, int time(), the RTC's clock). Kept apart from
# _Jail/_make_os, which confine paths.

_ESP32_MACHINE = "Generic ESP32 module with ESP32"  # MICROPY_HW_BOARD_NAME " with " MICROPY_HW_MCU_NAME
_VIRTUAL = " (Mausbox virtual unit)"  # in os.uname().machine only: the one place that tells
_OS_GONE = ("system", "getenv", "putenv", "unsetenv", "errno", "VfsPosix", "VfsLfs1", "VfsRom")
_VFS_KEEP = ("mount", "umount", "VfsFat", "VfsLfs2")  # ports/esp32: FAT and littlefs v2
_board = {}  # module name -> the unit's module (os, vfs, io, time, sys, micropython)
_spare = []


def _git_tag():
    return _sys.version.split("MicroPython ")[-1].split(" on ")[0]  # "v1.28.0"


def _build_date():
    return _sys.version.split(" on ")[-1]


def _host_links(real_getenv, real_system, real_time):
    # What the firmware's simulated hardware needs from the host, as closures: code on the unit reaches every
    # function's __globals__, never a closure's cells.
    def getenv(name):
        # The host's settings for this unit (MAUSBOX_*), never the rest of the host's environment.
        return real_getenv(name) if name.startswith("MAUSBOX_") else None

    def die():
        # The reset line (maus/sim/hw.py's watchdog bite): this interpreter ends at once, wherever it is; the
        # bridge starts a new one. The unix port has no os.kill; the shell's parent is this process.
        real_system("kill -9 $PPID")

    def host_ms():
        # The host's clock in ms since 1970, for what a board keeps in hardware (the watchdog's last feed): the
        # unit's time follows its RTC, which `clock set` moves.
        return real_time.time_ns() // 1000000

    return getenv, die, host_ms


_vunit_getenv, _vunit_die, _vunit_host_ms = _host_links(os.getenv, os.system, time)


def _frame_of_bridge(line):
    # replserver, vumachine, ...; and the emulated machine's modules, which on a board are C (no frames): from the
    # bridge's folder (compiled: named by module) or the app's copy of them
    return (line.startswith('  File "%s/' % _shim) or line.startswith('  File "/.vu/')
            or line.startswith('  File "maus.sim.') or line.startswith('  File "%s/' % _PARTS_AT))


def _print_board_exception(exc, f):
    # sys.print_exception as a board prints it: the bridge's own frames are not the unit's.
    try:
        buf = io.StringIO()
        _sys.print_exception(exc, buf)
        text = buf.getvalue()
    except MemoryError:
        _sys.print_exception(exc, f)
        return
    for ln in text.split("\n"):
        if ln and not _frame_of_bridge(ln):
            f.write(ln + "\n")


class _Flash:
    # What vfs.mount() lists at "/": the unit's flash as a board shows it. Not the VfsPosix behind it, whose type
    # would open host files.
    def __repr__(self):
        return "<VfsLfs2>"


_FLASH = _Flash()


def _board_modules():
    from collections import namedtuple

    import vfs as real_vfs

    real_mount, real_umount, posix = real_vfs.mount, real_vfs.umount, real_vfs.VfsPosix
    uos = sys.modules["os"]
    d = uos.__dict__
    for k in _OS_GONE:
        d.pop(k, None)
    v = sys.implementation.version
    uname = namedtuple("", ("sysname", "nodename", "release", "version", "machine"))(
        "esp32", "esp32", "%d.%d.%d" % (v[0], v[1], v[2]), "%s on %s" % (_git_tag(), _build_date()),
        _ESP32_MACHINE + _VIRTUAL)
    d["uname"] = lambda: uname

    def mounts():
        # the mounts as a board lists them: the flash at "/" (a board's littlefs; the host folder behind it, and the
        # firmware's at /.simN, are the bridge's: `mpremote df` reads it), then those code on the unit made
        return [(_FLASH if isinstance(f, posix) else f, p) for f, p in real_mount() if not p.startswith("/.sim")]

    def track():
        _mnt[:] = [p for f, p in mounts() if f is not _FLASH]
        _flash[0] = (_FLASH, "/") in mounts()
        if not _under(_cwd[0], [p for f, p in mounts()]):
            _cwd[0] = "/"  # vfs.c: a umount of the cwd's filesystem puts it back at the root

    def mount(*a, **kw):
        if not a and not kw:
            return mounts()
        if isinstance(a[0] if a else kw.get("fsobj"), posix):
            raise OSError(1)  # EPERM: a host folder is never the unit's
        try:
            return real_mount(*a, **kw)
        finally:
            track()

    def umount(mp):
        if isinstance(mp, str) and mp.startswith("/.sim"):
            raise OSError(22)  # EINVAL, as for a path that is no mount point: the bridge's
        try:
            return real_umount("/" if mp is _FLASH else mp)
        finally:
            track()

    d["mount"], d["umount"] = mount, umount
    m = _module("vfs")
    for k in _VFS_KEEP:
        if hasattr(real_vfs, k) and k != "VfsLfs2":
            m.__dict__[k] = getattr(real_vfs, k)
    m.__dict__["mount"], m.__dict__["umount"] = mount, umount
    lfs, d_vfs = getattr(real_vfs, "VfsLfs2", None), m.__dict__

    def __getattr__(name):
        # vfs.VfsLfs2 (and os.VfsLfs2: modos.c keeps the filesystem types in os too) with stat's times on the unit's
        # clock (vulfs.py), loaded at its first use. (Few new names here: each one interned counts in the REPL
        # server's heap share, and one past a qstr pool's end takes a new pool.)
        if name == "VfsLfs2" and lfs is not None:
            if name not in d_vfs:
                d_vfs[name] = _from_parts("vulfs").make(lfs, time.time_ns)
            return d_vfs[name]
        raise AttributeError(name)

    d_vfs["__getattr__"] = __getattr__
    if d.pop("VfsLfs2", None) is not None:
        d["__getattr__"] = __getattr__
    _board["vfs"] = m
    m = _module("io")
    for k in dir(io):
        if k[0] != "_":
            m.__dict__[k] = getattr(io, k)
    m.__dict__["open"] = open  # _make_os's (builtins.open reads the ROM one): confined to the unit's folder
    _board["io"] = m
    sys.path.append("/.vu")
    try:
        import vutime
    finally:
        sys.path.pop()
    vutime.boot(_vunit_getenv("MAUSBOX_BOOT_US"))
    m = _module("time")
    for k in vutime.NAMES:
        m.__dict__[k] = getattr(vutime, k)
    _board["time"] = m
    m = _module("_vunit")  # for the firmware's simulated hardware (maus/sim/hw.py) only; no board has it
    m.__dict__.update({"getenv": _vunit_getenv, "die": _vunit_die, "host_ms": _vunit_host_ms})
    _board["_vunit"] = m
    impl = sys.implementation
    s = sys.modules["sys"]
    # _mpy stays the unix port's: deploy compiles .mpy files for this interpreter's arch (x86), not xtensawin
    _set(s, "implementation", namedtuple("", ("name", "version", "_machine", "_mpy", "_build",
                                                                 "_thread"))(
        impl.name, impl.version, _ESP32_MACHINE, getattr(impl, "_mpy", 0), "ESP32_GENERIC",
        getattr(impl, "_thread", "GIL")))
    for k in ("os", "sys", "micropython"):
        _board[k] = sys.modules[k]
    _spare.append(_module("os"))  # for _seal, which runs once the shim is gone
    for k in ("vfs", "io", "time", "_vunit"):
        sys.modules[k] = _board[k]


# the simulator's state, not the unit's, and the folder of machine's emulated parts (_PARTS_AT)
_SIM_FILES = (".sim", ".wdt", ".rtcmem", "clock.json", "clock.json.tmp", ".simparts")


def _top_names(path):
    # the path's names, made absolute and normalised ("/.." is "/", as on a board's littlefs)
    if isinstance(path, bytes):
        path = str(path, "utf-8")
    if not path.startswith("/"):
        path = _cwd[0] + "/" + path  # not os.getcwd(): on a filesystem code on the unit mounted, a call of its own
    parts = []
    for c in path.split("/"):
        if c == "..":
            if parts:
                parts.pop()
        elif c and c != ".":
            parts.append(c)
    return parts


_cwd = ["/"]  # the unit's current directory, normalised: kept by its os.chdir
_mnt = []  # the mount points of the filesystems code on the unit mounted (vfs.mount), normalised
_flash = [True]  # the unit's flash is at "/" (code on the unit may umount it, as on a board)


def _under(p, tops):
    for m in tops:
        if p == m or m == "/" or p.startswith(m + "/"):
            return True
    return False


def _theirs(path):
    # The path is on a filesystem code on the unit mounted (or outside any, its flash unmounted): then vfs alone
    # handles it, with the calls a board makes (no jail, no accounting, no hidden files: mpremote's test_errno.sh,
    # run-tests.py's extmod/vfs_*.py). Only a plain path, whose every name vfs matches as normalised here: one
    # with "." or ".." goes to the flash's checks, so that it never reaches the host folder unchecked.
    if not _mnt and _flash[0] or not isinstance(path, (str, bytes)):
        return False
    if isinstance(path, bytes):
        path = str(path, "utf-8")
    names = path.split("/")
    for c in names[1:-1] if path.startswith("/") else names[:-1]:
        if c in ("", ".", ".."):
            return False
    if names[-1] in (".", ".."):
        return False
    p = "/" + "/".join(_top_names(path))
    if p.startswith("/.sim"):
        return False  # the bridge's own mounts (/.simN): always the folder's checks
    return _under(p, _mnt) or not _flash[0]


def _user_mounts(raw_os, raw_open):
    # Each of the unit's os functions (and open) on a path on a filesystem the unit mounted: the real one, as vfs.c
    # gives it; os.chdir keeps _cwd.
    d = _board["os"].__dict__

    def direct(f, raw):
        def call(*a, **kw):
            return (raw if _theirs(a[0] if a else "") else f)(*a, **kw)

        return call

    def mounts_at_top(f, raw):
        # the flash unmounted, "/" lists the mount points (extmod/vfs.c): not the bridge's own (/.simparts, /.simN)
        def call(*a, **kw):
            path = a[0] if a else ""
            if not _theirs(path):
                return f(*a, **kw)
            got = raw(*a, **kw)
            if _top_names(path):
                return got
            sim = lambda n: n[:4] == (b".sim" if isinstance(n, bytes) else ".sim")  # noqa: E731 - no new name
            kept = [e for e in got if not sim(e[0] if isinstance(e, tuple) else e)]  # (read to its end)
            return kept if isinstance(got, list) else iter(kept)  # listdir's list, ilistdir's iterator

        return call

    for k in ("stat", "statvfs", "remove", "unlink", "rmdir", "mkdir"):
        if k in d:
            d[k] = direct(d[k], getattr(raw_os, k))
    for k in ("ilistdir", "listdir"):
        if k in d:
            d[k] = mounts_at_top(d[k], getattr(raw_os, k))
    ren, rren, cd, rcd = d["rename"], raw_os.rename, d["chdir"], raw_os.chdir

    def rename(a, b):
        return (rren if _theirs(a) and _theirs(b) else ren)(a, b)

    def chdir(path):
        (rcd if _theirs(path) else cd)(path)
        _cwd[0] = "/" + "/".join(_top_names(path))

    op = _board["io"].open  # the unit's (builtins.open read as an attribute is the ROM's)

    def open_(path, *a, **kw):
        return (raw_open if _theirs(path) else op)(path, *a, **kw)

    d.update({"rename": rename, "chdir": chdir})
    builtins.open = open_
    _board["io"].__dict__["open"] = open_


def _sim_path(path):
    # path names one of _SIM_FILES (or something inside one) at the top of the unit's folder
    if not isinstance(path, (str, bytes)):
        return False
    parts = _top_names(path)
    return bool(parts) and parts[0] in _SIM_FILES


def _hide_sim_files():
    # The simulator keeps its state in the unit's folder (ROOT/.sim, .wdt, .rtcmem, clock.json): code on the
    # unit neither lists, stats nor opens them, as a board's flash has none. The bridge's modules and the
    # firmware's simulated hardware reach them through _vunit (open, stat, remove, rename).
    uos = _board["os"]
    d = uos.__dict__
    vu = _board["_vunit"].__dict__
    vu.update({"open": open, "stat": d["stat"], "remove": d["remove"], "rename": d["rename"]})

    def hidden(f):
        def call(path="", *a, **kw):
            if _sim_path(path):
                raise OSError(2)  # ENOENT
            return f(path, *a, **kw)

        return call

    for k in ("stat", "remove", "unlink", "rmdir", "mkdir", "chdir"):
        if k in d:
            d[k] = hidden(d[k])
    real_rename, real_ilistdir, real_listdir, real_open = d["rename"], d["ilistdir"], d["listdir"], open

    def rename(a, b):
        if _sim_path(a) or _sim_path(b):
            raise OSError(2)
        return real_rename(a, b)

    def top(path):
        return isinstance(path, (str, bytes)) and not _top_names(path)

    def ilistdir(path=""):
        if not top(path):
            return real_ilistdir(path)
        # read to its end here (an iterator given up early is closed by the GC: docs/micropython-bugs.md)
        return iter([e for e in real_ilistdir(path)
                     if (e[0] if isinstance(e[0], str) else str(e[0], "utf-8")) not in _SIM_FILES])

    def listdir(path=""):
        return [n for n in real_listdir(path) if not (top(path) and
                                                      (n if isinstance(n, str) else str(n, "utf-8")) in _SIM_FILES)]

    def open_(path, *a, **kw):
        if _sim_path(path):
            raise OSError(2)
        return real_open(path, *a, **kw)

    d.update({"rename": rename, "ilistdir": ilistdir, "listdir": listdir})
    builtins.open = open_
    _board["io"].__dict__["open"] = open_


def _seal():
    # Code on the unit reaches this module's globals (any function's __globals__): from here on they hold no
    # way out. `os` becomes the real functions this module still calls, refusing ".." (its own paths are
    # clean); `io` and `builtins` the unit's (builtins.open read as an attribute would be the ROM one); the real
    # import maps the board's module names; the unix port's machine (mem32) goes.
    g = globals()
    ros = g["os"]
    inner, b = _spare[0], _builtins_of(g["builtins"])
    for k in dir(ros):
        if k[0] != "_" and k not in _OS_GONE + ("mount", "umount"):
            inner.__dict__[k] = _clean_paths(getattr(ros, k)) if callable(getattr(ros, k)) else getattr(ros, k)
    g["os"] = inner
    g["io"] = _board["io"]
    rom = g["builtins"]
    for k in dir(rom):
        if k not in ("__class__", "__dict__"):
            _set(b, k, getattr(rom, k))
    for k, v in (("open", open), ("input", input), ("__import__", __import__), ("help", help)):  # the overrides
        _set(b, k, v)
    _board["builtins"] = b
    sys.modules["builtins"] = b
    g["builtins"] = b
    ri = g["_real_import"]

    def real_import(name, *args):
        m = None if len(args) > 3 and args[3] else _board_import(name)
        return m if m is not None else ri(name, *args)

    g["_real_import"] = real_import
    for k in ("_real_machine", "_spare", "_board_modules", "_hide_sim_files", "_user_mounts", "_host_links", "_precount",
              "_pre", "_make_os", "_make_sys", "_make_micropython", "_mount", "_module", "_SYS", "_VFS_KEEP", "_VIRTUAL",
              "_builtins_of",
              "_seal"):
        g.pop(k, None)  # setup only: their code is heap the firmware would otherwise not have


def _builtins_of(rom):
    # builtins as code on the unit sees it: reading an attribute gives the unit's own (the ROM module would give
    # its open, not the confined one); setting one overrides the builtin for every lookup, as on a board
    # (MICROPY_CAN_OVERRIDE_BUILTINS: basics/builtin_override.py). The ROM module stays in a closure's cell.
    class module(_module_type):  # noqa: N801
        def __setattr__(self, k, v):
            setattr(rom, k, v)
            _set(self, k, v)

    return module()


_module_type = module


def _clean_paths(f):
    def call(*a, **kw):
        for x in a:
            if isinstance(x, (str, bytes)) and (".." in x.split("/") if isinstance(x, str) else b".." in x.split(b"/")):
                raise OSError(13)  # EACCES
        return f(*a, **kw)

    return call


def _board_import(name):
    # The board's modules, also after a `del sys.modules[...]`, and under the u-prefixed names that MicroPython
    # still resolves (`import uos`).
    if name[:1] == "u" and name[1:] in _board:
        name = name[1:]
    m = _board.get(name)
    if m is not None and name != "_vunit":
        sys.modules[name] = m
    return m if m is not None and name != "_vunit" else None


_HIDDEN = ("termios",)  # unix-port-only modules: an ESP32 has none of them
_real_import = builtins.__import__


def _import(name, *args):
    if len(args) > 3 and args[3]:
        return _real_import(name, *args)  # a relative import
    if name == "machine" and sys.modules.get("machine") is not _machine:
        sys.modules["machine"] = _machine  # the board's, also after a `del sys.modules[...]`
    if name in _HIDDEN:
        raise ImportError("no module named '%s'" % name)
    if name in ("esp32", "neopixel") and name not in sys.modules:
        _load_parts(name)  # the image's modules: there from power-on, as machine's parts
    board = _board_import(name)
    if board is not None:
        return board
    m = _real_import(name, *args)
    c = sys.modules.get("asyncio.core")
    if c is not None and c.__dict__.get("ticks") is not _host_ticks_ms:
        # asyncio's C task queue (extmod/modasyncio.c) stamps tasks with the interpreter's own clock, the host's: its
        # Python half must read the same one, not the unit's ticks from its reset (vutime), or a task would wait
        # for hours. Only asyncio's own clock: what code on the unit reads is the unit's.
        c.ticks = _host_ticks_ms
    return m


_host_ticks_ms = time.ticks_ms  # the unix port's time: the host's monotonic clock
_parts = {}  # "machine", "uart", "esp32", "neopixel" -> the module loaded for it (vuload.py)


def _load_parts(what="machine"):
    # machine's emulated parts, esp32 and neopixel at the first use of one: vuload.py (in the parts' folder, loaded
    # only then: the REPL server's heap share stays without its code)
    got = _parts.get(what)
    if got is None:
        got = _from_parts("vuload").load(what, _parts, _machine.__dict__, _sys.path, _PARTS_AT)
    return got


def _from_parts(name):
    # a module of the parts' folder (vuload, vulfs), imported for the call at hand only
    path = _sys.path[:]
    _sys.path[:] = [_PARTS_AT]
    try:
        m = __import__(name)
    finally:
        _sys.path[:] = path
    sys.modules.pop(name, None)
    return m


_main_mod = _module("__main__")
_g = _main_mod.__dict__  # the REPL's globals: boot.py, main.py and every command share them
_g["__name__"] = "__main__"
sys.modules["__main__"] = _main_mod
sys.modules["sys"] = _make_sys()
sys.modules["micropython"] = _make_micropython()
sys.modules["os"] = _make_os()
_board_modules()
_hide_sim_files()
_user_mounts(os, io.open)  # io.open: the ROM's open
_real_machine = sys.modules.pop("machine", None) or __import__("machine")
sys.path.append("/.vu")
import vumachine  # noqa: E402

sys.path.pop()
_machine = _module("machine")
_machine.__dict__.update(vumachine.exports(_status, _real_machine, _vunit_getenv, lambda what: _load_parts(what)))
vumachine._fs = vumachine.vutime._fs = _board["_vunit"]  # the RTC's files, hidden from the unit's own os
del vumachine
sys.modules.pop("vumachine", None)
sys.modules.pop("vutime", None)
sys.modules["machine"] = _machine
os.umount("/.vu")  # out of the unit's sight: `os.listdir("/")` and `mpremote rm -r :/` see no trace
builtins.__import__ = _import


def _input(prompt=""):
    # input() as a board's readline gives it: the prompt, the keys echoed, Enter ends the line.
    if prompt:
        _sys.stdout.write(prompt)
    line = bytearray()
    while True:
        c = _inp.read(1)
        if not c or c == b"\x04" and not line:
            raise EOFError
        c = c[0]
        if c in (13, 10):
            _sys.stdout.write("\n")
            return str(line, "utf-8")
        if c in (8, 127):
            if line:
                line.pop()
                _sys.stdout.write("\b \b")
        elif c == 3:
            raise KeyboardInterrupt
        elif c >= 32:
            line.append(c)
            _out.write(bytes((c,)))


builtins.input = _input
builtins.help = _help


def _unlock():
    # Code interrupted inside heap_lock() leaves the heap locked; a board's REPL forces it open
    # (pyexec.c sets gc_lock_depth to 0). Lock and unlock once to learn the depth: past 0 it would wrap.
    micropython.heap_lock()
    n = micropython.heap_unlock()
    while n > 0:
        n = micropython.heap_unlock()


def _print_exception(exc):
    # As a board prints it, without the bridge's frames.
    _print_board_exception(exc, _sys.stdout)


def _leftover():
    # Console input the code did not read: it goes back to the REPL, as a board's UART buffer would.
    got = bytearray()
    while _inpoll.poll(0):
        b = _inp.read(1)
        if not b:
            break
        got.extend(b)
    return got


def _run(kind, cid, src, name):
    # Compile and run one block; then report, print any error, report again.
    exc = None
    forced = False
    try:
        try:
            # From S on a Ctrl-C is for this code: no retry here, which would swallow it.
            _ctl.write(b"S%d\n" % cid)
            _late[0] = False
            exec(compile(src, name, "single" if kind == "s" else "exec"), _g)
        except SystemExit:
            forced = True
        except BaseException as e:  # noqa: B036 - the REPL reports everything, as a board does
            exc = e
    except KeyboardInterrupt as e:  # a second Ctrl-C while the first was being handled
        exc = exc or e
    st = 0
    left = b""
    late = False
    while st < 5:
        try:
            if st == 0:
                _unlock()
                _status(b"E%d K\n" % cid if isinstance(exc, KeyboardInterrupt) else b"E%d\n" % cid)
                st = 1
            if st == 1:
                _wait(b"e")
                st = 2
            if st == 2:
                st = 3
                if exc is not None:
                    _print_exception(exc)
            if st == 3:
                left = _leftover()
                st = 4
            if st == 4:
                _unlock()
                if forced:
                    _status(b"R%d\n" % cid)
                else:
                    late = late or _late[0]
                    _late[0] = False
                    _status(b"D%d %s%d\n" % (cid, b"L " if late else b"", len(left)) + left)
                st = 5
        except KeyboardInterrupt:
            # The bridge sent it while the code ran, and it landed after the code's end (at st 0 or in the
            # wait for `e`; the pong, and so `e`, comes only after it): a board would still have it pending
            # for whoever reads the console next (main.py after boot.py, the REPL), so D says so.
            late = True
    global _failed
    _failed = exc is not None
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
    # pyexec.c: MICROPY_BANNER_NAME_AND_VERSION "; " MICROPY_BANNER_MACHINE, as the ESP32_GENERIC image prints it
    return "MicroPython %s on %s; %s" % (_git_tag(), _build_date(), _ESP32_MACHINE)


def _complete(text):
    # py/repl.c mp_repl_autocomplete for the dotted name at the end of the line: b"1" + the text to
    # insert, b"N" + the candidates (the bridge prints them in columns), or b"" for none.
    s = str(text, "utf-8")
    i = len(s)
    while i > 0 and (s[i - 1].isalpha() or s[i - 1].isdigit() or s[i - 1] in "._"):
        i -= 1
    parts = s[i:].split(".")
    obj = None
    for p in parts[:-1]:
        try:
            obj = _g[p] if obj is None and p in _g else getattr(obj if obj is not None else builtins, p)
        except (AttributeError, KeyError):
            return b""
    word = parts[-1]
    if obj is None and s.startswith("import "):
        names = [k for k in sys.modules if "." not in k] + ["machine", "micropython", "sys"]
    else:
        names = dir(obj) if obj is not None else list(_g) + dir(builtins)
    found = sorted(set(n for n in names if n.startswith(word) and (word or n[:1] != "_")))
    if not found:
        if i == 0 and word and "import ".startswith(word):
            return b"1" + "import "[len(word):].encode()
        return b""
    common = found[0]
    for n in found[1:]:
        while not n.startswith(common):
            common = common[:-1]
    if len(found) == 1 or len(common) > len(word):
        return b"1" + common[len(word):].encode()
    return b"N" + " ".join(found).encode()


_rx = bytearray()  # the command stream read so far
_failed = False  # the last code run raised


def _command():
    # The next command as (kind, id, source), or None at the end of input.
    while True:
        try:
            if not _poll.poll(200):
                continue
            line = _cmd.readline()
            if not line:
                return None
            if line[:1] == b"c":
                n = int(line[1:])
                text = _cmd.read(n)
                try:
                    ans = _complete(text)
                except Exception:  # noqa: BLE001 - completion never breaks the REPL
                    ans = b""
                _status(b"C%d\n" % len(ans) + ans)
                continue
            if line[:1] not in (b"s", b"x"):
                continue  # a stray acknowledgement
            kind = chr(line[0])
            cid, n = line[1:].split()
            src = _cmd.read(int(n))
            return kind, int(cid), src
        except KeyboardInterrupt:
            pass  # between commands a board's REPL has no interrupt armed: the Ctrl-C is dropped


def _main():
    # boot.py, then main.py (friendly mode), the banner, the commands.
    todo = ["boot.py", "main.py"] if _mode == "f" else ["boot.py"]
    forced = False
    booted = False
    while True:
        try:
            while todo and not forced:
                name = todo.pop(0)
                forced = _run_file(name)
                if name == "boot.py" and _failed:
                    todo = []  # as pyexec (ports/esp32/main.c): main.py runs only after a boot.py that ran through
            if forced:
                return  # _run reported R0: the bridge soft-resets
            if not booted:
                _status(b"B" + _banner().encode() + b"\n")
                booted = True
            while True:
                cmd = _command()
                if cmd is None:
                    return
                if _run(cmd[0], cmd[1], cmd[2], "<stdin>"):
                    return
        except KeyboardInterrupt:
            pass


_seal()
# _main() is called by replboot.py once this module's import has ended: the module's own code (and with it the
# setup functions _seal dropped) is then garbage, not heap held for as long as the unit runs
