"""The virtual unit's `machine`, `esp32` and `neopixel` are whole from power-on and after every soft reset, as a
board's (issue 28): whatever main.py does, and also where main.py does not run (the raw REPL after a soft reset,
which is how mpremote and run-tests.py work). The parts act on the simulated world: pins (a pull, an output read
back, an IRQ on its own edge), the board file's devices on the buses, and UART(1)/UART(2) at the line's timing
(ports/esp32/machine_uart.c)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mausbox.heapbudget import BOARD_HEAP, SIM_SHARE
from mausbox.mpbuild import micropython_binary
from mausbox.sim.run import DEFAULT_HEAP, prepare_root
from mausbox.sim.serial import SerialUnit
from mpremote.transport_serial import SerialTransport

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="MicroPython unix port not installed")

MPREMOTE = str(Path(sys.executable).parent / "mpremote")
# a board's heap, the REPL server's share on top (a board's REPL is C), as bench/bench_vunit.py gives run-tests.py
HEAP = str(BOARD_HEAP + SIM_SHARE["repl"])

PIN = ("import machine\n"
       "print(machine.Pin(4, machine.Pin.IN, machine.Pin.PULL_UP).value())\n")
TOGGLE = ("import time\nfrom machine import Pin\n"
          "edges = []\n"
          "p = Pin(5, Pin.OUT, value=0)\n"
          "p.irq(lambda q: edges.append(q.value()), Pin.IRQ_RISING | Pin.IRQ_FALLING)\n"
          "p.on(); a = p.value(); p.off(); b = p.value()\n"
          "time.sleep_ms(20)\n"
          "print(a, b, edges)\n")


def run(t: SerialTransport, code: str) -> str:
    return t.exec(code).decode().replace("\r\n", "\n")


@pytest.fixture
def bare(tmp_path):
    """A unit with nothing on its flash: machine is the board's all the same."""
    root = tmp_path / "unit"
    root.mkdir()
    with SerialUnit(root, heapsize=HEAP) as u:
        yield u


def soft_reset_session(u: SerialUnit) -> SerialTransport:
    t = SerialTransport(u.pty_path, baudrate=115200)
    t.enter_raw_repl(soft_reset=True)  # as mpremote and run-tests.py: main.py does not run
    return t


def test_pins_after_a_raw_soft_reset_on_an_empty_flash(bare):
    t = soft_reset_session(bare)
    try:
        assert run(t, PIN) == "1\n"
        assert run(t, TOGGLE) == "1 0 [1, 0]\n"
        # the other parts are there too, as on a board
        assert run(t, "from machine import SPI, SoftSPI, I2C, SoftI2C, ADC, PWM, WDT, Timer, Signal, UART, mem32\n"
                      "import machine, esp32, neopixel\n"
                      "print(machine.freq(), len(machine.unique_id()), esp32.Partition(esp32.Partition.RUNNING)"
                      ".info()[4])\n"
                      "print(ADC(Pin(34)).read_u16() if 0 else ADC(machine.Pin(34)).read_u16())\n"
                      "print(I2C(0).scan())") == "160000000 6 factory\n0\n[]\n"
        # as the ESP32 port prints them (machine_hw_spi.c, extmod/machine_mem.c), and a name machine lacks is an
        # ImportError in `from machine import`, as on a board (run-tests.py's machine_i2s_rate.py: SKIP)
        assert run(t, "from machine import SPI, mem16\nprint(SPI(1, 800000), mem16)\n"
                      "try:\n    mem16[1]\nexcept ValueError as e:\n    print(e)\n"
                      "try:\n    from machine import Pin, NoSuchPart\nexcept ImportError:\n    print('ImportError')") == (
            "SPI(id=1, baudrate=800000, polarity=0, phase=0, bits=8, firstbit=0, sck=14, mosi=13, miso=12) "
            "<16-bit memory>\naddress 00000001 is not aligned to 2 bytes\nImportError\n")
        # a soft reset again: a fresh interpreter, the parts are there again
        t.exit_raw_repl()
        t.enter_raw_repl(soft_reset=True)
        assert run(t, PIN) == "1\n"
    finally:
        t.close()


