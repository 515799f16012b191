"""Running a power-cut campaign of tests/fw/powercut.py on the MicroPython unix port."""

from __future__ import annotations

import re

from conftest import FWTESTS, run_micropython


def campaign(*args: str) -> dict[str, int]:
    # A generous heap holds the write journal (test scaffolding; the firmware itself runs in the
    # 96 KB dual-run tests). No timeout of its own: a minute of CPU took over 4 minutes at a load of 10.
    proc = run_micropython(FWTESTS / "powercut.py", *args, heapsize="32m")
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    got = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", out)}
    assert "first=None" in out, out
    return got
