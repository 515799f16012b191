"""Stand-ins that let the firmware's pure modules import under CPython.

Firmware code writes `from micropython import const` like micropython-lib does; on CPython there is
no such module, so the host and the tests install this one. Only what pure modules use is here.
"""

from __future__ import annotations

import sys
import types


def _identity(f):
    return f


def install() -> None:
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
