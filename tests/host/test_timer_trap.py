"""The machine.Timer(2) trap (maus/hw/esp32.py, beside _KEEPER_TIMER): on MicroPython v1.28 taking timer 2 resets
the timer group that drives ticks_us and the watchdog. No firmware file may take it, by a literal or a name."""

from __future__ import annotations

import ast

from mausbox.paths import FIRMWARE_DIR


def _timer_ids(tree: ast.Module) -> list[tuple[int, object]]:
    consts = {}  # module-level NAME = <int> (or const(<int>))
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Call) and getattr(v.func, "id", None) == "const" and v.args:
                v = v.args[0]
            if isinstance(v, ast.Constant) and isinstance(v.value, int):
                consts[node.targets[0].id] = v.value
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name == "Timer":
                a = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "id"), None)
                if isinstance(a, ast.Constant):
                    out.append((node.lineno, a.value))
                elif isinstance(a, ast.Name):
                    out.append((node.lineno, consts.get(a.id, a.id)))
                else:
                    out.append((node.lineno, ast.dump(a) if a is not None else None))
    return out


def test_no_firmware_file_takes_timer_2():
    found = []
    for path in sorted(FIRMWARE_DIR.rglob("*.py")):
        for line, tid in _timer_ids(ast.parse(path.read_text(), str(path))):
            found.append((path.relative_to(FIRMWARE_DIR).as_posix(), line, tid))
    assert ("maus/hw/esp32.py", found[0][1], 3) in found  # the keeper's, resolved through _KEEPER_TIMER
    bad = [f for f in found if f[2] == 2 or not isinstance(f[2], int)]
    assert not bad, f"machine.Timer(2) resets the timer group of ticks_us and the watchdog (maus/hw/esp32.py): {bad}"


def test_the_check_sees_a_timer_2():
    src = "import machine\n_T = const(2)\nmachine.Timer(_T)\nmachine.Timer(2)\nTimer(id=2)\n"
    assert [t for _, t in _timer_ids(ast.parse(src))] == [2, 2, 2]
