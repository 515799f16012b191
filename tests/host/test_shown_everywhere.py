"""Every print of the CLI that formats a value passes it through `mausbox.shown` (shown, one_line, json_safe, or
json.dumps, which escapes control characters), unless the value is the host's own (a number, a port or path
the user gave, a constant): text from a device or a log never reaches the terminal raw. The check reads the
source of every `cmd_*.py` and `cli.py`, so a new print of device data that bypasses shown.py fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import mausbox

SAFE_CALLS = {"shown", "one_line", "json_safe", "esc", "dumps", "show", "len", "sum", "int", "float", "round",
              "describe", "_fmt", "f", "join_safe",
              "plural", "max", "min", "width"}  # a count and the host's noun; column widths
# Host-side values: what the user typed, the host's paths and constants, numbers it counted.
HOST_NAMES = {"port", "ports", "path", "dest", "out", "n", "i", "k", "count", "took", "args", "e_code", "board",
              "key", "name_w", "mode", "PROTO", "version", "where", "doing", "VERSION", "ok", "bad", "code",
              "total", "seconds", "bar", "rc", "size", "store", "folder", "p", "target", "image", "chip",
              "hint", "quiet_note", "events", "err_count", "field", "width", "col", "drift",
              "winners", "f",  # "P1,P3"; a folder of the store
              "when",  # cmd_clock: the unit's time after it parsed as one
              "text",  # cmd_monitor: json.dumps of the event (ASCII)
              "done", "failed", "cat", "usb", "verb"}  # cmd_cards, cmd_ports: counts, host catalog files
HOST_ATTRS = {"id", "nbytes", "retries", "status", "path", "port", "code", "command", "__name__", "upper"}
CHECKED = ["cmd_logs.py", "cmd_monitor.py", "cmd_doctor.py", "cmd_config.py", "cmd_clock.py", "cli.py", "cmd_cards.py",
           "cmd_deploy.py", "cmd_ports.py"]


_ASSIGNED: dict[str, list[ast.AST]] = {}  # name -> every value assigned to it in the module read
_SEEN: set[str] = set()


def _ok(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Call):
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        if name == "wrapped":  # cuts a line it is given: safe when the line is
            return bool(node.args) and _ok(node.args[0])
        if name in ("join", "upper", "str", "type") and all(_ok(a) for a in node.args):
            return isinstance(fn, ast.Name) or _ok(fn.value) if name != "join" else True
        return name in SAFE_CALLS or (name in ("format", "strftime") and isinstance(fn, ast.Attribute))
    if isinstance(node, ast.Name):
        if node.id in HOST_NAMES:
            return True
        values = _ASSIGNED.get(node.id)
        if not values or node.id in _SEEN:
            return False
        _SEEN.add(node.id)
        try:
            return all(_ok(v) for v in values)  # a local made of safe parts is safe
        finally:
            _SEEN.discard(node.id)
    if isinstance(node, ast.Attribute):  # args.key, store.path, link.port, o.nbytes: the host's
        return isinstance(node.value, ast.Name) and node.value.id in ("args", "store", "link", "st", "self") \
            or node.attr in HOST_ATTRS
    if isinstance(node, ast.Subscript):  # a count the host made
        return isinstance(node.slice, ast.Constant) and node.slice.value in (
            "ok", "check", "pulled", "already_here", "games", "wins", "false_starts", "presses", "late", "locked",
            "reactions", "device", "kind", "game", "skipped", "python_files", "files", "board")
    if isinstance(node, ast.Starred):
        return _ok(node.value)
    if isinstance(node, ast.GeneratorExp):
        return _ok(node.elt)
    if isinstance(node, ast.IfExp):
        return _ok(node.body) and _ok(node.orelse)
    if isinstance(node, ast.BinOp):
        return _ok(node.left) and _ok(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_ok(x) for x in node.elts)
    if isinstance(node, ast.JoinedStr):
        return all(_ok(v.value) if isinstance(v, ast.FormattedValue) else True for v in node.values)
    if isinstance(node, ast.BoolOp):
        return all(_ok(v) for v in node.values)
    if isinstance(node, ast.Compare | ast.UnaryOp):
        return True
    return False


def _unsafe_prints(src: str) -> list[tuple[int, str]]:
    out = []
    tree = ast.parse(src)
    _ASSIGNED.clear()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    _ASSIGNED.setdefault(t.id, []).append(node.value)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"):
            continue
        for a in node.args:
            if not _ok(a):
                out.append((node.lineno, ast.unparse(a)[:100]))
    return out


def test_no_print_of_device_data_bypasses_shown():
    root = Path(mausbox.__file__).parent
    bad = []
    for name in CHECKED:
        bad += ["%s:%d: %s" % (name, ln, text) for ln, text in _unsafe_prints((root / name).read_text())]
    assert not bad, "prints that may carry a device's text raw (wrap them in shown()):\n" + "\n".join(bad)


def test_the_check_catches_a_raw_print():
    assert _unsafe_prints("print(f'unit {info.get(\"unit\")}')")
    assert _unsafe_prints("print('%s' % r.error)")
    assert not _unsafe_prints("print(f'unit {shown(info.get(\"unit\"))}')")
    assert _unsafe_prints("note = f'-- {e}'\nprint(note)")
    assert not _unsafe_prints("note = f'-- {one_line(e)}'\nprint(note)")
