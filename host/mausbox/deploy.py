"""Deploying the firmware to a unit: compile to match it, copy only what changed, atomically, then confirm it boots.

First the host service is asked what the unit is doing: a unit in a game is left alone unless forced, since
deploying stops the app (the raw REPL is for deploy, flash and recovery only). Then one exec asks the unit for its MicroPython (`sys.implementation._mpy`, platform) and the sha256 of every file
the deployment would write plus every file under /maus; only files whose hash differs are sent, each written
to `<name>.tmp` and renamed; files under /maus that the deployment no longer has are removed (a stale `x.py`
would shadow a new `x.mpy`). Every file written is then hashed on the unit and checked against the host's
sha256; a file that differs (damaged on the wire) is sent again, up to TRIES rounds, and a deployment that still
differs fails loudly (exit 1, naming the files), never a success. A step the link broke (a damaged answer, a
lost prompt) is taken again after a fresh raw REPL. Then a soft reset, and the console must show
`MAUSBOX READY <version>`.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from maus import FROZEN_DATA

from mausbox.build import board_ok, compile_bytes, mpy_compatible, parse_mpy_info
from mausbox.errors import EXIT_PROBLEM, UserError
from mausbox.link import LinkError, LinkLost, LinkTimeout, NoService, UnitLink
from mausbox.link.bounds import RECOVER_PAD
from mausbox.paths import BOARDS_DIR, FIRMWARE_DIR, FIRMWARE_PKG
from mausbox.shown import plural

BOOT_FILES = ("boot.py", "main.py")  # firmware/boot.py (the watchdog keeper), firmware/main.py (the app)
MAIN_PY = (FIRMWARE_DIR / "main.py").read_bytes()
TRIES = 4  # rounds of sending what still differs; attempts at a step the link broke
READY = b"MAUSBOX READY "
SIM_ONLY = ("maus/sim/",)  # never sent to a board
DATA = (".json", ".cat")  # the firmware's data files: settings, texts, catalogs and their compiled form

# The probe's code is firmware/deployprobe.py (device-side code lives in firmware/), sent as text: comment lines and
# blank ones are left out on the line.
_PROBE = "".join(ln for ln in (FIRMWARE_DIR / "deployprobe.py").read_text().splitlines(keepends=True)
                 if ln.strip() and not ln.lstrip().startswith("#"))
_PROBE_DONE = "finally:\n del _h, _walk, _frozen, _probe, _rmtree\n"  # its names out of the unit's globals again
_PROBE_CALL = "try:\n _probe(%r, %d)\n" + _PROBE_DONE
_RMTREE_CALL = "try:\n _rmtree(%r)\n" + _PROBE_DONE
# A deploy writes the data files for an app frozen into the image to maus.FROZEN_DATA (/maus would hide the
# frozen package, docs/build.md section 7).
APP_DIRS = ("maus/", FROZEN_DATA + "/")  # what a deploy owns on the unit: it removes what it no longer writes there


@dataclass
class Plan:
    files: dict[str, bytes]  # device path (no leading /) -> content
    send: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


@dataclass
class DeployReport:
    board: str
    compiled: str  # "mpy v6.3 for x64", or "source (.py)"
    sent: list[str]
    removed: list[str]
    unchanged: int
    bytes_sent: int
    ready: str | None  # the version the unit announced after the reset
    notes: list[str] = field(default_factory=list)


def board_file(name: str) -> Path:
    path = BOARDS_DIR / f"{name}.json"
    if not path.is_file():
        names = ", ".join(sorted(p.stem for p in BOARDS_DIR.glob("*.json")))
        raise UserError(f"no board named {name!r}: choose one of {names}", 2)
    return path


def is_virtual(mpy: int) -> bool:
    """The virtual unit (sys.platform 'esp32' like its board) runs on the host's CPU: native code for
    x86/x64, where an ESP32's is xtensawin."""
    return parse_mpy_info(mpy)[2] in ("x86", "x64")


