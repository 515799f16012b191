# mypy: ignore-errors
# Run UNDER MicroPython by replserver.py, from the parts' folder (unitproc.parts_dir), at the first use of the unit's
# vfs.VfsLfs2. littlefs stamps a file's mtime with the interpreter's C clock (extmod/vfs_lfsx.c lfs_get_mtime:
# mp_hal_time_ns), which on the unix port is the host's since 1970 (ports/unix/unix_mphal.c); on a board it is the
# RTC's, the clock time.time() reads (since 2000). So the unit's VfsLfs2 is the interpreter's, with stat's times moved
# to the unit's clock (its time: the host's plus the RTC's offset, less the epochs' 946,684,800 s). A class of its own
# around the native object, not a subclass: extmod/vfs.c would call a subclass's native import_stat on the instance
# (and read its times unconverted); an object without the VFS protocol gets every call, stat too, through its methods.
import time  # the unit's (vutime.py)

_NS = 1000000000


def make(real, host_ns):
    """-> the unit's VfsLfs2 around the interpreter's `real` one; host_ns: the unix port's time.time_ns."""

    class VfsLfs2:
        mkfs = staticmethod(real.mkfs)

        def __init__(self, *args, **kw):
            self._fs = real(*args, **kw)

        def __getattr__(self, name):  # open, ilistdir, mkdir, remove, rename, rmdir, statvfs, mount, ...
            return getattr(self._fs, name)

        def stat(self, path):
            st = self._fs.stat(path)
            if not st[8]:
                return st  # no mtime stored (mtime=False when written): 0, as on a board
            h = host_ns()
            d = (time.time_ns() - h + _NS // 2) // _NS  # the unit's clock less the host's, whole seconds
            return st[:7] + (st[7] + d, st[8] + d, st[9] + d)

    return VfsLfs2
