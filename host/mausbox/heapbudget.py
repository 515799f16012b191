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

# What each simulated chip adds to the heap (bytes; 32-bit build, modules loaded from .mpy), measured
# by tests/fw/simshare.py (each part alone) and rounded up to the next 512. tests/host/test_heapbudget.py
# re-measures them and fails if a figure is too small or more than 10 % too large, so they cannot drift
# from the code.
SIM_SHARE = {
    "rfid": 39424,  # the MFRC522 register emulator (variants, half-bit RF model) and six NTAG216 tags
    "piezo": 6656,  # the piezo waveform model
    "world": 9216,  # virtual time, the soft-IRQ queue, the ESP32 timing model and six simulated pins
    "hw": 16384,  # the virtual unit's Hardware (maus.hw.sim) less what a board holds too (framebuffer, LEDs)
    "flash": 22016,  # a 32 x 512-byte RAM block device mounted as littlefs (a board's flash is not heap)
}

# Which firmware modules make up each simulated part (a test importing one carries that part).
SIM_MODULES = {
    "rfid": ("maus.sim.mfrc522_emu", "maus.sim.mfrc522_rf", "maus.sim.rf_field", "maus.sim.nfc_tags"),
    "piezo": ("maus.sim.piezo",),
    "world": ("maus.sim.world",),
    "hw": ("maus.hw.sim",),
    "flash": ("maus.sim.ramblock",),
}


# What the virtual unit carries: the emulated reader and its tags, the piezo model, virtual time, and the
# simulated Hardware (maus.hw.sim). Its heap by default is the board's plus their share, so the firmware
# runs out of memory in the sim where it would on the board.
UNIT_PARTS = ("rfid", "piezo", "world", "hw")


def sim_share(parts) -> int:
    return sum(SIM_SHARE[p] for p in parts)


def heap_for(parts) -> int:
    """The heap cap of a test that carries these simulated parts: the board's heap plus their share."""
    return BOARD_HEAP + sim_share(parts)


def unit_heap() -> int:
    """The virtual unit's heap: the board's GC heap plus the simulated parts' share."""
    return heap_for(UNIT_PARTS)


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
