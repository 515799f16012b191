"""Where running virtual units are found: a registry of their ptys, and pyserial's port list.

Each `mausbox sim --serial` (a `SerialUnit(register=True)`) writes `<data home>/mausbox/units/*.json`. mausbox's
port discovery reads it; so does pyserial's `serial.tools.list_ports.comports()` in this venv, which is
how `mpremote` (`mpremote`, `mpremote connect auto`, `connect list`, `connect id:<unique id>`) enumerates
devices: `make setup` installs a one-line `.pth` that loads this file (and nothing else of mausbox) and
adds the running units to that list as USB serial ports, VID:PID 1209:0001 (pid.codes' test ID), serial
number their machine.unique_id().

Standalone on purpose: it runs in every Python started from the venv, so it imports only the standard
library, and pyserial only once something asks for the port list.

    python -m mausbox.sim.ports --install   # write the .pth into this interpreter's site-packages
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

VID, PID = 0x1209, 0x0001
PTH_NAME = "mausbox-virtual-units.pth"
_TARGET = "serial.tools.list_ports_linux"


def registry_dir() -> Path:
    """Running virtual units announce themselves here (mausbox.paths.data_home() / "units")."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "mausbox" / "units"


def running_units() -> list[dict]:
    """The virtual units whose process is alive and whose pty still exists; stale entries are removed."""
    units: list[dict] = []
    d = registry_dir()
    if not d.is_dir():
        return units
    for f in sorted(d.glob("*.json")):
        try:
            info = json.loads(f.read_text())
            os.kill(int(info["pid"]), 0)
            if not os.path.exists(info["pty"]):
                raise OSError
        except (OSError, ValueError, KeyError, TypeError):
            try:
                f.unlink()  # stale: its process is gone
            except OSError:
                pass
            continue
        units.append(info)
    return units


def port_infos() -> list:
    """The running units as pyserial ListPortInfo entries of USB serial ports."""
    from serial.tools.list_ports_common import ListPortInfo  # type: ignore[import-untyped]

    out = []
    for u in running_units():
        p = ListPortInfo(u.get("link") or u["pty"], skip_link_detection=True)
        p.vid, p.pid = VID, PID
        p.serial_number = u.get("unique_id")
        p.manufacturer = "Mausbox"
        p.product = "virtual unit"
        p.description = f"Mausbox virtual unit ({u['root']})"
        p.hwid = p.usb_info()
        out.append(p)
    return out


def _patch(module) -> None:
    real = module.comports

    def comports(include_links=False):
        found = list(real(include_links))
        try:
            have = {p.device for p in found}
            found += [p for p in port_infos() if p.device not in have]
        except Exception:  # noqa: BLE001 - a broken registry must never break pyserial
            pass
        return found

    comports.__doc__ = real.__doc__
    module.comports = comports


class _Finder:
    """Patches `comports` right after pyserial's Linux module loads (list_ports_posix copies the name)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != _TARGET:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            _patch(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install_hook() -> None:
    """Called from the .pth at interpreter start: cheap until pyserial is imported."""
    if not sys.platform.startswith("linux") or any(type(f).__qualname__ == _Finder.__qualname__ and
                                                   type(f).__module__ == __name__ for f in sys.meta_path):
        return  # already there (a venv's lib64 -> lib link makes site read the .pth twice)
    if _TARGET in sys.modules:
        _patch(sys.modules[_TARGET])
    else:
        sys.meta_path.insert(0, _Finder())


def pth_line() -> str:
    here = str(Path(__file__).resolve())
    return ("import importlib.util as _u; _s = _u.spec_from_file_location('_mausbox_vunit_ports', %r); "
            "_m = _u.module_from_spec(_s); _s.loader.exec_module(_m); _m.install_hook()\n" % here)


def install(site_packages: str | None = None) -> Path:
    import sysconfig

    target = Path(site_packages or sysconfig.get_paths()["purelib"]) / PTH_NAME
    target.write_text(pth_line())
    return target


if __name__ == "__main__":
    if "--install" in sys.argv[1:]:
        print(f"mpremote and pyserial in this venv list running virtual units ({install()})")
    else:
        for u in running_units():
            print(u.get("link") or u["pty"], u.get("unique_id"), u["root"])