def firmware_files(platform: str, mpy: int, board: str) -> tuple[dict[str, bytes], str]:
    """What a deployment writes: compiled firmware, /board.json and /main.py."""
    info = parse_mpy_info(mpy)
    use_mpy = mpy_compatible(info)
    files: dict[str, bytes] = {}
    for src, rel in _package(top="maus", on_sim=is_virtual(mpy)):
        if src.suffix == ".py":
            if use_mpy:
                try:
                    files[rel[:-3] + ".mpy"] = compile_bytes(src, info[2] or None)
                except RuntimeError as e:
                    raise UserError(f"the firmware does not compile:\n{e}", EXIT_PROBLEM) from None
            else:
                files[rel] = src.read_bytes()
        elif src.suffix in DATA:
            files[rel] = src.read_bytes()
    _board_and_boot(files, board)
    ok = board_ok(files["board.json"], files.get("maus/hw/board.py") or files["maus/hw/board.mpy"])
    if ok is not None:
        files["board.ok"] = ok
    how = f"mpy v{info[0]}.{info[1]}" + (f" for {info[2]}" if info[2] else "") if use_mpy else "source (.py)"
    return files, how


def frozen_files(board: str, version: str) -> tuple[dict[str, bytes], str]:
    """What a deployment writes to a unit whose image has the app frozen in (probe()'s "frozen", its version): the
    data files in FROZEN_DATA, /board.json, /boot.py and /main.py; no board.ok (the unit checks its board at each
    boot, with the checker in its image, which costs its RAM nothing)."""
    files = {rel: src.read_bytes() for src, rel in _package(top=FROZEN_DATA, on_sim=False) if src.suffix in DATA}
    _board_and_boot(files, board)
    return files, f"data only: the app is frozen in the image (version {version})"


def _package(top: str, on_sim: bool):
    """(source, path on the unit under top/) of each file of the firmware package a deployment may write; the
    simulator's (SIM_ONLY) only to the virtual unit."""
    for src in sorted(FIRMWARE_PKG.rglob("*")):
        if not src.is_file() or "__pycache__" in src.parts:
            continue
        rel = src.relative_to(FIRMWARE_PKG).as_posix()
        if on_sim or not ("maus/" + rel).startswith(SIM_ONLY):
            yield src, f"{top}/{rel}"


def _board_and_boot(files: dict[str, bytes], board: str) -> None:
    files["board.json"] = board_file(board).read_bytes()
    for name in BOOT_FILES:
        files[name] = (FIRMWARE_DIR / name).read_bytes()


def make_plan(files: dict[str, bytes], remote: dict[str, str | None]) -> Plan:
    plan = Plan(files)
    for path, data in sorted(files.items()):
        if remote.get(path) == hashlib.sha256(data).hexdigest():
            plan.unchanged.append(path)
        else:
            plan.send.append(path)
    plan.remove = sorted(p for p, h in remote.items() if h is not None and p not in files and p.startswith(APP_DIRS))
    return plan


def probe(link, paths: list[str], walk: bool = True) -> dict:
    """The unit's MicroPython (.mpy info, platform, the version of an app frozen into its image or None) and the
    sha256 of each path (None: missing), and with `walk` of every file under /maus and /maus-data, in one exec. One line per file: a listing of ~100 files stays small on a 96 KB
    heap. LinkError if the answer is garbled (a damaged line): the caller asks again."""
    code = _PROBE + _PROBE_CALL % (sorted(paths), walk)
    out = link.exec(code, timeout=30).decode("utf-8", "replace").splitlines()
    try:
        mpy, platform, frozen = out[0].split()
        files: dict[str, str | None] = {}
        for line in out[1:]:
            if line.strip():
                path, digest = line.rsplit(" ", 1)
                if digest != "None" and (len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest)):
                    raise ValueError(digest)
                files[path] = None if digest == "None" else digest
        if not set(paths) <= set(files):
            raise ValueError("missing paths")
        return {"mpy": int(mpy), "platform": platform, "frozen": None if frozen == "-" else frozen, "files": files}
    except ValueError:
        raise LinkError(f"{link.port}: the unit's file listing was garbled") from None


