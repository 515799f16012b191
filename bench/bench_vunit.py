"""The virtual unit against other projects' own test suites, as a board would be tested; and four units
pulled at once.

- MicroPython's `tests/run-tests.py`, unmodified, on `basics/`, `micropython/`, `extmod/`, `float/` and
  `stress/`: once against the virtual unit's pty (`-t /dev/pts/N`, through pyboard.py), once against the bare
  unix binary it runs on. Pass and fail counts for each, and each test that fails on the pty but not bare
  (docs/vunit.md lists them with their causes).
- mpremote's own suite (`tools/mpremote/tests/run-mpremote-tests.sh`), unmodified: bare `$MPREMOTE`
  auto-detects the running unit through the venv's port list. Passes, and each test that failed.
- `mausbox logs pull --port A --port B --port C --port D` of four units against one `--port A`: seconds.

Upstream's tests are not part of this repository: they come from MicroPython's repository at the pinned
tag, as a git directory (`MAUSBOX_UPSTREAM_MICROPYTHON`, default the search tool's mirror
/work/.mirror/micropython+micropython/repo), unpacked once into ~/.cache/mausbox/upstream-v1.28.0.
Without it the first two figures are skipped (printed as `-1`).

    python bench/bench_vunit.py [--suites] [DIR ...]   # --suites: only the two suites; DIRs: only these
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "host"), str(HERE.parent / "firmware")]

import mausbox  # noqa: E402,F401  (installs the micropython shim)
from mausbox.heapbudget import BOARD_HEAP, SIM_SHARE  # noqa: E402
from mausbox.mpbuild import VERSION, cache_dir, micropython_binary  # noqa: E402
from mausbox.sim.run import DEFAULT_HEAP  # noqa: E402
from mausbox.sim.serial import SerialUnit  # noqa: E402

TAG = f"v{VERSION}"
MIRROR = os.environ.get("MAUSBOX_UPSTREAM_MICROPYTHON", "/work/.mirror/micropython+micropython/repo")
# micropython-lib (a submodule of MicroPython): its unittest, which run-tests.py puts on the bare binary's path and
# a board gets with `mpremote mip install unittest`
LIB_MIRROR = os.environ.get("MAUSBOX_UPSTREAM_MICROPYTHON_LIB", "/work/.mirror/micropython+micropython-lib/repo")
UNITTEST = "lib/micropython-lib/python-stdlib/unittest"
BIN = Path(sys.executable).parent


def upstream() -> Path | None:
    """tests/ and tools/ of MicroPython at the pinned tag (and micropython-lib's unittest at the submodule's commit,
    when that mirror is there), unpacked from git directories, or None."""
    dest = cache_dir() / f"upstream-{TAG}"
    if not (dest / "tests" / "run-tests.py").is_file():
        if not Path(MIRROR).exists():
            return None
        tmp = Path(tempfile.mkdtemp(dir=cache_dir()))
        arch = subprocess.run(["git", f"--git-dir={MIRROR}", "archive", TAG, "tests", "tools"], capture_output=True)
        if arch.returncode != 0:
            shutil.rmtree(tmp)
            return None
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=arch.stdout, check=True)
        tmp.rename(dest)
    if not (dest / UNITTEST).is_dir() and Path(LIB_MIRROR).exists():
        sub = subprocess.run(["git", f"--git-dir={MIRROR}", "ls-tree", TAG, "lib/micropython-lib"],
                             capture_output=True, text=True).stdout.split()
        arch = subprocess.run(["git", f"--git-dir={LIB_MIRROR}", "archive", "--prefix=lib/micropython-lib/",
                               sub[2] if len(sub) > 2 else "HEAD", "python-stdlib/unittest"], capture_output=True)
        if arch.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(dest)], input=arch.stdout, check=True)
    return dest


def install_unittest(tree: Path, root: Path) -> None:
    """`mpremote mip install unittest` on the unit: the package in its /lib, compiled to .mpy as mip installs it
    (the index's files are .mpy for the device's version), so importing it does not compile its source in the unit's
    heap (with machine's emulated parts loaded, extmod/machine1.py ran out of memory there)."""
    from mausbox.build import compile_file

    src = tree / UNITTEST / "unittest"
    if src.is_dir():
        dest = root / "lib" / "unittest"
        dest.mkdir(parents=True)
        for f in sorted(src.glob("*.py")):
            if compile_file(f, dest / (f.stem + ".mpy"), march=None, shown=Path(f.name)) is not None:
                shutil.copyfile(f, dest / f.name)  # no compiler: the source, as before


HEAP = str(BOARD_HEAP + SIM_SHARE["repl"])  # a board's heap for the tests, the REPL server's share on top (a board's is C)
DIRS = ("basics", "micropython", "extmod", "float", "stress")


def run_tests(tree: Path, instance: list[str], env: dict, d: str, results: Path) -> tuple[int, int, list[str]]:
    """(passed, skipped, failed tests) as run-tests.py counts them on one test directory."""
    proc = subprocess.run([sys.executable, "run-tests.py", *instance, "-r", str(results), "-d", d],
                          cwd=tree / "tests", capture_output=True, text=True, env=env, timeout=3600)
    out = proc.stdout

    def count(pattern: str) -> int:
        # tests/test_utils.py prints "N tests passed", "N tests skipped: ...", "N tests skipped because they
        # are too large: ...", "N tests failed: ..." (a line is left out when N is 0)
        return sum(int(n) for n in re.findall(r"^(\d+) tests? " + pattern, out, re.M))

    failed = re.findall(r"^\d+ tests? failed: (.*)$", out, re.M)
    return count("passed$"), count("skipped"), sorted(failed[0].split()) if failed else []


def mpremote_suite(tree: Path, env: dict) -> tuple[int, int, list[str]]:
    # As upstream runs it: mpremote's own lines are block-buffered into the pipe, so they come after the
    # device's output in the expected files; PYTHONUNBUFFERED (set on some machines) reorders them.
    env = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.run(["bash", str(tree / "tools" / "mpremote" / "tests" / "run-mpremote-tests.sh")],
                          capture_output=True, text=True, env=env, timeout=1800)
    results = re.findall(r"(test_\w+\.sh): (OK|FAIL|CRASH)", proc.stdout)
    bad = [name for name, r in results if r != "OK"]
    return sum(r == "OK" for _, r in results), len(results), bad


def make_logs(root: Path, n: int, records: int, seed: int) -> None:
    """n finished game logs of `records` records each, written by this unit (its machine.unique_id())."""
    import random

    from maus.log import writer as gamelog
    from mausbox.sim.unitproc import unit_id

    rng = random.Random(seed)
    from mausbox.sim.run import prepare_root

    prepare_root(root)  # the firmware as `mausbox sim` lays it out: the app and its host service run
    (root / "logs").mkdir(parents=True)
    uid = unit_id(root)
    for i in range(n):
        lines = [gamelog.encode(0, 0, "game_start", {"v": 1, "game": "mg", "variant": None, "players": [],
                                                   "board": "sim", "unit": uid, "fw": "0.1", "settings": {},
                                                   "wall": None, "ticks": 0})]
        t = 0
        for seq in range(1, records):
            t += rng.randrange(50, 3000)
            lines.append(gamelog.encode(seq, t, "press", {"player": rng.randrange(1, 5), "us": rng.randrange(10**6)}))
        lines.append(gamelog.encode(records, t + 10, "game_end", {"scores": {}, "winners": [], "breakdown": {},
                                                                  "why": "bench"}))
        (root / "logs" / ("%05d-mg.jsonl" % (i + 1))).write_bytes(b"".join(lines))


def pull_seconds(ports: list[str], store: Path, env: dict) -> float:
    t0 = time.monotonic()
    proc = subprocess.run([str(BIN / "mausbox"), "logs", "pull", *[a for p in ports for a in ("--port", p)],
                           "--store", str(store), "--json"], capture_output=True, text=True,
                          env=env, timeout=600)
    dt = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"logs pull failed ({proc.returncode}): {proc.stderr[-2000:]}{proc.stdout[-2000:]}")
    return dt


