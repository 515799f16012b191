# mypy: ignore-errors
# The virtual unit's flash (run UNDER MicroPython by replserver.py): its folder holds what the board's
# littlefs partition holds, with its capacity and its block accounting. ESP32_GENERIC (MicroPython 1.28,
# ports/esp32/partitions-4MiBplus.csv, main.c): the app ends at 0x200000 and the "vfs" partition is the rest of
# a 4 MiB flash, 2 MiB; esp32_partition.c: 4 KiB blocks; vfs_lfsx.c: cache 4*32 = 128 bytes, so littlefs 2.11's
# inline_max = min(cache_size, attr_max, block_size/8) = 128 (lib/littlefs/lfs2.c lfs2_init).
# Blocks in use: the root's metadata pair (2), a pair per directory, a file over 128 bytes its CTZ skip-list
# blocks (lfs2_ctz_index), and more pairs as directories grow (fitted: ~1,500 bytes of entries a pair, an entry
# 23 bytes + its name + its inline data, or 20 for a file's CTZ or a directory's pair). A running count: counted
# once at boot (by the bridge, in CPython, while this interpreter starts: host_count), then changed by each
# write, remove, rename, mkdir and rmdir. MAUSBOX_FLASH_BYTES: another size.
import io
import os

BS = 4096
CAP = max(4, int(os.getenv("MAUSBOX_FLASH_BYTES") or 0x200000) // BS)
_n = [0, 0, 0, 0]  # blocks of files and directories' pairs, bytes of directory entries, directories, extra pairs
_raw = []  # open and rename as the folder's jail gives them, without the accounting


def blocks(n):
    # lfs2_ctz_index: block i > 0 starts with ctz(i) + 1 pointers of 4 bytes
    if n <= 128:
        return 0
    b = BS - 8
    i = (n - 1) // b
    if i:
        i = (n - 1 - 4 * (bin(i - 1).count("1") + 2)) // b
    return i + 1


def _ent(p, n):
    return 23 + len(p) - p.rfind("/") - 1 + (n if 0 <= n <= 128 else 20)


def count(d, n, cap, ls, st):
    # Adds the blocks of folder d (the unit's path, ending in "/") and all under it to n, entry by entry as
    # _add, _ent and _meta would (inlined: ~30 us a file through the helpers was most of a boot with 2,000 logs).
    # ls(d): (name, type, ...) entries, st(path): its stat. The host's bridge runs the same count in CPython
    # while this interpreter starts (host_count), so that a boot with 2,000 logs pays no stat for each here.
    top = d == "/"
    for e in ls(d):
        c = e[0]
        p = d + c
        if top and not _mine(p):
            continue
        if e[1] & 0x4000:
            n[0] += 2
            n[2] += 1
            n[1] += 43 + len(c)
            _spill(n, cap)
            count(p + "/", n, cap, ls, st)
            continue
        s = st(p)[6]
        if s <= 128:
            m = 23 + len(c) + s
        else:
            n[0] += blocks(s) if s > BS - 8 else 1
            m = 43 + len(c)
        n[1] += m
        if n[1] // 1500 > n[3]:
            _spill(n, cap)


def host_count(root, cap, links_done=None):
    """CPython (the bridge, mausbox.sim.serial): [blocks, entry bytes, directories, extra pairs] of the folder
    root as the interpreter's own count would find them (the same entries, in the directory's order). First the
    folders are read and links_done([(path, key, link names)]) is given their large ones' links, as replserver's
    _Jail.links keeps them; then one stat a file."""
    import time

    now = int(time.time())
    tree = {}
    links = []

    def read(d):
        s = os.stat(root + d)  # before its entries, as _Jail.links: a link planted meanwhile changes it
        key = (s.st_ino, s.st_size, int(s.st_mtime), int(s.st_ctime))
        out = []
        found = []
        with os.scandir(root + d) as it:
            for e in it:
                t = 0xA000 if e.is_symlink() else 0x4000 if e.is_dir(follow_symlinks=False) else 0x8000
                out.append((e.name, t))
                if t == 0xA000:
                    found.append(e.name)
        tree[d] = out
        if len(out) >= 64 and max(key[2], key[3]) <= now - 2:  # kept as _Jail.links keeps them
            links.append((d, key, found))
        for c, t in out:
            if t == 0x4000 and (d != "/" or _mine(d + c)):
                read(d + c + "/")

    read("/")
    if links_done is not None:
        links_done(links)
    n = [0, 0, 0, 0]
    count("/", n, cap, tree.__getitem__, lambda p: os.stat(root + p))
    return n


def _mine(p):
    # the simulator's own notes (/.sim) and its mounts (/.vu, /.simN) are not the unit's
    t = (p + "/").split("/")[1]
    return t != ".vu" and not (t[:4] == ".sim" and (t[4:] + "0").isdigit())


def _add(p, n, k):
    # k = 1: the file of n bytes (n = -1: a directory) at p is there; k = -1: it went
    if not _mine(p):
        return
    _n[0] += k * (2 if n < 0 else blocks(n))
    _n[2] += k * (n < 0)
    _meta(k * _ent(p, n))


def _meta(d):
    _n[1] += d
    _spill(_n, CAP)


def _spill(n, cap):
    # a directory's entries spill into a further pair about every 1,500 bytes; on a full flash littlefs compacts
    # the pair in place instead (lfs2_dir_splittingcompact: a split that meets ENOSPC is given up)
    w = n[1] // 1500
    if w > n[3]:
        w = max(n[3], min(w, (cap - 2 - n[0]) // 2))
    n[3] = w


def _size(p):
    # -> the entry's size, -1 for a directory, None when it is not there
    try:
        st = os.stat(p)
    except OSError:
        return None
    return -1 if st[0] & 0x4000 else st[6]


def used():
    # what littlefs allocates from; statvfs says 2 more per directory (lfs2_fs_traverse counts its pair twice)
    return 2 + _n[0] + 2 * _n[3]


_given = [None]  # the bridge's count to come (hook): taken when the accounting is first needed


def _need():
    # the count, before the first change is accounted: the folder is then as the bridge counted it
    f = _given[0]
    if f is not None:
        _given[0] = None
        got = f()
        if got is None:
            count("/", _n, CAP, os.ilistdir, os.stat)
        else:
            _n[:] = got


def hook(d, jp, open_, given=None):
    # The os module's file functions (d: already confined to the folder by jp) and open, with the accounting.
    # given(): the counts the bridge takes of the folder while this interpreter starts (host_count), or None:
    # counted here. Asked for at the first write, remove, rename, mkdir or statvfs.
    _given[0] = given or (lambda: None)
    _raw.extend((open_, d["rename"]))

    def jq(path):
        p = jp(path)
        return p if isinstance(p, str) else str(p, "utf-8")

    def one(f, k):
        def g(path):
            _need()
            p = jq(path)
            n = _size(p) if k < 0 else -1
            if k > 0 and _size(p) is None and used() + 2 > CAP:
                raise OSError(28)  # ENOSPC: a directory's pair
            f(p)
            if n is not None:
                _add(p, n, k)

        return g

    for k, v in (("remove", -1), ("unlink", -1), ("rmdir", -1), ("mkdir", 1)):
        if k in d:
            d[k] = one(d[k], v)
    ren = d["rename"]

    def rename(a, b):
        _need()
        a, b = jq(a), jq(b)
        n, m = _size(a), _size(b)
        ren(a, b)
        if m is not None and a != b:
            _add(b, m, -1)
        if n is not None:
            _add(a, n, -1)
            _add(b, n, 1)

    def statvfs(path="/"):
        _need()
        os.stat(jq(path))  # ENOENT for a path that is not there, as on the board
        free = max(0, CAP - used() - 2 * _n[2])
        return (BS, BS, CAP, free, free, 0, 0, 0, 0, 255)

    def open(path, mode="r", *a, **kw):
        if not isinstance(path, (str, bytes)) or not [c for c in mode if c in "wax+"]:
            return open_(path, mode, *a, **kw)
        _need()
        p = jq(path)
        s = _size(p)
        f = open_(p, mode, *a, **kw)
        if not _mine(p):
            return f
        if s is None:
            _add(p, 0, 1)
            s = 0
        return _File(f, p, s, "a" in mode, "w" in mode)

    d["rename"] = rename
    d["statvfs"] = statvfs
    return open


class _File(io.IOBase):
    # A file open for writing. As littlefs: a write past the capacity raises OSError(28) and writes nothing, and
    # the file stays as of its last sync (flush or close; littlefs never syncs a file whose write failed).
    def __init__(self, f, p, s, a, t):
        self.f = f
        self.p = p
        self.s = s  # its size at the last sync: what littlefs has committed
        self.n = 0 if t else s  # its size now
        self.a = a  # append: every write lands at the end
        self.t = t  # truncated by the open, not synced since: the old blocks stay until the sync
        self.e = 0  # 1: a write failed; 2: closed
        self.c = blocks(s)  # the blocks charged for it
        if t:
            _meta(_ent(p, 0) - _ent(p, s))

    def _set(self, n, w):
        # charge the file at n bytes; w: written since the last sync (littlefs copies an outlined file's last
        # block before it appends; the committed blocks stay in use until the sync)
        c = blocks(n) + (blocks(self.s) if self.t else w and self.s > 128)
        if c > self.c and used() + c - self.c > CAP:
            return False
        _n[0] += c - self.c
        _meta(_ent(self.p, n) - _ent(self.p, self.n))
        self.c = c
        self.n = n
        return True

    def write(self, b):
        if self.e:
            raise OSError(28 if self.e == 1 else 9)
        n = (self.n if self.a else self.f.tell()) + len(b.encode() if isinstance(b, str) else b)
        if not self._set(max(n, self.n), True):
            self._fail()
            raise OSError(28)
        return self.f.write(b)

    def _fail(self):
        # back to the last sync: the bytes since then never reach the flash
        self.e = 1
        self.f.close()
        s = 0 if self.t else self.s
        if self.n > s:
            q = self.p + ".vf~"
            with _raw[0](self.p, "rb") as r, _raw[0](q, "wb") as w:
                buf = bytearray(512)
                k = s
                while k > 0:
                    i = r.readinto(buf)
                    if not i:
                        break
                    w.write(memoryview(buf)[:min(i, k)])
                    k -= i
            _raw[1](q, self.p)
        self.t = False
        self.s = s
        self._set(s, False)

    def flush(self):
        if not self.e:
            self.f.flush()
            self.s = self.n
            self.t = False
            self._set(self.n, False)

    def close(self):
        if not self.e:
            self.flush()
            self.f.close()
        self.e = 2

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def __getattr__(self, k):
        return getattr(self.f, k)
