"""The first `make setup` (and so the first `make sim`) says what it does in one line per step and keeps pip
quiet: pip's warnings (a pip.conf naming a find-links folder that is missing warns once per package) would
bury those lines."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from conftest import ROOT


def _setup_plan(tmp_path) -> list[str]:
    """What `make setup` would run for a new venv (make -n: nothing is run)."""
    out = subprocess.run(["make", "-n", "setup", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return out.replace("\\\n", " ").splitlines()


def test_make_setup_says_each_step_and_pip_says_only_errors(tmp_path):
    plan = _setup_plan(tmp_path)
    pips = [ln for ln in plan if "-m pip install" in ln]
    assert len(pips) >= 3 and all("-qq" in shlex.split(ln) for ln in pips), pips
    said = [ln for ln in plan if ln.startswith("echo ")]
    assert any("setting up" in ln and "about a minute" in ln for ln in said), said
    assert plan.index(said[0]) < plan.index(pips[0])  # the line comes before the wait
    assert any("mausbox.mpbuild" in ln for ln in plan)  # which says "building 32-bit MicroPython ..." itself


def test_the_makefiles_pip_prints_nothing_on_this_machine(tmp_path):
    """The Makefile's own pip options, on a package pip has to look up in every index configured here."""
    line = next(ln for ln in _setup_plan(tmp_path) if "-m pip install" in ln)
    argv = shlex.split(line)
    opts = argv[argv.index("install") + 1:]
    opts = [o for o in opts if o.startswith("-q") or o.startswith("--disable")]
    proc = subprocess.run([sys.executable, "-m", "pip", "install", *opts, "--dry-run", "--no-deps",
                           "--ignore-installed", "pyserial"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout + proc.stderr == ""


def test_the_readme_says_how_long_make_test_takes():
    # issue 26: `make test` says how long it takes and stays within 10 minutes on an idle 2-core machine
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^make test    # set up if needed, then run every test \(CPython and real MicroPython\): "
                  r"about (\d+) minutes$", text, re.M)
    assert m and int(m.group(1)) <= 10, "README's quick start says how long make test takes"
    table = re.search(r"^\| `make test` \| .*about (\d+) minutes", text, re.M)
    assert table and table.group(1) == m.group(1), "the command table says the same"
