"""Every `mausbox flash` and `mausbox deploy` command the docs show works as written: each command block of
docs/*.md that holds one (build.md's first flash, classroom.md's loop over the ports) runs in bash, word for
word, with its ports (/dev/ttyUSB0 ...) being a virtual unit on its serial pty; `flash` and `deploy` there
get `--dry-run` (the virtual unit has no flash chip, and a deploy would replace this test's firmware), and
the other commands of the block (`ports`, `doctor`) run for real. The same for every inline command in the
docs' text, and for the examples `flash --help` and `deploy --help` show."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT
from mausbox import cmd_deploy, cmd_flash

BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.S)
INLINE = re.compile(r"`(mausbox (?:flash|deploy)\b[^`]*)`")
READY = re.compile(r"virtual unit on (/dev/[^\s;,]+)")
DOCS = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
# the placeholders the docs' text uses, as a reader fills them in
FILL = {"P": "{port}", "NAME": "esp32-devkitc", "V": "1.28.0"}
# flash and deploy as the docs write them, but only saying what they would do
DRY = ('mausbox() { case "$1" in flash|deploy) command mausbox "$@" --dry-run ;; *) command mausbox "$@" ;; '
       'esac; }\n')


def blocks() -> list[tuple[str, str]]:
    """(doc, shell text) of every fenced block with a flash or deploy command line in it."""
    out = []
    for doc in DOCS:
        for body in BLOCK.findall(doc.read_text(encoding="utf-8")):
            if re.search(r"^\s*mausbox (flash|deploy)\b", body, re.M):
                out.append((doc.relative_to(ROOT).as_posix(), body))
    return out


def inline() -> list[str]:
    """The complete inline commands (a synopsis with [options] is not one to type)."""
    found = {m for doc in DOCS for m in INLINE.findall(doc.read_text(encoding="utf-8")) if "[" not in m}
    return sorted(found)


def test_the_docs_show_the_first_flash_and_the_classroom_loop():
    docs = {d for d, _ in blocks()}
    assert {"docs/build.md", "docs/classroom.md"} <= docs
    assert any("for p in" in body for _, body in blocks())


@pytest.fixture(scope="module")
def unit(tmp_path_factory):
    """A virtual unit on its serial pty, the only unit this test's data folder knows."""
    tmp = tmp_path_factory.mktemp("docs")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAUSBOX_SIM_TIMING")}
    env["XDG_DATA_HOME"] = str(tmp / "home")
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    env["COLUMNS"] = "80"  # and everything they print fits 80 columns
    log = tmp / "unit.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mausbox", "sim", "--serial", "--headless", "--root",
                                 str(tmp / "unit")], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        while not READY.search(log.read_text()) and proc.poll() is None:
            time.sleep(0.2)
        m = READY.search(log.read_text())
        assert m, log.read_text()[-3000:]
        yield m.group(1), env, tmp
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _bash(script: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", "set -e\n" + DRY + script], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("doc,body", blocks(), ids=[f"{d}:{i}" for i, (d, _) in enumerate(blocks())])
def test_each_block_runs_as_written(unit, doc, body):
    port, env, tmp = unit
    script = re.sub(r"/dev/ttyUSB\d", port, body)
    run = _bash(script, env, tmp)
    said = run.stdout + run.stderr
    assert run.returncode == 0 and "FAILED" not in said, f"{doc}:\n{body}\n{said[-3000:]}"
    assert "mausbox" not in run.stderr, said[-3000:]  # no command complained
    assert all(len(line) <= 80 for line in said.splitlines()), said
    if "mausbox flash" in body:
        assert f"ask the board on {port} which chip it is" in run.stdout
    if "mausbox deploy" in body:
        assert f"ask the unit on {port} what it runs" in run.stdout
    if re.search(r"^\s*mausbox ports", body, re.M):
        assert port in run.stdout
    if re.search(r"^\s*mausbox doctor", body, re.M):
        assert "firmware" in run.stdout


@pytest.mark.parametrize("line", inline() + [ln for m in (cmd_flash, cmd_deploy) for ln in m.EXAMPLES.splitlines()
                                             if ln.strip()])
def test_each_inline_command_and_help_example_runs(unit, line, tmp_path):
    port, env, _ = unit
    argv = [FILL.get(w, w).format(port=port) for w in shlex.split(line)]
    argv = [port if w.startswith("/dev/ttyUSB") else w for w in argv]
    if "--firmware" in argv:  # the image the docs name, as downloaded
        i = argv.index("--firmware") + 1
        image = tmp_path / Path(argv[i]).name
        image.write_bytes(bytes((0xE9, 3, 2, 0x20)) + bytes(20) + b"\x5a" * 4072)
        argv[i] = str(image)
    run = _bash(shlex.join(argv), env, tmp_path)
    assert run.returncode == 0, f"{line}: {run.stdout[-2000:]}{run.stderr[-2000:]}"
    assert run.stdout.startswith(("flash: ", "deploy: ", "{")), run.stdout
    assert all(len(line) <= 80 for line in run.stdout.splitlines()), run.stdout
