"""The heap the firmware may use: the board's GC heap, and the simulated chips' share on top of it.

One place for these figures; the test harness, the virtual unit and `make bench` read them here.
"""

from __future__ import annotations

import re
from pathlib import Path

# A stock ESP32_GENERIC image (ESP32-WROOM-32, no PSRAM): MicroPython's GC heap starts at 56 KiB and,
# after its one planned growth, is 111,936 bytes (ports/esp32/mpconfigport.h, py/gc.c and the commit
# that introduced heap growth; shared/micropython/README.md). About 40 KB stays with ESP-IDF.
BOARD = "ESP32_GENERIC (ESP32-WROOM-32, no PSRAM)"
BOARD_HEAP = 111936

# What of that heap the firmware may take, board share (issue 15, docs/build.md section 7): after boot
# (to the idle menu), and at any moment of any game. The rest is for GC fragmentation and ESP-IDF.
BOOT_BUDGET = 64000
GAME_BUDGET = 80000
# What a board holds that the virtual unit does not load: nothing since the virtual unit runs the board's own
# hardware layer (maus.hw.esp32) and SSD1306 driver (issue 28 item 2; before, 4,160 bytes for those two modules).
# tests/fw/test_board_only.py checks that the virtual unit loads every module a board's hardware loads. The
# whole-game tests at the board's heap would hold this much besides (tests/fw/unitheap.py).
BOARD_ONLY = 0
# The harness's margin (bench/bench_harness.py): a test's peak keeps 15 % of its cap free. A test held to
# a budget runs capped at budget / (1 - MARGIN) plus the simulator's share (budget_cap): a firmware within
# its budget passes whatever the heap's layout; one that takes much more runs out of memory.
MARGIN = 0.15

# qstr pools on a stock ESP32_GENERIC image (MicroPython 1.28.0): the pool of the modules it freezes is
# generated with 10 "allocated entries" whatever its length (tools/mpy-tool.py: qstr_pool_alloc =
# min(len(new), 10), "so that the first dynamically allocated pool is twice this size"), and each pool a
# running program adds holds twice the entries of the one before (py/qstr.c qstr_add): 20, 40, 80, 160,
# 320, 640, 1280 ... An entry takes 7 bytes: a pointer, a 2-byte hash (MICROPY_QSTR_BYTES_IN_HASH at the
# EXTRA_FEATURES level) and a length byte; a pool adds a 24-byte header. The unix port's pools grow alike.
FROZEN_POOL_ALLOC = 10
QSTR_ENTRY = 7
QSTR_POOL_HEAD = 24
# The most names the firmware interns in a game, for the pool the virtual unit makes for them
# (maus.sim.hw.FW_QSTRS; bench/bench_heap.py prints the counts): a board's pools for them are the board's.
FW_QSTRS = 1200


