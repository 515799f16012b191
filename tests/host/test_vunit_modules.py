"""The virtual unit's modules are the ESP32_GENERIC image's (issue 28 item 5), seen through the real pty with
mpremote's transport: `os` without the unix port's host functions and with the image's uname(), files and
mounts confined to the unit's folder, `time` with the epoch 2000 and the RTC as its clock, the image's banner and
sys.implementation, tracebacks without the bridge's frames, and none of the simulator's own files in sight."""

from __future__ import annotations

import calendar
import json
import time
from pathlib import Path

import pytest
from mausbox.mpbuild import micropython_binary
from mausbox.sim.serial import SerialUnit
from mpremote.transport import TransportExecError
from mpremote.transport_serial import SerialTransport

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

BRIDGE = str(Path(__file__).resolve().parents[2] / "host" / "mausbox" / "sim")


@pytest.fixture
def unit(tmp_path):
    root = tmp_path / "a" / "b" / "unit"
    root.mkdir(parents=True)
    with SerialUnit(root, extra_path=[]) as u:
        t = SerialTransport(u.pty_path, baudrate=115200)
        t.enter_raw_repl(soft_reset=False)
        try:
            yield u, t
        finally:
            t.close()


def run(t: SerialTransport, code: str) -> str:
    return t.exec(code).decode().replace("\r\n", "\n")


def error(t: SerialTransport, code: str) -> str:
    with pytest.raises(TransportExecError) as e:
        t.exec(code)
    return e.value.error_output.replace("\r\n", "\n")


def files(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if ".sim" not in p.parts)


def test_os_has_no_host_functions_and_the_images_uname(unit):
    _, t = unit
    for mod in ("os", "uos"):
        assert run(t, f"import {mod}\nprint([k for k in ('system', 'getenv', 'putenv', 'unsetenv', 'VfsPosix') "
                      f"if hasattr({mod}, k)])") == "[]\n"
    # not through the bridge's own globals either (every function's __globals__ is reachable)
    assert run(t, "g = open.__globals__\nprint(hasattr(g['os'], 'system'), hasattr(g['builtins'].__import__('os'),"
                  " 'system'), hasattr(g['_real_import']('uos'), 'system'))") == "False False False\n"
    out = run(t, "import os, sys\nu = os.uname()\nprint(u.sysname, u.nodename, u.release)\nprint(u.version)\n"
                 "print(u.machine)\nprint(sys.version)\nprint(u)")
    sysname, version, machine, sysversion, whole = out.splitlines()
    assert whole == f"(sysname='esp32', nodename='esp32', release='1.28.0', version='{version}', machine='{machine}')"
    assert sysname == "esp32 esp32 1.28.0"
    assert version.startswith("v1.28.0 on 20") and sysversion.endswith("MicroPython " + version)
    assert machine == "Generic ESP32 module with ESP32 (Mausbox virtual unit)"


def test_files_and_mounts_stay_in_the_units_flash(unit, tmp_path):
    u, t = unit
    before = files(tmp_path)
    for code in ("open('/../x', 'w').write('1')", "import io\nio.open('/../../y', 'w').write('2')",
                 "import builtins\nbuiltins.open('/../../../z', 'w').write('3')",
                 "import builtins\nbuiltins.__dict__['open']('../w', 'w').write('4')"):
        run(t, code)
    # "/.." is "/", as on a board's littlefs: every file landed at the unit's top, none outside
    assert [p for p in files(tmp_path) if p not in before] == [f"a/b/unit/{n}" for n in "wxyz"]
    assert "AttributeError" in error(t, "import vfs\nvfs.mount(vfs.VfsPosix('/tmp'), '/h')")
    assert "AttributeError" in error(t, "import os\nos.mount(os.VfsPosix('/tmp'), '/h')")
    # the type of a mounted host folder is not to be had either, and would not mount
    assert run(t, "import vfs\nprint(vfs.mount())") == "[(<VfsLfs2>, '/')]\n"  # as a board lists its flash
    assert "Errno" in error(t, "import os\nos.umount('/.sim0')")
    assert run(t, "import os\nprint('h' in os.listdir('/'))") == "False\n"


