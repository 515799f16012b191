"""`mausbox flash`: MicroPython onto a board with esptool, refusing an image built for another chip, then deploy.

Steps: read the image's chip id from its header; ask the board which chip it is (esptool); refuse a
mismatch (never forced); erase; write at the chip's bootloader offset (esptool verifies what it wrote);
wait for MicroPython's REPL; `mausbox deploy`.
"""

from __future__ import annotations

HELP = "write MicroPython to an ESP32 board (esptool), verify, then deploy the firmware"

ESP_MAGIC = 0xE9
# MicroPython's download names for each chip (micropython.org/download/<BOARD>)
MPY_BOARD = {"ESP32": "ESP32_GENERIC", "ESP32-S2": "ESP32_GENERIC_S2", "ESP32-S3": "ESP32_GENERIC_S3",
             "ESP32-C3": "ESP32_GENERIC_C3", "ESP32-C6": "ESP32_GENERIC_C6"}


def add_parser(p):
    p.add_argument("--port", help="serial port (default: the only ESP32 board connected)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--firmware", metavar="FILE.bin", help="a MicroPython image for the board's chip")
    src.add_argument("--version", metavar="V", help="fetch the official MicroPython V (e.g. 1.29.0) with mpflash")
    p.add_argument("--board", help="board file for the deploy that follows (see mausbox deploy)")
    p.add_argument("--yes", action="store_true", help="do not ask before erasing the board")
    p.add_argument("--no-deploy", action="store_true", help="only write MicroPython")


def image_chip(data: bytes) -> tuple[str, int]:
    """(chip name, bootloader offset) an image was built for, from its header's chip id (byte 12).
    ValueError with the reason for anything that is not an ESP32-family image."""
    from esptool.targets import CHIP_DEFS  # type: ignore[import-untyped]

    if len(data) < 24 or data[0] != ESP_MAGIC:
        raise ValueError("not an ESP firmware image (no 0xE9 header): use the .bin from "
                         "micropython.org/download, not a .uf2, .elf or .hex")
    chip_id = data[12] | data[13] << 8
    for cls in CHIP_DEFS.values():
        if getattr(cls, "IMAGE_CHIP_ID", None) == chip_id:
            return cls.CHIP_NAME, cls.BOOTLOADER_FLASH_OFFSET
    raise ValueError(f"the image is for an unknown chip (id {chip_id})")


def esptool_error(text: str, port: str) -> str:
    """esptool's failure text -> what to do."""
    from mausbox.link import BUSY_HINT

    low = text.lower()
    if "permission denied" in low:
        return (f"no permission to open {port}: add yourself to the serial group "
                "(`sudo usermod -aG dialout $USER`, then log out and in again)")
    if "busy" in low or "exclusively lock" in low or "resource temporarily unavailable" in low:
        return f"{port} is busy: {BUSY_HINT}"
    if "no such file" in low or "could not open" in low and "port" in low:
        return f"{port} does not exist: is the board plugged in (with a data cable, not a charge-only one)?"
    if "wrong boot mode" in low or "failed to connect" in low or "no serial data received" in low:
        return ("the board is not in download mode: hold its BOOT button, tap EN/RST, release BOOT, then try "
                "again (some boards need BOOT held for the whole start of the flash)")
    if "chip" in low and ("stopped responding" in low or "timed out" in low):
        return "the board stopped answering during the flash: try a shorter USB cable or another port, then again"
    return text.strip().splitlines()[-1] if text.strip() else "esptool failed"


def detect_chip(port: str) -> str:
    """The chip's name, e.g. "ESP32-S3", via esptool (resets the board into its ROM bootloader)."""
    import contextlib
    import io

    from esptool.cmds import detect_chip as _detect  # type: ignore[import-untyped]

    from mausbox.cli import EXIT_NO_UNIT, UserError

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            chip = _detect(port, connect_attempts=3)
    except Exception as e:  # noqa: BLE001 - esptool's errors are FatalError, serial and OS errors
        raise UserError(esptool_error(f"{out.getvalue()}\n{e}", port), EXIT_NO_UNIT) from None
    try:
        chip._port.close()
    except Exception:  # noqa: BLE001
        pass
    return chip.CHIP_NAME