def board_qstr_tables(n: int) -> int:
    """Bytes of the qstr pool tables a stock ESP32_GENERIC image allocates for n interned names."""
    total, room, alloc = 0, 0, 2 * FROZEN_POOL_ALLOC
    while room < n:
        total += -(-(QSTR_POOL_HEAD + QSTR_ENTRY * alloc) // 16) * 16  # whole 16-byte GC blocks
        room += alloc
        alloc *= 2
    return total


# A unit that has played every game since its boot holds every game's names (1,499: bench/bench_heap.py
# esp32.qstrs.after_every_game; one game after a boot interns ~1,240). Past 1,260 names a board adds a pool of
# 1,280 entries for good, which the virtual unit's credit for the firmware's pools (board_qstr_tables(FW_QSTRS))
# does not cover: a run that plays a season on one unit (bench/bench_season.py) holds it besides.
EVERY_GAME_QSTRS = 1600  # with room to grow: any count from 1,261 to 2,540 takes the same pools
LONG_LIVED_QSTR_TABLES = board_qstr_tables(EVERY_GAME_QSTRS) - board_qstr_tables(FW_QSTRS)

# What each simulated chip adds to the heap (bytes; 32-bit build, modules loaded from .mpy), measured
# by tests/fw/simshare.py (each part alone) and rounded up to the next 512. tests/host/test_heapbudget.py
# re-measures them and fails if a figure is too small or more than 10 % too large, so they cannot drift
# from the code.
SIM_SHARE = {
    "rfid": 35840,  # the MFRC522 register emulator (22 chip variants, half-bit RF model) and six NTAG216 tags
    "piezo": 6144,  # the piezo waveform model (measured 5,520: 6,048 before tests/fw/simshare.py's own names grew)
    "world": 9216,  # virtual time, the soft-IRQ queue, the ESP32 timing model and six simulated pins
    # the virtual unit's hardware (maus.sim.hw, the world's wiring maus.sim.wiring, the emulated machine, time,
    # esp32, neopixel and the SSD1306 controller) less what a board holds too (maus.hw.esp32, the SSD1306 driver,
    # framebuffer, LEDs); measured 47,646, a qstr pool for the simulator's names among it (42,814 before its last
    # names pushed the pools over a doubling); 49,310 with the emulated machine's stand-in wiring for the REPL
    # (maus.sim.machine _Unwired, issue 28: machine's parts after a soft reset, where main.py does not run) and
    # the port's SPI print and memory checks (machine_hw_spi.c, machine_mem.c: run-tests.py's machine tests);
    # about 512 more once maus.hw.esp32's idle spun between its looks at a host session's console (issue 27);
    # 50,030 with the real-time world's stepped catch-up after a stall of the host (maus.sim.hw RealWorld)
    "hw": 50176,
    "flash": 22016,  # a 32 x 512-byte RAM block device mounted as littlefs (a board's flash is not heap)
    # The virtual unit's simulated hardware together, as `mausbox sim` builds it from boards/sim.json (every
    # part, four tags on the pad, and the qstr pool it makes for the firmware's names: maus.sim.world.qstr_room),
    # less the board's own hardware layer and display driver it runs (maus.hw.esp32, maus.drivers.ssd1306):
    # measured 97,854, plus the holes its objects leave among the firmware's, which a board does not have. Those
    # measured as what the boot-budget tests need over the measured share (the smallest heap each passes in,
    # bisected to 16 bytes with MAUSBOX_MPY_HEAP; their cap with the share alone is 164,141): test_unit_heap_boot
    # 164,256 (115 bytes), test_unit_heap_bites 168,096 (3,955: its second boot runs in the interpreter where the
    # first ran out of memory, among that one's holes and interned names). The board-heap game tests need at most
    # 193,248, 8.5 KB under their cap. 97,854 + 3,955 = 101,809, rounded up to 512 (it was set by hand to this).
    "unit": 101888,
    # The virtual unit's REPL server (host/mausbox/sim/replserver.py: the pty's MicroPython REPL, the
    # mounts), idle at its prompt: a board's REPL is C, in no heap (measured by tests/host/test_heapbudget.py)
    # 12800 + the checked os and open of the sandbox (replserver _Jail, issue 18) + the flash's capacity and
    # littlefs block accounting (vflash.py, issue 27: ~3.5 KB, which a board's C littlefs keeps out of the heap)
    # + the board's os, vfs, io, builtins and time (vutime.py), the hidden simulator files (issue 28 item 5)
    # + the flash count the bridge hands over at start (vflash.py, issue 27 item 5) and machine.UART(0, rate)
    # (vumachine.py: the console's rate, issue 32) + the image's sys and micropython, builtins that override, the
    # filesystems the unit mounts and ticks from the reset (issue 28 items 5 and 6), less the setup code, which
    # replboot.py lets go after the import, loaded from .mpy, + the ESP32 port's help() text and sys.ps1/ps2 told
    # to the bridge (a board keeps the text in flash; measured 34,464) + machine's parts loaded at their first use
    # and vfs.VfsLfs2 at its first (the parts' folder mounted, machine's and vfs's __getattr__, the loader's stub:
    # 35,648 with the bridge's mounts kept out of "/" when the flash is unmounted; the parts themselves, ~35 KB,
    # are charged to the code that uses them, where a board's are C: docs/host.md). Near a qstr pool's end: a few
    # more interned names here cost a new pool (about 2.8 KB)
    "repl": 35840,
}

# Which firmware modules make up each simulated part (a test importing one carries that part).
SIM_MODULES = {
    "rfid": ("maus.sim.mfrc522_emu", "maus.sim.mfrc522_rf", "maus.sim.rf_field", "maus.sim.nfc_tags"),
    "piezo": ("maus.sim.piezo",),
    "world": ("maus.sim.world",),
    "hw": ("maus.sim.hw",),
    "flash": ("maus.sim.ramblock",),
}


def sim_share(parts) -> int:
    return sum(SIM_SHARE[p] for p in parts)


def heap_for(parts) -> int:
    """The heap cap of a test that carries these simulated parts: the board's heap plus their share."""
    return BOARD_HEAP + sim_share(parts)


def unit_share(serial: bool = False) -> int:
    """What the virtual unit's simulator takes of its heap: its hardware ("unit") less the qstr pool tables
    a board pays itself for the firmware's names (they are in the board's share), and with `serial` its
    REPL server ("repl")."""
    return SIM_SHARE["unit"] - board_qstr_tables(FW_QSTRS) + (SIM_SHARE["repl"] if serial else 0)


def unit_heap(serial: bool = False) -> int:
    """The virtual unit's heap: the board's GC heap plus the simulator's share, so the firmware runs out of
    memory in the sim where it would on the board (`serial`: served over the REPL pty)."""
    return BOARD_HEAP + unit_share(serial)


def budget_cap(budget: int) -> int:
    """The heap a whole-game test of the virtual unit runs in to hold the firmware to `budget` (board
    share, e.g. GAME_BUDGET): the budget with the harness's margin, plus the simulator's share."""
    return -(-budget * 100 // round((1 - MARGIN) * 100)) + unit_share()


# A test file's HEAP_BUDGET = "..." (tests/conftest.py): "game" and "boot" hold the virtual unit's firmware to
# that budget (budget_cap); "board" is the board's whole GC heap with the virtual unit's simulator share, no margin:
# the physical limit (unit_heap).
BUDGETS = {"game": GAME_BUDGET, "boot": BOOT_BUDGET, "board": BOARD_HEAP}


def file_budget(path: Path) -> str | None:
    """A test file's module-level HEAP_BUDGET ("game", "boot" or "board"), or None; ValueError for another value."""
    import ast

    for n in ast.parse(Path(path).read_text()).body:
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "HEAP_BUDGET" for t in n.targets):
            v = n.value.value if isinstance(n.value, ast.Constant) else None
            if v not in BUDGETS:
                raise ValueError(f"{Path(path).name}: HEAP_BUDGET must be one of {sorted(BUDGETS)}, not {v!r}")
            return v
    return None


def file_cap(parts, budget: str | None = None) -> int:
    """The heap a firmware test file runs in under the suite (tests/conftest.py) and bench/bench_harness.py
    (32-bit objects): for a budget, the board's whole heap ("board": unit_heap) or that budget's cap
    (budget_cap); else the board's heap plus the share of the simulated parts it carries (heap_for)."""
    if budget == "board":
        return unit_heap()
    if budget is not None:
        return budget_cap(BUDGETS[budget])
    return heap_for(parts)



def file_env(budget: str | None = None) -> dict[str, str]:
    """What a test file's process has in its environment besides: at the board's heap, the board-only modules'
    bytes, which tests/fw/unitheap.py holds as ballast (BOARD_ONLY)."""
    return {"MAUSBOX_BOARD_ONLY": str(BOARD_ONLY)} if budget == "board" else {}


_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+([\w., ]+)|import\s+([\w., ]+))", re.M)


def _imports(src: str) -> set[str]:
    names: set[str] = set()
    for m in _IMPORT.finditer(src):
        if m.group(1):
            base = m.group(1)
            names.add(base)
            for n in m.group(2).split(","):
                n = n.strip().split(" as ")[0].strip()
                if n:
                    names.add(f"{base}.{n}")
        else:
            for n in m.group(3).split(","):
                names.add(n.strip().split(" as ")[0].strip())
    return names


def sim_parts(path: Path, search: list[Path]) -> list[str]:
    """The simulated parts a test file carries: every module it imports, directly or through other
    modules found on `search` (firmware/ and tests/fw/), checked against SIM_MODULES."""
    seen: set[str] = set()
    todo = [path]
    mods: set[str] = set()
    while todo:
        p = todo.pop()
        if str(p) in seen:
            continue
        seen.add(str(p))
        for name in _imports(p.read_text()):
            mods.add(name)
            rel = name.replace(".", "/")
            for base in search:
                for cand in (base / f"{rel}.py", base / rel / "__init__.py"):
                    if cand.is_file():
                        todo.append(cand)
    return sorted(part for part, ms in SIM_MODULES.items() if any(m in mods for m in ms))