def test_time_counts_from_2000_and_is_the_rtcs(unit):
    u, t = unit
    got = run(t, "import time\nprint(time.gmtime(0))\nprint(time.localtime(0))\nprint(type(time.time()).__name__)\n"
                 "print(time.time())\nprint(time.mktime((2000, 1, 1, 0, 0, 0, 0, 0)))\n"
                 "print(time.mktime((2024, 2, 29, 23, 59, 60, 0, 0)))\nprint(hasattr(time, 'clock'))")
    g0, l0, kind, now, m0, leap, clock = got.splitlines()
    assert g0 == l0 == "(2000, 1, 1, 0, 0, 0, 5, 1)"
    assert kind == "int" and clock == "False"
    assert abs(int(now) + 946684800 - time.time()) < 30
    assert m0 == "0" and int(leap) == calendar.timegm((2024, 3, 1, 0, 0, 0)) - 946684800
    # machine.RTC and time are one clock: set the RTC, time follows, and both survive a soft reset
    run(t, "import machine\nmachine.RTC().datetime((2031, 7, 8, 1, 9, 10, 11, 0))")
    after = run(t, "import machine, time\nprint(machine.RTC().datetime())\nprint(time.localtime())")
    rtc, lt = (eval(x) for x in after.splitlines())
    assert rtc[:3] == lt[:3] == (2031, 7, 8) and rtc[4:6] == lt[3:5] == (9, 10)
    assert rtc[3] == lt[6] == 1  # Tuesday
    assert "offset_s" in json.loads((u.root / "clock.json").read_text())
    t.exit_raw_repl()
    t.enter_raw_repl(soft_reset=True)
    assert run(t, "import time\nprint(time.localtime()[:3])") == "(2031, 7, 8)\n"


def test_the_images_banner_and_implementation(unit):
    _, t = unit
    impl = run(t, "import sys\ni = sys.implementation\nprint(i._machine, '|', i._build, '|', i.name, i.version[:3])")
    assert impl == "Generic ESP32 module with ESP32 | ESP32_GENERIC | micropython (1, 28, 0)\n"
    t.serial.write(b"\r\x02")  # leave the raw REPL: the friendly banner
    out = t.read_until(1, b">>> ", timeout=10).decode()
    line = [ln for ln in out.split("\r\n") if ln.startswith("MicroPython ")][0]
    assert line.startswith("MicroPython v1.28.0 on 20") and line.endswith("; Generic ESP32 module with ESP32")
    t.enter_raw_repl(soft_reset=False)


def test_tracebacks_have_no_bridge_frame(unit):
    _, t = unit
    err = error(t, "def f():\n    open('/nope/none')\nf()")
    assert "OSError" in err and 'line 2, in f' in err and BRIDGE not in err and "replserver" not in err
    err = error(t, "import machine\nmachine.RTC().datetime((1, 2))")
    assert "ValueError" in err and BRIDGE not in err
    out = run(t, "import sys\ntry:\n    open('/nope/none')\nexcept OSError as e:\n    sys.print_exception(e)")
    assert "OSError" in out and BRIDGE not in out and "replserver" not in out


def test_the_simulators_files_are_not_the_units(unit):
    u, t = unit
    run(t, "import machine\nmachine.RTC().memory(b'kept')\nmachine.RTC().datetime((2031, 7, 8, 1, 9, 10, 11, 0))")
    assert {".sim", ".rtcmem", "clock.json"} <= {p.name for p in u.root.iterdir()}  # the host keeps them there
    assert run(t, "import os\nprint(os.listdir('/'), os.listdir(), [e[0] for e in os.ilistdir('/..')])") \
        == "[] [] []\n"
    for code in ("open('/.rtcmem')", "import io\nio.open('clock.json')", "import os\nos.stat('/.sim/unique_id')",
                 "import os\nos.chdir('/.sim')", "import os\nos.remove('/clock.json')"):
        assert "ENOENT" in error(t, code), code
    # the unit's own RTC still reads them, after a soft reset too
    t.exit_raw_repl()
    t.enter_raw_repl(soft_reset=True)
    assert run(t, "import machine, time\nprint(machine.RTC().memory(), time.localtime()[:3])") \
        == "b'kept' (2031, 7, 8)\n"


WAIT_S = 30  # a ceiling for a unit that never answers