def esptool(args: list[str], port: str) -> None:
    """Run esptool (its own progress bars show); failures become friendly errors."""
    import subprocess
    import sys

    from mausbox.cli import EXIT_LINK, UserError

    proc = subprocess.Popen([sys.executable, "-m", "esptool", "--port", port, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        print(line, end="", flush=True)
        tail = (tail + [line])[-20:]
    if proc.wait() != 0:
        raise UserError(esptool_error("".join(tail), port), EXIT_LINK)


def fetch_image(version: str, chip: str) -> str:
    """The official image for chip and version, via mpflash (needs the network)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from mausbox.cli import UserError
    from mausbox.paths import data_home

    board = MPY_BOARD.get(chip)
    if board is None:
        raise UserError(f"no official generic MicroPython image known for {chip}: pass --firmware FILE.bin", 2)
    exe = shutil.which("mpflash") or str(Path(sys.executable).parent / "mpflash")
    if not Path(exe).exists() and not shutil.which("mpflash"):
        raise UserError("fetching images needs mpflash (`pip install mpflash`); or download "
                        f"https://micropython.org/download/{board}/ and pass --firmware FILE.bin", 2)
    dest = data_home() / "firmware"
    dest.mkdir(parents=True, exist_ok=True)
    v = version if version.startswith("v") else "v" + version
    proc = subprocess.run([exe, "download", "--version", v, "--board", board, "--dest", str(dest)],
                          capture_output=True, text=True)
    found = sorted(dest.rglob(f"{board}*{v}*.bin"))
    if proc.returncode != 0 or not found:
        raise UserError(f"could not fetch MicroPython {v} for {board} (offline?): download it from "
                        f"https://micropython.org/download/{board}/ and pass --firmware FILE.bin", 4)
    return str(found[-1])


def run(args) -> int:
    from pathlib import Path

    from mausbox.cli import EXIT_PROBLEM, EXIT_USAGE, UserError
    from mausbox.link import resolve_port
    from mausbox.sim.serial import running_units

    port = resolve_port(args.port)
    if any(port in (u["pty"], u.get("link")) for u in running_units()):
        raise UserError("this is a virtual unit: it has no flash chip to write; use `mausbox deploy`", EXIT_USAGE)
    print(f"flash: asking the board on {port} which chip it is ...")
    chip = detect_chip(port)
    print(f"flash: the board is an {chip}")
    path = args.firmware or fetch_image(args.version, chip)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}", EXIT_USAGE) from None
    try:
        want, offset = image_chip(data)
    except ValueError as e:
        raise UserError(f"{path}: {e}", EXIT_USAGE) from None
    if want != chip:
        raise UserError(f"{Path(path).name} is built for an {want}, but the board is an {chip}: refusing to write "
                        f"it. Use the image for {chip} (micropython.org/download/{MPY_BOARD.get(chip, chip)}/)",
                        EXIT_PROBLEM)
    if not args.yes:
        answer = input(f"Erase all of the {chip}'s flash on {port} (logs and settings on it are lost; pull the "
                       "logs first) and write MicroPython? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return EXIT_PROBLEM
    esptool(["erase-flash"], port)
    esptool(["write-flash", hex(offset), path], port)  # esptool checks each region's MD5 after writing
    print("flash: MicroPython written and verified")
    if args.no_deploy:
        return 0
    import time

    from mausbox.deploy import deploy
    from mausbox.link import UnitLink

    time.sleep(2)  # first boot: MicroPython formats its filesystem
    with UnitLink(port, timeout=20, recover=False) as link:
        report = deploy(link, args.board)
    print(f"flash: done; the unit booted Mausbox {report.ready}")
    return 0
