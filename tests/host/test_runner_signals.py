"""The processes the tests start get Ctrl-C as a user's terminal gives it, however the suite was started.

A runner that starts the suite in the background of a shell without job control (as CI may) hands it SIGINT
ignored, and every child inherits that: `mausbox sim --web` and `logs pull --watch` then ignore the Ctrl-C
their tests send, one test fails and another waits until CI gives up. tests/conftest.py turns it back on."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

SHOW = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"


def test_a_child_process_takes_ctrl_c():
    out = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


def test_the_suite_started_with_ctrl_c_ignored_still_passes_it_on(tmp_path):
    """The whole chain as CI runs it: pytest started with SIGINT ignored, a test in it starting a child."""
    (tmp_path / "test_child.py").write_text(
        "import subprocess, sys\n"
        "def test_child():\n"
        f"    out = subprocess.run([sys.executable, '-c', {SHOW!r}], capture_output=True, text=True).stdout\n"
        "    assert out.strip() == 'True', out\n")
    conftest = str(Path(__file__).resolve().parents[1] / "conftest.py")  # by path: `import conftest` may be tests/web's
    # the suite's own conftest, run as it is (its hooks aside): its set-up is what is under test
    (tmp_path / "conftest.py").write_text(
        f"p = {conftest!r}\nexec(compile(open(p).read(), p, 'exec'), {{'__file__': p, '__name__': 'suite_conftest'}})\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert r.returncode == 0, r.stdout[-2000:]
