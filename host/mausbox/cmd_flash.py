"""`mausbox flash`: MicroPython onto a board with esptool, refusing an image built for another chip, then deploy.

The board file (--board) says which official image the board needs: its module's PSRAM decides the
variant (official_image). Steps: check the image against the board file (chip from the header, variant
where the image names it); ask the board which chip it is (esptool); refuse any mismatch (never forced);
erase; write at the chip's bootloader offset (esptool verifies what it wrote); wait for MicroPython's
REPL; `mausbox deploy`. `--dry-run` says all that without a port.
"""

from __future__ import annotations

HELP = "write MicroPython to an ESP32 board (esptool), verify, then deploy the firmware"
EXAMPLES = """\
mausbox flash --port /dev/ttyUSB0
mausbox flash --firmware ESP32_GENERIC-v1.28.0.bin --port /dev/ttyUSB0
mausbox flash --version 1.28.0 --dry-run
mausbox flash --board esp32-devkitc-6p --dry-run
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each

ESP_MAGIC = 0xE9
# MicroPython's download names for each chip (micropython.org/download/<BOARD>)
MPY_BOARD = {"ESP32": "ESP32_GENERIC", "ESP32-S2": "ESP32_GENERIC_S2", "ESP32-S3": "ESP32_GENERIC_S3",
             "ESP32-C3": "ESP32_GENERIC_C3", "ESP32-C6": "ESP32_GENERIC_C6"}


# family, PSRAM (maus.hw.board.psram) -> the official image (micropython.org/download/<BOARD>, its variant)
IMAGES = {("esp32", "none"): "ESP32_GENERIC", ("esp32", "quad"): "ESP32_GENERIC-SPIRAM",
          ("esp32s3", "none"): "ESP32_GENERIC_S3", ("esp32s3", "quad"): "ESP32_GENERIC_S3",
          ("esp32s3", "octal"): "ESP32_GENERIC_S3-SPIRAM_OCT"}
FAMILY_CHIP = {"esp32": "ESP32", "esp32s3": "ESP32-S3"}
# The board name each official image reports (MICROPY_HW_BOARD_NAME in ports/esp32/boards/*/mpconfigboard.h),
# a string in the image: how an image tells its variant.
_IMAGE_NAMES = ((b"Generic ESP32S3 module with Octal-SPIRAM", "ESP32_GENERIC_S3-SPIRAM_OCT"),
                (b"Generic ESP32S3 module", "ESP32_GENERIC_S3"),
                (b"Generic ESP32 module with SPIRAM", "ESP32_GENERIC-SPIRAM"),
                (b"Generic ESP32 module", "ESP32_GENERIC"))


def add_parser(p):
    p.add_argument("--port", help="serial port (default: the only ESP32 board connected)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--firmware", metavar="FILE.bin", help="a MicroPython image for the board's chip")
    src.add_argument("--version", metavar="V", help="fetch the official MicroPython V (e.g. 1.29.0) with mpflash "
                     "(default without --firmware: the MicroPython the firmware is tested on)")
    p.add_argument("--board", help="board file: chooses the image and is deployed after (see mausbox deploy)")
    p.add_argument("--dry-run", action="store_true", help="say what would be written where, and the deploy after; "
                                                          "touch no port")
    p.add_argument("--json", action="store_true", help="with --dry-run: print the plan as JSON")
    p.add_argument("--yes", action="store_true", help="do not ask before erasing the board")
    p.add_argument("--no-deploy", action="store_true", help="only write MicroPython")


def psram_words(psram: str) -> str:
    """"no PSRAM", "quad PSRAM": the board file's `psram` said as a sentence would."""
    return "no PSRAM" if psram == "none" else f"{psram} PSRAM"


def official_image(board: dict) -> str:
    """The official MicroPython image a board file needs: its module's PSRAM decides the variant."""
    from maus.hw import board as boardmod

    key = (board.get("family"), boardmod.psram(board))
    if key not in IMAGES:
        raise ValueError(f"no official MicroPython image for family {key[0]!r} with {key[1]} PSRAM")
    return IMAGES[key]


def image_variant(data: bytes) -> str | None:
    """The official image's name when the image says it (its board name string), else None."""
    for needle, name in _IMAGE_NAMES:
        if needle in data:
            return name
    return None