def test_ticks_count_from_power_on_and_a_hard_reset_and_run_on_over_a_soft_one(tmp_path):
    # A board's ticks are its esp_timer's (ports/esp32/mphalport.c): from the chip's reset, kept by a soft reset.
    # Bounds, not speeds: the unit cannot have counted more than the host saw go by since its power-on.
    root = tmp_path / "unit"
    root.mkdir()
    t0 = time.monotonic()
    with SerialUnit(root, extra_path=[]) as u:
        t = SerialTransport(u.pty_path, baudrate=115200)
        try:
            t.enter_raw_repl(soft_reset=False)
            ms, us = map(int, run(t, "import time\nprint(time.ticks_ms(), time.ticks_us())").split())
            assert 0 <= ms <= (time.monotonic() - t0) * 1000 + 1
            assert 0 <= us <= (time.monotonic() - t0) * 1000000 + 1000
            # asyncio's C task queue and its Python half agree on a clock: a sleep, a timeout (a cancel) and a
            # task's result come in their order, not hours late
            assert run(t, "import asyncio\nasync def w(ms):\n    await asyncio.sleep_ms(ms)\n    return ms\n"
                          "async def main():\n    t = asyncio.create_task(w(50))\n    try:\n"
                          "        await asyncio.wait_for_ms(w(60000), 100)\n    except asyncio.TimeoutError:\n"
                          "        print('timed out')\n    print(await t)\nasyncio.run(main())") == "timed out\n50\n"
            t.exit_raw_repl()
            t.enter_raw_repl(soft_reset=True)
            after_soft = int(run(t, "import time\nprint(time.ticks_ms())"))
            assert ms <= after_soft <= (time.monotonic() - t0) * 1000 + 1
            t1 = time.monotonic()
            t.exec_raw_no_follow("import machine\nmachine.reset()")
            t.read_until(1, b"\r\n>>> ", timeout=WAIT_S)  # rebooted: the friendly REPL of a new power-on
            t.enter_raw_repl(soft_reset=False)
            after_hard = int(run(t, "import time\nprint(time.ticks_ms())"))
            assert 0 <= after_hard <= (time.monotonic() - t1) * 1000 + 1
        finally:
            t.close()


ESP32_SYS = ["argv", "byteorder", "exit", "implementation", "maxsize", "modules", "path", "platform",
             "print_exception", "ps1", "ps2", "stderr", "stdin", "stdout", "version", "version_info"]
ESP32_MICROPYTHON = ["RingIO", "alloc_emergency_exception_buf", "const", "heap_lock", "heap_unlock", "kbd_intr",
                     "mem_info", "opt_level", "qstr_info", "schedule", "stack_use"]


def test_sys_and_micropython_are_the_images(unit):
    u, t = unit
    # py/modsys.c and py/modmicropython.c as ESP32_GENERIC builds them: no atexit, executable, tracebacklimit,
    # exc_info, mem_total (the unix port's)
    assert run(t, "import sys, micropython\nprint(sorted(k for k in dir(sys) if k[0] != '_'))\n"
                  "print(sorted(k for k in dir(micropython) if k[0] != '_'))") == \
        f"{ESP32_SYS}\n{ESP32_MICROPYTHON}\n".replace('"', "'")
    assert run(t, "import sys\nprint(sys.stdout, sys.stderr, sys.stdout.buffer, sys)") == \
        "<io.TextIOWrapper 1> <io.TextIOWrapper 2> <io.FileIO 1> <module 'sys'>\n"
    # a ROM module: only path, ps1 and ps2 can be set
    for name in ("x", "tracebacklimit", "stdout", "atexit"):
        assert "AttributeError" in error(t, f"import sys\nsys.{name} = 1"), name
    # sys.path is where imports look: a new list too
    (u.root / "extra").mkdir()
    (u.root / "extra" / "far.py").write_text("print('far imported')\n")
    assert "ImportError" in error(t, "import far")
    assert run(t, "import sys\nsys.path = sys.path + ['/extra']\nimport far\nprint(sys.path[-1])") == \
        "far imported\n/extra\n"
    assert "ImportError" in error(t, "import sys\nsys.path = ['']\ndel sys.modules['far']\nimport far")


def test_a_filesystem_the_unit_mounts_gets_the_boards_calls_only(unit):
    u, t = unit
    # extmod/vfs.c on a board: mount, chdir("/") into it, then open with the path relative to it; no stat, getcwd
    # or ilistdir of the virtual unit's own checks (mpremote's test_errno.sh)
    run(t, "import os, vfs\ncalls = []\nclass FS:\n"
           "    def mount(self, r, m): calls.append(('mount', r, m))\n"
           "    def umount(self): calls.append(('umount',))\n"
           "    def chdir(self, p): calls.append(('chdir', p))\n"
           "    def open(self, p, m):\n        calls.append(('open', p, m))\n        raise OSError(19)\n"
           "fs = FS()\nvfs.mount(fs, '/fs')\nos.chdir('/fs')")
    assert "ENODEV" in error(t, "open('x.py')")
    assert run(t, "import vfs\nprint(calls)\nprint(sorted(p for f, p in vfs.mount()))") == \
        "[('mount', False, False), ('chdir', '/'), ('open', 'x.py', 'r')]\n['/', '/fs']\n"
    # a path with ".." never goes past the flash's checks, user mount or not
    run(t, "open('/fs/../../../y', 'w').write('1')")
    assert (u.root / "y").read_text() == "1" and not (u.root.parent / "y").exists()
    assert run(t, "import os, vfs\nvfs.umount('/fs')\nprint(calls[-1], os.getcwd(), vfs.mount())") == \
        "('umount',) / [(<VfsLfs2>, '/')]\n"
