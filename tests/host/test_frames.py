"""The functions every bus transfer or main-loop pass calls keep their bytecode frame on the C stack.

MicroPython's VM takes a function's frame (its locals, its value stack, 3 words per try block) from the heap
when it is over 11 words (py/objfun.c VM_MAX_STATE_ON_STACK, 44 bytes on a 32-bit port such as the ESP32)
and frees it again on return: an allocation and a free at every call. Under heap_lock it quietly falls back
to the C stack, so the allocation tests do not see it; the frame size is read here from the compiled code
(the 32-bit port's `-v -v` dump: each function's prelude signature)."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import FIRMWARE, INTERPS

needs32 = pytest.mark.skipif(INTERPS["32"].binary is None, reason="no 32-bit MicroPython built")

# file -> functions (every function of that name in the file) on the per-transfer or per-pass path
HOT = {
    "maus/drivers/mfrc522.py": ("_xfer", "_wr", "_rd", "_fifo_write", "_fifo_read", "_view"),
    "maus/cards/reader.py": ("poll",),
    "maus/unit/feedback.py": ("update",),
    "maus/capture/buttons.py": ("next_due",),
    "maus/sim/mfrc522_emu.py": ("write", "write_readinto", "_read", "_write", "_tick", "sleep_us"),
    "maus/sim/machine.py": ("value", "write", "write_readinto", "readinto", "read_u16"),
    "maus/sim/wiring.py": ("block", "sleep_us", "update", "read", "levels"),
    "maus/sim/mfrc522_rf.py": ("_update",),
    "maus/sim/world.py": ("spend", "sleep_until", "value"),
}


def frame_bytes(path) -> dict[str, list[int]]:
    """{function name: [frame state bytes of each function of that name]} of one source file."""
    src = str(path)
    proc = subprocess.run([str(INTERPS["32"].binary), "-X", "heapsize=4m", "-v", "-v", "-c",
                           f"compile(open({src!r}).read(), {src!r}, 'exec')"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    out: dict[str, list[int]] = {}
    for i, ln in enumerate(lines):
        m = re.match(r"File (\S+), code block '([^']*)'", ln)
        if not m or m.group(1) != src:
            continue
        raw = bytes.fromhex(lines[i + 2])
        # py/bc.h MP_BC_PRELUDE_SIG_DECODE_INTO: S (n_state - 1) and E (n_exc_stack)
        z = raw[0]
        s, e, k = (z >> 3) & 0xF, (z >> 2) & 1, 1
        n = 0
        while z & 0x80:
            z = raw[k]
            k += 1
            s |= (z & 0x30) << (2 * n)
            e |= (z & 0x2) << n
            n += 1
        out.setdefault(m.group(2), []).append((s + 1) * 4 + e * 12)  # mp_exc_stack_t: 3 words
    return out


@needs32
def test_hot_functions_keep_their_frame_off_the_heap():
    over = []
    for rel, names in HOT.items():
        sizes = frame_bytes(FIRMWARE / rel)
        for name in names:
            assert name in sizes, f"{rel}: no function {name}"
            over += [f"{rel}:{name} {b} bytes" for b in sizes[name] if b > 44]
    assert not over, over


@needs32
def test_the_reading_sees_a_heap_frame():
    # the reading itself: a function of 12 words is over, one of 11 is not
    sizes = frame_bytes(FIRMWARE / "maus/drivers/mfrc522.py")
    assert max(sizes["_scan"]) > 44 and max(sizes["_cs_high"]) <= 44
