"""Stand-ins that let the firmware's pure modules import under CPython.

Firmware code writes `from micropython import const` like micropython-lib does; on CPython there is
no such module, so the host and the tests install this one. Only what pure modules use is here.

The firmware lets a module go after its moment and imports it afresh the next time (maus.moment), as
it must on the board. CPython would search its path and read the file again at each of those imports (most of
the time of a firmware test under CPython), so `install` also puts a finder first that remembers where each
maus module is and its compiled code (checked against the file's size and mtime). Every import still runs the
module's code in a new module object, so the firmware behaves exactly as without it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import types


class _Loader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, codes: dict, stamp: tuple | None = None):
        super().__init__(fullname, path)
        self._codes = codes
        self._stamp = stamp  # (mtime_ns, size) as the finder found the file just now, or None

    def get_code(self, fullname):  # type: ignore[override]
        stamp = self._stamp
        if stamp is None:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size)
        hit = self._codes.get(self.path)
        if hit is None or hit[0] != stamp:
            hit = self._codes[self.path] = (stamp, super().get_code(fullname))
        return hit[1]


class FirmwareFinder:
    """Finds maus and maus.* from memory after the first time (module docstring)."""

    def __init__(self) -> None:
        self._where: dict = {}  # (name, search path) -> (file, package search locations or None)
        self._codes: dict = {}  # file -> ((mtime_ns, size), code object)

    def find_spec(self, name, path=None, target=None):
        if name != "maus" and not name.startswith("maus."):
            return None
        key = (name, tuple(sys.path if path is None else path))
        hit = self._where.get(key)
        stamp = None
        if hit is not None:
            try:  # one stat: the file is still there, and the loader's check of its code
                st = os.stat(hit[0])
                stamp = (st.st_mtime_ns, st.st_size)
            except OSError:
                hit = None
        if hit is None:
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.origin is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
                return None  # not found, or not a plain source file: the usual finders decide
            hit = self._where[key] = (spec.origin, spec.submodule_search_locations)
        return importlib.util.spec_from_file_location(name, hit[0], loader=_Loader(name, hit[0], self._codes, stamp),
                                                      submodule_search_locations=hit[1])


def _identity(f):
    return f


def install() -> None:
    if not any(isinstance(f, FirmwareFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, FirmwareFinder())
    if "micropython" in sys.modules:
        return
    m = types.ModuleType("micropython")
    m.const = lambda x: x  # type: ignore[attr-defined]
    m.native = _identity  # type: ignore[attr-defined]
    m.viper = _identity  # type: ignore[attr-defined]
    m.heap_lock = lambda: 0  # type: ignore[attr-defined]
    m.heap_unlock = lambda: 0  # type: ignore[attr-defined]
    m.schedule = lambda f, arg: f(arg)  # type: ignore[attr-defined]
    m.alloc_emergency_exception_buf = lambda n: None  # type: ignore[attr-defined]
    sys.modules["micropython"] = m