def test_mpremote_exec_and_soft_reset_see_the_pins(bare):
    for args in (["exec", PIN], ["soft-reset", "exec", PIN], ["exec", TOGGLE]):
        out = subprocess.run([MPREMOTE, "connect", bare.pty_path, *args], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.replace("\r\n", "\n") in ("1\n", "1 0 [1, 0]\n")


def test_with_the_app_deployed_the_boards_parts_are_on_the_buses(tmp_path):
    # boot.py loads the simulator's hardware layer (its watchdog keeper) but no app runs: the parts still act on a
    # world wired as the board file says (the OLED at 60 on I2C, the buttons' pull-ups, the reader on SPI)
    root = prepare_root(tmp_path / "unit")
    with SerialUnit(root, heapsize=DEFAULT_HEAP) as u:  # as `mausbox sim --serial` runs it: the simulator's layer
        t = soft_reset_session(u)
        try:
            assert run(t, PIN) == "1\n"
            assert run(t, "from machine import Pin, I2C, SoftI2C\n"
                          "print(SoftI2C(scl=Pin(22), sda=Pin(21)).scan(), Pin(13, Pin.IN).value())") == "[60] 1\n"
            assert run(t, TOGGLE) == "1 0 [1, 0]\n"
        finally:
            t.close()


def test_uart1_writes_at_its_baud_rate_and_loops_back(bare):
    t = soft_reset_session(bare)
    try:
        # ports/esp32/machine_uart.c: its defaults and print format (the rate the ESP32's divider makes)
        assert run(t, "from machine import UART\nu = UART(1)\nprint(u)") == (
            "UART(1, baudrate=115200, bits=8, parity=None, stop=1, tx=10, rx=9, rts=-1, cts=-1, txbuf=256, "
            "rxbuf=256, timeout=0, timeout_char=0, irq=0)\n")
        # write + flush take the line's time (10 bits a byte), as tests/extmod/machine_uart_tx.py checks
        out = run(t, "import time\nfrom machine import UART\nu = UART(1, baudrate=2400, tx=4, rx=5)\n"
                     "t0 = time.ticks_us()\nu.write('Hello World')\nu.flush()\n"
                     "print(time.ticks_diff(time.ticks_us(), t0) // 1000)")
        assert 45 <= int(out) < 60  # 11 bytes * 10 bits / 2400: 45.8 ms, never less (a loaded host may add some)
        # TX and RX on one pin: what it sends comes back once the bytes are on the line
        assert run(t, "import time\nfrom machine import UART\nu = UART(2, baudrate=115200, tx=4, rx=4)\n"
                      "u.write(b'ping')\nprint(u.any())\ntime.sleep_ms(5)\nprint(u.any(), u.read())") == (
            "0\n4 b'ping'\n")
        assert "does not exist" in t.exec_raw("from machine import UART\nUART(3)")[1].decode()
    finally:
        t.close()


LFS = """
import os, time, vfs
class RAM:
    def __init__(self, n):
        self.data = bytearray(n * 512)
    def readblocks(self, b, buf, off):
        a = b * 512 + off
        buf[:] = self.data[a:a + len(buf)]
    def writeblocks(self, b, buf, off):
        a = b * 512 + off
        self.data[a:a + len(buf)] = buf
    def ioctl(self, op, arg):
        return {4: len(self.data) // 512, 5: 512, 6: 0}.get(op)
bdev = RAM(30)
vfs.VfsLfs2.mkfs(bdev)
fs = vfs.VfsLfs2(bdev, mtime=True)
now = time.time()
fs.open("f", "w").close()
vfs.mount(fs, "/ram")
print(now <= fs.stat("f")[8] <= now + 1, os.stat("/ram/f")[8] == fs.stat("f")[8], isinstance(fs, os.VfsLfs2))
vfs.umount("/ram")
"""


def test_littlefs_stamps_files_with_the_units_clock(bare):
    # ports/esp32: mtimes are the RTC's, since 2000, as time.time() (extmod/vfs_lfs_mtime.py); the unix port's littlefs
    # stamps the host's since 1970
    t = soft_reset_session(bare)
    try:
        assert run(t, "import machine\nmachine.RTC().datetime((2031, 5, 6, 0, 7, 8, 9, 0))") == ""
        assert run(t, LFS) == "True True True\n"
    finally:
        t.close()


def test_a_watchdog_started_at_the_repl_resets_the_unit(bare):
    # no app: the live world's thread plays the task watchdog (ports/esp32/machine_wdt.c), a hard reset when not fed
    t = soft_reset_session(bare)
    try:
        assert run(t, "import machine\nmachine.WDT(timeout=500).feed()\nprint('fed')") == "fed\n"
        t.exit_raw_repl()
        t.serial.timeout = 10
        out = t.serial.read_until(b"task_wdt")
        out += t.serial.read_until(b"Type \"help()\" for more information.\r\n>>> ")
        assert b"task_wdt" in out and b"hard reset" in out, out
    finally:
        t.close()


def test_with_the_flash_unmounted_slash_lists_no_bridge_mount(bare):
    # the parts' folder is mounted for the bridge (/.simparts): run-tests.py's builtin_execfile.py, vfs_basic.py and
    # vfs_mountinfo.py unmount "/" and then every mount point os.listdir("/") names, which on a board is none
    t = soft_reset_session(bare)
    try:
        assert run(t, "import os, vfs\nvfs.umount('/')\nprint(os.listdir('/'), list(os.ilistdir('/')))") == "[] []\n"
    finally:
        t.close()
