"""Where a firmware script's MemoryError comes from, without changing a line of it: `python bench/memerror_site.py
SCRIPT [ARGS...] [--budget NAME]`, SCRIPT a tests/fw module run as the harness runs it (tests/conftest.py
run_micropython: the same compiled tree, heap cap and environment).

A MemoryError at a crowded moment depends on the heap's layout, and any change to the code under test (a print, a
try around it) moves the layout and hides it. This runs the script unchanged on the debug build of the same
MicroPython (mausbox.mpbuild --debug: the same code, with symbols) under gdb. For each failed allocation it prints
the size, the C frames that asked for it, and the Python frames the error went up through (their file, line and
function, as the traceback records them; firmware modules are compiled without line tables, so their line reads 1).
It is a development tool, not a `make bench` figure, and it needs gdb. How issue 27's last MemoryError was found:
a module import by the simulator, not the firmware.

    python bench/memerror_site.py pullpeak mg-6p-ties mg 25 --budget board
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "fw")]

GDB = """set pagination off
set print thread-events off
handle SIGINT nostop noprint pass
break m_malloc_fail
commands
silent
printf "MEMERROR-FAIL %u\\n", num_bytes
bt 12
continue
end
break mp_obj_exception_add_traceback
commands
silent
printf "MEMERROR-TB %s:%d %s\\n", qstr_str(file), line, qstr_str(block)
continue
end
run
"""


def sites(out: str) -> list[tuple[int, list[str], list[str]]]:
    """(bytes, C functions, Python frames innermost first) for each failed allocation in gdb's output."""
    found = []
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"MEMERROR-FAIL (\d+)$", lines[i])
        i += 1
        if not m:
            continue
        c_frames, py = [], []
        while i < len(lines) and lines[i].startswith("#"):
            f = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*?\)(?: at (\S+))?", lines[i])
            if f:
                c_frames.append(f.group(1) + (f" ({f.group(2)})" if f.group(2) else ""))
            i += 1
        while i < len(lines) and lines[i].startswith("MEMERROR-TB "):
            py.append(lines[i][len("MEMERROR-TB "):])
            i += 1
        found.append((int(m.group(1)), c_frames, py))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("script", help="a tests/fw module (its name, or its path)")
    ap.add_argument("args", nargs="*")
    ap.add_argument("--budget", help="the heap the harness gives a file held to this budget (e.g. board)")
    a = ap.parse_args()
    if shutil.which("gdb") is None:
        print("memerror_site: needs gdb (apt-get install gdb)", file=sys.stderr)
        return 1
    import conftest
    from mausbox.mpbuild import BuildError, ensure_debug

    try:
        exe = ensure_debug(log=lambda m: print(m, file=sys.stderr))
    except BuildError as e:
        print(f"memerror_site: {e}", file=sys.stderr)
        return 1
    name = Path(a.script).stem
    argv, env = conftest.mpy_command(conftest.FWTESTS / f"{name}.py", *a.args, budget=a.budget)
    with tempfile.TemporaryDirectory() as tmp:
        cmds = Path(tmp) / "cmds.gdb"
        cmds.write_text(GDB)
        argv = ["gdb", "-q", "-batch", "-x", str(cmds), "--args", str(exe), *argv[1:]]  # the harness's, on the debug build
        p = subprocess.run(argv, capture_output=True, text=True, env=env, errors="replace")
    out = p.stdout + p.stderr
    found = sites(out)
    tail = [ln for ln in out.splitlines() if not ln.startswith(("MEMERROR-", "#", "Breakpoint", "["))][-5:]
    print(f"{name} {' '.join(a.args)}: {len(found)} failed allocation(s); the script's last lines:")
    for ln in tail:
        print("  | " + ln)
    for n, (size, c_frames, py) in enumerate(found, 1):
        print(f"\n{n}. {size} bytes, asked for by:")
        for f in c_frames[1:8]:  # [0] is m_malloc_fail itself
            print("   C  " + f)
        for f in py:
            print("   py " + f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
