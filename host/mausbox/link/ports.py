"""Serial ports that may be units: USB bridges of ESP32 boards and running virtual units; opening one
without disturbing the board behind it."""

from __future__ import annotations

import errno
import time
from dataclasses import dataclass

import serial  # type: ignore[import-untyped]
import serial.tools.list_ports  # type: ignore[import-untyped]

from mausbox.errors import EXIT_NO_UNIT, UserError

BAUD = 115200  # every unit's console at power-on
FAST_BAUD = 921600  # the rate a link command agrees on after hello unless `--baud` names another (bounds.py)
BAUD_HELP = ("serial rate to agree on with the unit after hello (default %(default)s; 115200: no switch). A unit on "
             "native USB, in a game or with older firmware stays at 115200, and so does a line that cannot carry it")
# USB bridges found on ESP32 boards: (vid, pid or None for any) -> name
USB_IDS = {
    (0x10C4, 0xEA60): "CP210x",
    (0x1A86, 0x7523): "CH340",
    (0x1A86, 0x55D4): "CH9102",
    (0x303A, None): "Espressif USB",
    (0x0403, 0x6001): "FTDI FT232R",
    (0x0403, 0x6010): "FTDI FT2232",
    (0x0403, 0x6015): "FTDI FT231X",
}
BUSY_HINT = ("another program holds it: usually an open `mausbox monitor` or `mpremote` session, a serial "
             "monitor or IDE (Thonny, Arduino, VS Code), or ModemManager probing new ports")


@dataclass
class PortInfo:
    device: str
    kind: str  # "virtual", a USB bridge name, or "serial"
    description: str
    vid: int | None = None
    pid: int | None = None
    serial_number: str | None = None
    likely_esp32: bool = False


def usb_kind(vid: int | None, pid: int | None) -> str | None:
    if vid is None:
        return None
    return USB_IDS.get((vid, pid)) or USB_IDS.get((vid, None))


def list_ports(include_virtual: bool = True) -> list[PortInfo]:
    """Serial ports that may be units: USB bridges used on ESP32 boards, then running virtual units."""
    from mausbox.sim.ports import running_units

    units = running_units()
    virtual = {u.get("link") or u["pty"] for u in units}
    ports = []
    for p in sorted(serial.tools.list_ports.comports(), key=lambda p: p.device):
        kind = usb_kind(p.vid, p.pid)
        if p.vid is None and not kind or p.device in virtual:
            continue  # a legacy UART (ttyS*): never a unit; a virtual unit (pyserial lists it too): below
        ports.append(PortInfo(p.device, kind or "serial", p.description or "", p.vid, p.pid, p.serial_number,
                              likely_esp32=kind is not None))
    if include_virtual:
        for u in units:
            ports.append(PortInfo(u.get("link") or u["pty"], "virtual", f"virtual unit, folder {u['root']}",
                                  serial_number=u.get("unique_id"), likely_esp32=True))
    return ports


def unit_ports() -> list[str]:
    """Ports that look like units (as `mausbox ports` lists them)."""
    return [p.device for p in list_ports() if p.likely_esp32]


def resolve_port(port: str | None) -> str:
    """The port to use: the one given, else the only likely unit connected."""
    if port:
        return port
    found = unit_ports()
    if not found:
        raise UserError("no unit found: connect one by USB (or start `mausbox sim --serial`), or name it "
                        "with --port", EXIT_NO_UNIT)
    if len(found) > 1:
        raise UserError(f"several possible units ({', '.join(found)}): choose one with --port", EXIT_NO_UNIT)
    return found[0]


def open_error(port: str, e: BaseException) -> UserError:
    """A friendly sentence for a port that would not open."""
    text = str(e)
    code = getattr(e, "errno", None)
    if "exclusively lock" in text or code in (errno.EBUSY, errno.EAGAIN):
        return UserError(f"{port} is busy: {BUSY_HINT}", EXIT_NO_UNIT)
    if isinstance(e, PermissionError) or code == errno.EACCES or "Permission denied" in text:
        return UserError(f"no permission to open {port}: add yourself to the serial group "
                         "(`sudo usermod -aG dialout $USER`, then log out and in again)", EXIT_NO_UNIT)
    if isinstance(e, FileNotFoundError) or code == errno.ENOENT or "No such file" in text:
        return UserError(f"{port} does not exist: is the unit plugged in? `mausbox ports` lists what is "
                         "connected", EXIT_NO_UNIT)
    return UserError(f"cannot open {port}: {text}", EXIT_NO_UNIT)


def open_port(port: str, baud: int = BAUD, busy_wait: float = 2.0) -> serial.Serial:
    """Open a port exclusively, as mpremote does for ESP32 boards: DTR and RTS low before the port opens,
    since on most ESP32 boards they drive EN and GPIO0 and toggling them resets the chip (or holds it in its
    bootloader). A port the previous command is still letting go of gets `busy_wait` seconds."""
    deadline = time.monotonic() + busy_wait
    while True:
        ser = serial.Serial(baudrate=baud, timeout=0, exclusive=True)
        ser.port = port
        try:
            ser.dtr = False  # GPIO0 high: normal boot
            ser.rts = False  # EN high: running
            ser.open()
            return ser
        except (OSError, serial.SerialException) as e:
            err = open_error(port, e)
            if "is busy" in str(err) and time.monotonic() < deadline:
                time.sleep(0.1)
                continue
            raise err from None
