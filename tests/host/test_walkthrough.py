"""The README's "Your first hour", followed word for word in a fresh copy of the checkout: every fenced block
after a `<!-- walkthrough: terminal N -->` comment is typed into terminal N (a bash per terminal), in the
README's order; a terminal-2 block keeps running (the unit on its serial port) while terminal 1 goes on
once it says it is ready, as a reader waits for it. It must end with a report that names the game."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time

from conftest import ROOT

MARK = re.compile(r"<!-- walkthrough: terminal (\d) -->\s*```sh\n(.*?)```", re.S)
READY = re.compile(r"virtual unit on (\S+)")


def walkthrough(text: str) -> list[tuple[int, list[str]]]:
    """(terminal, command lines) per marked block, comments and blank lines kept out as a reader would."""
    return [(int(n), [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")])
            for n, body in MARK.findall(text)]


GIT = ["git", "-c", "user.name=walkthrough", "-c", "user.email=walkthrough@localhost", "-c", "commit.gpgsign=false"]


def _copy_checkout(dest):
    """The checkout's files as a fresh clone has them (the working tree's, so uncommitted work is tested),
    times kept, committed in a repository of their own so that `git status` afterwards shows what the
    walkthrough left; the venv is this checkout's (same code), so `make setup` finds it up to date."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    subprocess.run(GIT + ["init", "-q"], cwd=dest, check=True)
    subprocess.run(GIT + ["add", "-A"], cwd=dest, check=True)
    subprocess.run(GIT + ["commit", "-q", "-m", "clone"], cwd=dest, check=True)


def git_status(clone) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                          capture_output=True, text=True, check=True).stdout


def test_the_readme_walkthrough_works_as_written(tmp_path):
    blocks = walkthrough((ROOT / "README.md").read_text(encoding="utf-8"))
    assert [n for n, _ in blocks] == [1, 2, 1], "the walkthrough: terminal 1, the unit in terminal 2, terminal 1"
    assert any("make setup" in ln for ln in blocks[0][1]) and any("activate" in ln for ln in blocks[0][1])
    # The clone shares this checkout's venv: it must find it up to date (else its `make setup` would install
    # the clone into it), and its `make setup` points the venv's virtual-unit hook at the clone's files, so
    # the hook is pointed back here afterwards.
    subprocess.run(["make", "setup"], cwd=ROOT, check=True, capture_output=True, timeout=900)
    clone = tmp_path / "mausbox"
    _copy_checkout(clone)
    assert git_status(clone) == ""
    try:
        _walk(blocks, clone, tmp_path)
    finally:
        subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "mausbox.sim.ports", "--install"], cwd=ROOT,
                       check=True, capture_output=True)
    assert git_status(clone) == "", "the walkthrough left files in the checkout (.gitignore them):\n" + git_status(clone)


def _walk(blocks, clone, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"  # a new terminal: no venv active, no `mausbox` on the PATH
    env["XDG_DATA_HOME"] = str(tmp_path / "home")  # the reader's own data folder: no other unit registered
    env.pop("MAUSBOX_SIM_TIMING", None)
    term1 = "set -ex\n" + "\n".join(blocks[0][1]) + "\n"
    first = subprocess.run(["bash", "-c", term1], cwd=clone, env=env, capture_output=True, text=True,
                           timeout=900)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert "M is for Mouse" in first.stdout or "mim" in first.stdout
    log = tmp_path / "terminal2.log"
    with open(log, "w") as out:
        unit = subprocess.Popen(["bash", "-c", "set -e\n" + "\n".join(blocks[1][1]) + "\n"], cwd=clone, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        end = time.monotonic() + 180
        while not READY.search(log.read_text()) and unit.poll() is None and time.monotonic() < end:
            time.sleep(0.2)
        assert READY.search(log.read_text()), log.read_text()[-3000:]
        # terminal 1 is the same shell as before: its venv is still active
        term1b = "set -e\n. .venv/bin/activate\nset -x\n" + "\n".join(blocks[2][1]) + "\n"
        second = subprocess.run(["bash", "-c", term1b], cwd=clone, env=env,
                                capture_output=True, text=True, timeout=900)
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    finally:
        os.killpg(unit.pid, signal.SIGINT)  # Ctrl-C in terminal 2
        try:
            unit.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(unit.pid, signal.SIGKILL)
            unit.wait(timeout=10)
    assert "1 pulled" in second.stdout, second.stdout
    report = clone / "class.html"
    assert report.exists()
    text = report.read_text(encoding="utf-8")
    assert "M is for Mouse" in text and "00001-mim.jsonl" in text