def main(argv: list[str]) -> int:
    suites_only = "--suites" in argv
    dirs = [a for a in argv if not a.startswith("-")] or list(DIRS)
    mpremote = not [a for a in argv if not a.startswith("-")]
    tree = upstream()
    exe = micropython_binary()
    assert exe is not None
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(t / "data")  # the registry: for the units started here and the tools
        env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
        # run-tests.py's .exp/.out of each failure: kept in MAUSBOX_VUNIT_RESULTS if set
        res = Path(os.environ.get("MAUSBOX_VUNIT_RESULTS") or t)
        if tree is not None:
            for d in dirs:
                bare = run_tests(tree, [], dict(env, MICROPY_MICROPYTHON=exe), d, res / f"bare-{d}")
                (t / f"rt-{d}").mkdir()
                install_unittest(tree, t / f"rt-{d}")
                with SerialUnit(t / f"rt-{d}", heapsize=HEAP) as u:
                    assert u.pty_path
                    pty = run_tests(tree, ["-t", u.pty_path], env, d, res / f"pty-{d}")
                for kind, (ok, skip, bad) in (("bare", bare), ("pty", pty)):
                    print(f"vunit.run_tests.{d}.{kind}.passed: {ok} tests", flush=True)
                    print(f"vunit.run_tests.{d}.{kind}.skipped: {skip} tests", flush=True)
                    print(f"vunit.run_tests.{d}.{kind}.failed: {len(bad)} tests", flush=True)
                print(f"vunit.run_tests.{d}.pty_vs_bare: {100 * pty[0] / max(1, bare[0]):.1f} %", flush=True)
                for name in sorted(set(pty[2]) - set(bare[2])):
                    print(f"vunit.run_tests.{d}.pty_only_failed.{name}: 1 test", flush=True)
            if mpremote:
                (t / "mr").mkdir()
                with SerialUnit(t / "mr", register=True, heapsize=HEAP):
                    ok, total, bad = mpremote_suite(tree, env)
                print(f"vunit.mpremote_suite.passed: {ok} of {total} tests", flush=True)
                for name in bad:
                    print(f"vunit.mpremote_suite.failed.{name.removesuffix('.sh')}: 1 test", flush=True)
        else:
            print("vunit.run_tests.basics.pty.passed: -1 tests (no upstream MicroPython tree)")
        if suites_only:
            return 0
        units = []
        for i in range(4):
            root = t / f"u{i}"
            make_logs(root, 3, 1500, i)
            units.append(SerialUnit(root, heapsize=DEFAULT_HEAP))  # as `mausbox sim --serial` runs it
        for u in units:
            u.start()
        try:
            ports = [u.pty_path for u in units]
            one = pull_seconds(ports[:1], t / "s1" / "logs.sqlite", env)
            for f in (t / "u0" / "logs").glob("*.pulled"):
                f.unlink()
            four = pull_seconds(ports, t / "s4" / "logs.sqlite", env)  # type: ignore[arg-type]
            folders = sorted(p.name for p in (t / "s4" / "raw").iterdir())
        finally:
            for u in units:
                u.stop()
        print(f"vunit.logs_pull_one_unit: {one:.2f} s")
        print(f"vunit.logs_pull_four_units: {four:.2f} s")
        print(f"vunit.logs_pull_four_vs_one: {four / one:.2f} x")
        print(f"vunit.logs_pull_four_folders: {len(folders)} folders")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