def default_board(mpy: int) -> str:
    return "sim" if is_virtual(mpy) else "esp32-devkitc"


def precheck(link: UnitLink, force: bool = False, say=print) -> dict | None:
    """What the unit is doing, asked through the host service (never a Ctrl-C): a unit in a game is left alone
    unless `force`. Returns its hello (None: it shows its REPL, or does not speak the host protocol)."""
    try:
        info = link.request("hello")
    except NoService:
        return None  # the REPL: nothing runs that deploying could stop
    except LinkTimeout:
        say(f"deploy: {link.port} does not answer the host protocol (older firmware, or none): deploying anyway")
        return None
    except LinkError as e:
        say(f"deploy: {e}: deploying anyway")
        return None
    if info.get("mode") == "play" and not force:
        raise UserError(f"{link.port}: the unit is in a game ({info.get('game')}): deploying stops it and the game "
                        "ends unfinished. Finish or abort the game first, or deploy with --force", EXIT_PROBLEM)
    return info


def _again(repl, step, what: str):
    """A step, taken again after a fresh raw REPL when the link broke it (a damaged or lost answer)."""
    for i in range(TRIES):
        try:
            return step()
        except LinkError as e:
            if i == TRIES - 1:
                raise LinkError(f"{repl.port}: {what} failed {TRIES} times: {e}") from None
            try:
                repl.recover()
            except LinkLost:
                raise
            except LinkError:  # the line is still bad: the next attempt begins with another recovery
                pass
    raise AssertionError


def send_verified(repl, files: dict[str, bytes], send: list[str], remove: list[str], say=print,
                  progress=None) -> int:
    """Write `send`, remove `remove`, then hash them on the unit: what differs from the host goes again, up to
    TRIES rounds. Returns how many files were sent again; UserError if any still differs."""
    total = sum(len(files[p]) for p in send)
    done = 0
    made: set[str] = set()
    todo, gone, again = list(send), list(remove), 0
    for rnd in range(TRIES):
        for path in todo:
            base = done

            def one(path=path, base=base):
                _mkdirs(repl, path, made)
                repl.write_file(path, files[path],
                                progress=(lambda n: progress(min(total, base + n), total)) if progress else None)

            try:
                _again(repl, one, f"writing {path}")
            except LinkError as e:
                say(f"  {path}: {e}")
                continue  # it stays wrong on the unit: the check below sends it again, or names it
            done += len(files[path]) if rnd == 0 else 0
            say(f"  sent {path} ({len(files[path])} bytes)" + (" again" if rnd else ""))
        for path in gone:
            _again(repl, lambda path=path: repl.exec(
                f"import os\ntry:\n os.remove({'/' + path!r})\nexcept OSError:\n pass"), f"removing {path}")
            if rnd == 0:
                say(f"  removed {path}")
        if not todo and not gone:
            return again
        check = sorted(set(todo) | set(gone))
        got = _again(repl, lambda check=check: probe(repl, check, walk=False), "checking")["files"]
        todo = [p for p in todo if got.get(p) != hashlib.sha256(files[p]).hexdigest()]
        gone = [p for p in gone if got.get(p) is not None]
        if not todo and not gone:
            return again
        again += len(todo)
        say(f"deploy: {len(todo) + len(gone)} file(s) differ on the unit after writing ({', '.join(todo + gone)}): "
            "sending again")
    raise UserError(f"deploy FAILED: after {TRIES} tries these files still differ on the unit from this "
                    f"computer's: {', '.join(todo + gone)}. The unit may now run damaged firmware: check the cable "
                    "and run `mausbox deploy` again", EXIT_PROBLEM)


