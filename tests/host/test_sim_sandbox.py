"""The virtual unit's flash is its --root folder and nothing else: paths that climb out ("..", absolute ones
with "..") stay inside, and a symlink in the folder (to a file or a folder outside) is never followed, whether
mpremote or code on the unit asks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mausbox.link import UnitLink
from mausbox.link.repl import UnitExecError
from mausbox.mpbuild import micropython_binary
from mausbox.sim.serial import SerialUnit

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")


@pytest.fixture
def world(tmp_path):
    """root: the unit's folder, inside `deep` so that "../.." of it is still ours to watch; outside: a folder
    with a secret; links in the root to both."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "a" / "b" / "root"
    root.mkdir(parents=True)
    (root / "logs").mkdir()
    os.symlink(outside, root / "out")
    os.symlink(outside / "secret.txt", root / "logs" / "00001-mg.jsonl")
    os.symlink("../../../outside", root / "rel")
    return tmp_path, root, outside


def _files(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if ".sim" not in p.parts)


def test_mpremote_cannot_write_or_read_outside_the_root(world):
    tmp_path, root, outside = world
    before = _files(tmp_path)
    src = tmp_path / "f.txt"
    src.write_text("payload")
    before = _files(tmp_path)
    with SerialUnit(root, extra_path=[]) as unit:
        mp = [sys.executable, "-m", "mpremote", "connect", unit.pty_path]
        for target in (":../x", ":../../../x", ":/../../x", ":out/x", ":rel/x", ":logs/../../x"):
            subprocess.run(mp + ["fs", "cp", str(src), target], capture_output=True, timeout=60)
        r = subprocess.run(mp + ["fs", "cat", ":out/secret.txt"], capture_output=True, timeout=60)
        assert b"secret" not in r.stdout
        r = subprocess.run(mp + ["fs", "cat", ":logs/00001-mg.jsonl"], capture_output=True, timeout=60)
        assert b"secret" not in r.stdout
    after = _files(tmp_path)
    # what climbed stayed at the root's top; nothing appeared anywhere else, nothing went through a link
    assert (root / "x").read_text() == "payload"
    assert [p for p in after if p not in before] == ["a/b/root/x"]
    assert _files(outside) == ["secret.txt"]


CODE = {
    "read through ..": "print(open('/../../../outside/secret.txt').read())",
    "read a linked file": "print(open('/logs/00001-mg.jsonl').read())",
    "list a linked folder": "import os\nprint(os.listdir('out'))",
    "stat through a relative link": "import os\nprint(os.stat('rel/secret.txt'))",
    "chdir into a link": "import os\nos.chdir('out')\nprint(os.listdir())",
    "write through a link": "open('out/new.txt','w').write('x')",
    "rename out": "open('m.txt','w').write('x')\nimport os\nos.rename('m.txt','../../m.txt')\nprint(os.listdir('/'))",
    "mkdir above": "import os\nos.mkdir('/../../../made')",
    "chdir above and write": "import os\nos.chdir('..')\nos.chdir('..')\nopen('up.txt','w').write('x')\nprint(os.getcwd())",
    "remove through a link": "import os\nos.remove('out/secret.txt')",
}


def test_code_on_the_unit_stays_inside_the_root(world):
    tmp_path, root, outside = world
    before = _files(tmp_path)
    seen = {}
    with SerialUnit(root, extra_path=[]) as unit, UnitLink(unit.pty_path, timeout=10) as link:
        repl = link.repl()
        repl.enter_raw()
        for what, code in CODE.items():
            try:
                seen[what] = repl.exec(code).decode()
            except UnitExecError as e:
                seen[what] = e.error.strip().splitlines()[-1]
    assert not any("secret" in v and "Error" not in v for v in seen.values()), seen
    assert "EACCES" in seen["read a linked file"] and "EACCES" in seen["write through a link"]
    assert seen["chdir above and write"].strip() == "/"
    after = _files(tmp_path)
    assert sorted(p for p in after if p not in before) == ["a/b/root/m.txt", "a/b/root/made", "a/b/root/up.txt"]
    assert _files(outside) == ["secret.txt"] and (outside / "secret.txt").read_text() == "secret"


def test_a_link_planted_in_a_large_folder_the_unit_has_read_is_refused(tmp_path):
    # The unit reads a large folder's links once and keeps them until the folder changes (replserver _Jail.links):
    # a link the host plants later changes the folder, and the next path through it is refused.
    import time

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "root"
    logs = root / "logs"
    logs.mkdir(parents=True)
    for i in range(1, 101):
        (logs / ("%05d-mg.jsonl" % i)).write_text("x")
    old = time.time() - 10
    os.utime(logs, (old, old))
    while os.stat(logs).st_ctime > time.time() - 2.5:  # ctime cannot be set back: kept once it is 2 s old
        time.sleep(0.1)
    with SerialUnit(root, extra_path=[]) as unit, UnitLink(unit.pty_path, timeout=10) as link:
        repl = link.repl()
        repl.enter_raw()
        assert repl.exec("print(open('/logs/00007-mg.jsonl').read())").decode().strip() == "x"  # read and kept
        os.symlink(outside / "secret.txt", logs / "00200-mg.jsonl")
        with pytest.raises(UnitExecError) as e:
            repl.exec("print(open('/logs/00200-mg.jsonl').read())")
        assert "EACCES" in e.value.error


def test_a_link_in_a_large_folder_before_the_unit_starts_is_refused(tmp_path):
    # The bridge reads a large folder's links for the unit while it starts (vflash.host_count, replserver
    # _precount): a link that was there, in a folder unchanged for 2 s, is refused at the first path through it.
    import time

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "root"
    logs = root / "logs"
    logs.mkdir(parents=True)
    for i in range(1, 101):
        (logs / ("%05d-mg.jsonl" % i)).write_text("x")
    os.symlink(outside / "secret.txt", logs / "00200-mg.jsonl")
    old = time.time() - 10
    os.utime(logs, (old, old))
    while os.stat(logs).st_ctime > time.time() - 2.5:  # ctime cannot be set back: kept once it is 2 s old
        time.sleep(0.1)
    with SerialUnit(root, extra_path=[]) as unit, UnitLink(unit.pty_path, timeout=10) as link:
        repl = link.repl()
        repl.enter_raw()
        with pytest.raises(UnitExecError) as e:
            repl.exec("print(open('/logs/00200-mg.jsonl').read())")
        assert "EACCES" in e.value.error
        assert repl.exec("print(open('/logs/00007-mg.jsonl').read())").decode().strip() == "x"
