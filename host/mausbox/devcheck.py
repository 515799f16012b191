"""`make check`: every firmware file compiles for the ESP32, lint passes, firmware and host type-check, the
firmware's imports keep to its layers, and no modules of the firmware or the host import each other in a
circle (docs/architecture.md).

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


def _packages(root: Path, package: str) -> list[str]:
    """`package` and its namespace packages (folders without an __init__.py, which grimp does not enter)."""
    base = root / package
    out = [package]
    for d in sorted(p for p in base.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        if not (d / "__init__.py").exists() and any(d.glob("*.py")):
            out.append(".".join((package, *d.relative_to(base).parts)))
    return out


def circles(root: Path, package: str) -> list[list[tuple[str, str, list[int]]]]:
    """The import circles among the modules of `package` under `root`: for each, its arrows (importer, imported,
    lines). A lazy import inside a function counts; one under `if TYPE_CHECKING:` never runs and does not."""
    import grimp

    sys.path.insert(0, str(root))
    try:
        graph = grimp.build_graph(*_packages(root, package), include_external_packages=False,
                                  exclude_type_checking_imports=True, cache_dir=None)
    finally:
        sys.path.remove(str(root))
    arrows = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:  # Tarjan: each strongly connected set of two or more modules is a circle
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in arrows[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            ring = set()
            while True:
                w = stack.pop()
                ring.add(w)
                if w == v:
                    break
            if len(ring) > 1:
                found.append([(a, b, sorted(d["line_number"] for d in graph.get_import_details(importer=a, imported=b)))
                              for a in sorted(ring) for b in arrows[a] if b in ring])

    for m in arrows:
        if m not in index:
            visit(m)
    return found


def check_circles() -> bool:
    print("== import circles among the modules of firmware/maus and host/mausbox (none allowed; lazy imports count)",
          flush=True)
    ok = True
    for root, package in ((FIRMWARE_DIR, "maus"), (REPO_ROOT / "host", "mausbox")):
        for ring in circles(root, package):
            ok = False
            names = sorted({a for a, _, _ in ring})
            print(f"   a circle of {len(names)} modules: {', '.join(names)}")
            for a, b, lines in ring:
                path = root.relative_to(REPO_ROOT) / (a.replace(".", "/") + ".py")
                if not (REPO_ROOT / path).exists():
                    path = path.with_suffix("") / "__init__.py"
                print(f"     {path}:{lines[0] if lines else '?'}: {a} imports {b}")
    if ok:
        print("   none")
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
    results.append(check_circles())
    if all(results):
        print("check: all passed")
        return 0
    print("check: FAILED", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