def deploy(link: UnitLink, board: str | None = None, say=print, confirm_s: float = 20, mip: bool = True,
           force: bool = False, progress=None, only: dict[str, bytes] | None = None) -> DeployReport:
    """`progress(done, total)`: bytes of the files sent so far. `only`: deploy just these files (nothing
    removed; `make bench` deploys a small set many times). Every module the firmware imports is in
    firmware/ (the display driver too: maus/drivers/ssd1306.py), so nothing is fetched: `mip` is kept for
    the callers and has no effect."""
    precheck(link, force, say)
    repl = link.repl()
    for i in range(TRIES):  # a fresh interpreter: the game's memory is free again
        try:
            repl.enter_raw(soft_reset=True)
            break
        except LinkLost:
            raise
        except LinkError:  # a damaged banner, or a Ctrl-C lost on the line: again, behind filler
            if i == TRIES - 1 or not link.bytes_in:  # a port that never said a thing has no MicroPython
                raise
            repl.flush_line(RECOVER_PAD)
    first = _again(repl, lambda: probe(repl, []), "asking the unit what it runs")
    platform = first["platform"]
    if only is not None:
        files, how, board = only, "as given", board or "-"
    else:
        board = board or _again(repl, lambda: _board_on_unit(repl), "reading the board") or default_board(first["mpy"])
        files, how = frozen_files(board, first["frozen"]) if first["frozen"] else \
            firmware_files(platform, first["mpy"], board)
    remote = _again(repl, lambda: probe(repl, list(files), walk=only is None), "hashing the unit's files")["files"]
    plan = make_plan(files, remote)
    start_bytes = repl.bytes_sent
    say(f"deploy: {len(plan.send)} to send, {len(plan.unchanged)} unchanged, {len(plan.remove)} to remove "
        f"({how}, board {board})")
    resent = send_verified(repl, files, plan.send, plan.remove, say, progress)
    notes = []
    if only is None:
        # the folder this deploy does not use goes with its subfolders: an empty /maus would still hide a frozen app
        gone = "maus" if first["frozen"] else FROZEN_DATA
        _again(repl, lambda: repl.exec(_PROBE + _RMTREE_CALL % ("/" + gone,)), f"removing /{gone}")
    if first["frozen"]:
        from maus import VERSION

        notes.append(f"the app's code is the image's (version {first['frozen']}): this deploy wrote its data files; "
                     "to change the code, build and flash a new image (make image)")
        if first["frozen"] != VERSION:
            say(f"deploy: the image's app is version {first['frozen']}, this computer's {VERSION}: its data files "
                "may not match the image's code; build and flash a new image (make image)")
    if resent or repl.refused:
        notes.append(f"the link damaged data: {resent} file(s) sent again, {repl.refused} command(s) refused by "
                     "the unit and sent again; every file checked")
    sent = repl.bytes_sent - start_bytes
    ready = confirm_boot(link, confirm_s) if confirm_s else None
    return DeployReport(board, how, plan.send, plan.remove, len(plan.unchanged), sent, ready, notes)


ROMFS_PROBE = "import vfs\nprint(getattr(vfs, 'rom_ioctl', None) and vfs.rom_ioctl(1) or 0)"


def romfs_partitions(link) -> int:
    """How many ROMFS partitions the unit's MicroPython offers (vfs.rom_ioctl(1)); 0 when it has none."""
    out = link.exec(ROMFS_PROBE).decode("utf-8", "replace").strip().splitlines()
    try:
        return int(out[-1]) if out else 0
    except ValueError:
        return 0


def romfs_tree(files: dict[str, bytes], dest: Path) -> list[str]:
    """The app (every maus/ file of a deployment) laid into dest for `mpremote romfs deploy`; -> the paths."""
    out = []
    for path, data in sorted(files.items()):
        if path.startswith("maus/"):
            (dest / path).parent.mkdir(parents=True, exist_ok=True)
            (dest / path).write_bytes(data)
            out.append(path)
    return out