def plan(board_name: str, firmware: str | None = None) -> dict:
    """What `mausbox flash --board` does: the image, the chip, the offset, the deploy after. UserError when
    the given image does not fit the board file."""
    from pathlib import Path

    from maus.hw import board as boardmod

    from mausbox.cli import EXIT_PROBLEM, EXIT_USAGE, UserError
    from mausbox.deploy import board_file

    board = boardmod.load(str(board_file(board_name)))
    errs = boardmod.validate(board)
    if errs:
        raise UserError(f"boards/{board_name}.json: " + "; ".join(errs), EXIT_USAGE)
    if board.get("family") not in FAMILY_CHIP:
        raise UserError(f"{board_name} is a {board.get('family')} board: there is nothing to flash "
                        "(the virtual unit runs `mausbox sim`)", EXIT_USAGE)
    chip = FAMILY_CHIP[board["family"]]
    image = official_image(board)
    from esptool.targets import CHIP_DEFS  # type: ignore[import-untyped]

    offset = next(c.BOOTLOADER_FLASH_OFFSET for c in CHIP_DEFS.values() if c.CHIP_NAME == chip)
    out = {"board": board_name, "module": board.get("module"), "psram": boardmod.psram(board), "chip": chip,
           "image": image, "download": f"https://micropython.org/download/{image.split('-')[0]}/", "offset": offset,
           "firmware": firmware, "deploy": f"mausbox deploy --board {board_name}"}
    if firmware:
        try:
            data = Path(firmware).read_bytes()
        except OSError as e:
            raise UserError(f"cannot read {firmware}: {e.strerror}", EXIT_USAGE) from None
        try:
            got, got_offset = image_chip(data)
        except ValueError as e:
            raise UserError(f"{firmware}: {e}", EXIT_USAGE) from None
        if got != chip:
            raise UserError(f"{Path(firmware).name} is built for an {got}, but {board_name} is an {chip} board "
                            f"({board.get('module')}): refusing to write it. Use {image} ({out['download']})",
                            EXIT_PROBLEM)
        variant = image_variant(data)
        if variant is not None and variant != image:
            raise UserError(f"{Path(firmware).name} is the {variant} image, but {board_name} ({board.get('module')}, "
                            f"{psram_words(out['psram'])}) needs {image}: refusing to write it", EXIT_PROBLEM)
        out["offset"] = got_offset
        out["variant"] = variant
    return out


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
    if "no such file" in low or "errno 2]" in low:
        return f"{port} does not exist: is the board plugged in (with a data cable, not a charge-only one)?"
    if "busy" in low or "exclusively lock" in low or "resource temporarily unavailable" in low:
        return f"{port} is busy: {BUSY_HINT}"
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


