"""The main job as a person does it: `mausbox sim` (and once `make sim` from a fresh copy of the checkout) in a
real pseudo-terminal of 80x24 and 120x40, keys typed one at a time, the screen read back by a VT emulator
(pyte), the OLED read with the firmware's own font. No fake screen, no control FIFO of the test's own: only
keys in, cells out (a whole game's progress is also followed on the unit's flash folder, which a user can
look at, so the test types a game's next key once the unit has taken the last one)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from mausbox.mpbuild import micropython_binary  # noqa: E402
from termkit import SimTerm  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MAUSBOX = str(Path(sys.executable).with_name("mausbox"))
SCEN = REPO / "tests" / "scenarios"
SIZES = [(80, 24), (120, 40)]


def _sim(root: Path, cols: int, rows: int) -> SimTerm:
    # In a shell, so the terminal's state after `Q` can be read (stty) in the same pty.
    cmd = f"stty -a; echo STTY-WAS; '{MAUSBOX}' sim --root '{root}'; echo \"SIM-RC=$?\"; stty -a; echo SIM-ENDED"
    log = root.parent / "console.log"
    return SimTerm(["/bin/sh", "-c", cmd], cols, rows, binary=micropython_binary(),
                   env={"MAUSBOX_SIM_CONSOLE_LOG": str(log), "MAUSBOX_SIM_ECHO_CTL": "1"}, console_log=log)


def _quit_and_check_terminal(t: SimTerm) -> None:
    t.type("Q")
    t.wait(lambda t: b"SIM-ENDED" in t.raw, "the sim to quit on Q")
    out = t.raw.decode("utf-8", "replace")
    assert "SIM-RC=0" in out, out[-2000:]
    before = out[:out.index("STTY-WAS")].split()
    after = out[out.rindex("SIM-RC=0") + 8:out.rindex("SIM-ENDED")].split()
    assert "echo" in after and "icanon" in after, after  # echo on, lines edited: a shell can be used again
    assert after == before  # the terminal's modes exactly as they were
    assert not t.cursor_hidden()  # the cursor shown again
    assert t.raw.rfind(b"\x1b[?1049l") > t.raw.rfind(b"\x1b[?1049h")  # left the alternate screen


def _records(root: Path) -> list[dict]:
    logs = sorted((root / "logs").glob("*.jsonl")) if (root / "logs").is_dir() else []
    out = []
    for line in logs[-1].read_text(errors="replace").splitlines() if logs else []:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def _count(root: Path, kind: str) -> int:
    return sum(r.get("type") == kind for r in _records(root))


@pytest.mark.parametrize("cols,rows", SIZES)
def test_a_new_unit_shows_its_menu_every_key_arrives_and_q_quits(tmp_path, cols, rows):
    t = _sim(tmp_path / "unit", cols, rows)  # a unit that has never run: no settings, no logs
    try:
        t.wait_oled("choose", "mausgeflippt")  # the unit's menu, read off the drawn OLED
        assert "P1" in t.text() and "Q quit" in t.text()
        t.type("/")
        t.wait_screen("card> _")
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        typed = ""
        for seg in range(5):  # 200 keys at 20 a second; the visible end of the query checked every 40
            keys = "".join(alphabet[(seg * 40 + i) % len(alphabet)] for i in range(40))
            t.type(keys, rate=20)
            typed += keys
            tail = typed[-40:] + "_"
            t.wait(lambda t, tail=tail: any(tail in ln for ln in t.lines()), f"all {len(typed)} keys on the screen in order")
            line = next(ln for ln in t.lines() if tail in ln)
            shown = line[line.index("card> ") + 6:line.index(tail) + len(tail) - 1].lstrip("…")
            assert typed.endswith(shown), (shown, typed)  # nothing lost, doubled or out of order
        t.type("\x1b")  # Esc: the search closes, the unit is back
        t.wait(lambda t: not any("card> " in ln for ln in t.lines()), "Esc to close the search")
        _quit_and_check_terminal(t)
    finally:
        t.close()


def test_make_sim_from_a_fresh_copy_shows_the_menu(tmp_path):
    """`make sim` from a fresh clone of the checkout (its venv made by `make`, the 32-bit MicroPython from the
    cache), on a unit that has never run: the menu, and Q quits."""
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("git and make are needed")
    copy = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(REPO), str(copy)], check=True)
    # the working tree as it is (a clone has only what is committed): the test tests this tree
    diff = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=REPO, capture_output=True, check=True).stdout
    if diff:
        subprocess.run(["git", "apply", "--whitespace=nowarn"], cwd=copy, input=diff, check=True)
    for p in subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split():
        (copy / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / p, copy / p)
    home = tmp_path / "home"  # a new user's data folder: the default unit has never run
    env = {"XDG_DATA_HOME": str(home / "data"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    cmd = "stty -a; echo STTY-WAS; make sim; echo \"SIM-RC=$?\"; stty -a; echo SIM-ENDED"
    t = SimTerm(["/bin/sh", "-c", cmd], 80, 24, cwd=copy, env=env, binary=micropython_binary())
    try:
        t.wait_oled("choose", "mausgeflippt", timeout=900)  # the first run sets up the venv (a minute or more)
        _quit_and_check_terminal(t)
    finally:
        t.close()