def deploy_romfs(link: UnitLink, board: str | None = None, say=print, force: bool = False) -> DeployReport:
    """The app into the unit's ROMFS partition (bytecode then runs from flash, not the heap; docs/build.md):
    mpremote builds and writes the image, then /board.json, /boot.py and /main.py go to the filesystem and
    /maus there is removed (it would shadow /rom/maus on sys.path)."""
    import subprocess
    import sys
    import tempfile

    precheck(link, force, say)
    repl = link.repl()
    repl.enter_raw(soft_reset=True)
    if not romfs_partitions(repl):
        raise UserError("this unit's MicroPython has no ROMFS partition (vfs.rom_ioctl): deploy to the filesystem "
                        "(plain `mausbox deploy`). A stock ESP32 image has none: ROMFS needs a MicroPython built "
                        "with MICROPY_VFS_ROM and a romfs partition (docs/build.md section 7)", EXIT_PROBLEM)
    first = probe(repl, [])
    board = board or _board_on_unit(repl) or default_board(first["mpy"])
    files, how = firmware_files(first["platform"], first["mpy"], board)
    with tempfile.TemporaryDirectory() as tmp:
        app = romfs_tree(files, Path(tmp))
        link.close()  # mpremote opens the port itself
        say(f"deploy: {plural(len(app), 'file')} into the ROMFS partition ({how}, board {board}) with mpremote")
        proc = subprocess.run([sys.executable, "-m", "mpremote", "connect", link.port, "romfs", "--no-mpy",
                               "deploy", tmp], capture_output=True, text=True)
        if proc.returncode != 0:
            raise UserError("mpremote romfs deploy failed: " + (proc.stderr or proc.stdout).strip()[-400:], EXIT_PROBLEM)
    with UnitLink(link.port, timeout=link.timeout, recover=False) as again:  # the same port, after mpremote
        repl = again.repl()
        repl.enter_raw(soft_reset=True)
        for path in ("board.json",) + BOOT_FILES:
            repl.write_file(path, files[path])
        repl.exec(_PROBE + _RMTREE_CALL % ("/maus",))
        ready = confirm_boot(again, 20)
    return DeployReport(board, how + ", ROMFS", app, [], 0, 0, ready, ["the app runs from the ROMFS partition"])


def _board_on_unit(link) -> str | None:
    """Keep the board a unit already has, unless --board says otherwise."""
    out = link.exec("try:\n with open('/board.json') as f:print(f.read())\nexcept OSError:\n pass")
    try:
        name = json.loads(out or b"null")
        return name.get("name") if isinstance(name, dict) and (BOARDS_DIR / f"{name.get('name')}.json").is_file() \
            else None
    except ValueError:
        return None


def _mkdirs(link, path: str, made: set[str]) -> None:
    parts = path.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/" + "/".join(parts[:i])
        if d not in made:
            link.exec(f"import os\ntry:\n os.mkdir({d!r})\nexcept OSError:\n pass")
            made.add(d)


def confirm_boot(link: UnitLink, timeout: float) -> str:
    """Soft-reset into the friendly REPL; the firmware must print `MAUSBOX READY <version>`."""
    link.repl().soft_reset()  # boot.py, main.py
    buf = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        buf += link.read_raw(min(0.2, max(0.0, end - time.monotonic())))
        i = buf.find(READY)
        if i >= 0 and b"\n" in buf[i:]:
            return buf[i + len(READY):].split(b"\n", 1)[0].strip().decode("utf-8", "replace")
        if b"Traceback" in buf and buf.rstrip().endswith(b">>>"):
            break
    tail = buf.decode("utf-8", "replace").strip().splitlines()[-6:]
    raise UserError("the unit did not confirm its boot (no `MAUSBOX READY` line):\n  " + "\n  ".join(tail),
                    EXIT_PROBLEM)