def fetch_image(version: str, chip: str, board: str | None = None) -> str:
    """The official image (board: its name, else the chip's generic one) for a version, via mpflash (needs
    the network)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from mausbox.cli import UserError
    from mausbox.paths import data_home

    board = board or MPY_BOARD.get(chip)
    if board is None:
        raise UserError(f"no official generic MicroPython image known for {chip}: pass --firmware FILE.bin", 2)
    dest = data_home() / "firmware"
    dest.mkdir(parents=True, exist_ok=True)
    v = version if version.startswith("v") else "v" + version
    found = sorted(dest.rglob(f"{board}-{v}*.bin"))
    if found:  # fetched before: offline is fine
        print(f"flash: MicroPython {v} for {board}: {found[-1]} (fetched before)")
        return str(found[-1])
    exe = shutil.which("mpflash") or str(Path(sys.executable).parent / "mpflash")
    if not Path(exe).exists() and not shutil.which("mpflash"):
        raise UserError("fetching images needs mpflash (`pip install mpflash`); or download "
                        f"https://micropython.org/download/{board}/ and pass --firmware FILE.bin", 2)
    print(f"flash: fetching MicroPython {v} for {board} with mpflash ...")
    proc = subprocess.run([exe, "download", "--version", v, "--board", board, "--dest", str(dest)],
                          capture_output=True, text=True)
    found = sorted(dest.rglob(f"{board}-{v}*.bin"))
    if proc.returncode != 0 or not found:
        raise UserError(f"could not fetch MicroPython {v} for {board} (offline?): download it from "
                        f"https://micropython.org/download/{board}/ and pass --firmware FILE.bin", 4)
    return str(found[-1])


def read_image(path: str) -> tuple[str, int]:
    """(chip, offset) of an image file; UserError naming the file when it is missing or not an ESP image."""
    from pathlib import Path

    from mausbox.cli import EXIT_USAGE, UserError

    f = Path(path)
    if not f.exists():
        raise UserError(f"no such firmware file: {path} (download the .bin from micropython.org/download, "
                        "or use --version V to fetch it)", EXIT_USAGE)
    try:
        data = f.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}", EXIT_USAGE) from None
    try:
        return image_chip(data)
    except ValueError as e:
        raise UserError(f"{path}: {e}", EXIT_USAGE) from None


def check_port(port: str) -> None:
    """The port exists, then it is free (opened and closed again exclusively, DTR and RTS low: the board is not
    reset); UserError naming which it is."""
    import os

    from mausbox.cli import EXIT_NO_UNIT, UserError
    from mausbox.link import open_error
    from mausbox.link.ports import open_port

    if os.sep == "/" and not os.path.exists(port):
        raise UserError(f"{port} does not exist: is the board plugged in (with a data cable, not a charge-only "
                        "one)? `mausbox ports --all` lists the serial ports", EXIT_NO_UNIT)
    try:
        open_port(port).close()
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - serial and OS errors
        raise open_error(port, e) from None


def default_version() -> str:
    """The MicroPython the firmware is built and tested against (the pinned 32-bit build's): what `flash`
    writes when no image is named."""
    from mausbox.mpbuild import VERSION

    return VERSION


def chipless_plan(args) -> dict:
    """What `flash` without --board would do, said without a port: the chip comes from the board itself."""
    out: dict = {"board": None, "port": args.port, "chip": None, "firmware": args.firmware,
                 "version": None if args.firmware else (args.version or default_version()),
                 "offset": None, "deploy": "mausbox deploy"}
    if args.firmware:
        out["chip"], out["offset"] = read_image(args.firmware)
    return out


def _say_plan(p: dict) -> None:
    from pathlib import Path

    if p["board"] is None:
        where = f"the board on {p['port']}" if p["port"] else "the only ESP32 board connected"
        print(f"flash: ask {where} which chip it is (esptool)")
        if p["firmware"]:
            print(f"  if it is an {p['chip']}: erase its flash, write {Path(p['firmware']).name}")
            print(f"  at offset {hex(p['offset'])} and verify it")
        else:
            print(f"  fetch MicroPython {p['version']} for that chip (mpflash, online; or the copy")
            print("  fetched before), erase the flash, write it at the chip's bootloader offset")
            print("  and verify it")
        print(f"  then: {p['deploy']} (the unit's board file, else esp32-devkitc)")
        return
    psram = psram_words(p["psram"])
    print(f"flash: {p['board']} is an {p['chip']} board ({p['module']}, {psram})")
    print(f"  image {p['image']}")
    print(f"  erase the flash, write {Path(p['firmware']).name if p['firmware'] else p['image']} at offset {hex(p['offset'])}, verify it")
    if not p["firmware"]:
        print(f"  (the image: {p['download']})")
    print(f"  then: {p['deploy']} (the firmware as .mpy files)")


def run(args) -> int:
    from pathlib import Path

    from mausbox.cli import EXIT_PROBLEM, EXIT_USAGE, UserError
    from mausbox.link import resolve_port
    from mausbox.sim.ports import running_units

    if args.json and not args.dry_run:
        raise UserError("--json goes with --dry-run (a flash shows esptool's progress as it writes)", EXIT_USAGE)
    p = plan(args.board, args.firmware) if args.board else None
    if args.dry_run:
        shown = p if p is not None else chipless_plan(args)
        if args.json:
            import json

            print(json.dumps(shown, indent=2))
        else:
            _say_plan(shown)
        return 0
    version: str = args.version or default_version()  # used only without --firmware
    if p is not None:
        _say_plan(p)
    # Inputs in order, each named when it is the problem: the image (exists, an ESP image, for this board),
    # then the port (exists), then the port is free; only then is the board contacted.
    image = read_image(args.firmware) if args.firmware else None
    port = resolve_port(args.port)
    if any(port in (u["pty"], u.get("link")) for u in running_units()):
        raise UserError("this is a virtual unit: it has no flash chip to write; use `mausbox deploy`", EXIT_USAGE)
    check_port(port)
    print(f"flash: asking the board on {port} which chip it is ...")
    chip = detect_chip(port)
    print(f"flash: the board is an {chip}")
    if p is not None and p["chip"] != chip:
        raise UserError(f"the board on {port} is an {chip}, but {args.board} is an {p['chip']} board: "
                        "refusing to write (wrong board file, or the wrong board plugged in?)", EXIT_PROBLEM)
    path = args.firmware or fetch_image(version, chip, p["image"] if p else None)
    want, offset = image if image is not None else read_image(path)
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
