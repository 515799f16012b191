"""Text that came from a unit or a log, made safe for a terminal: control characters (C0, DEL, C1) and the
bidirectional overrides are shown as escapes, so a log or a device cannot move the cursor, retitle the
window or hide text (`\\x1b[2J` is printed as the six characters `\\x1b[2J`)."""

from __future__ import annotations

import re

_BAD = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BAD_NL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _esc(m: re.Match) -> str:
    c = ord(m.group())
    return "\\x%02x" % c if c < 0x100 else "\\u%04x" % c


def shown(value: object, lines: bool = False) -> str:
    """`value` as text to print; with `lines`, newlines stay (a message of several lines), else they are
    escaped too (one field, one line)."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    return (_BAD if lines else _BAD_NL).sub(_esc, str(value))


_PLURALS = {"mouse": "mice", "press": "presses", "entry": "entries", "family": "families"}


def plural(n: int, word: str, many: str | None = None) -> str:
    """"1 card", "2 cards", "0 games": the count and its noun in the number it takes."""
    return f"{n} {word if n == 1 else many or _PLURALS.get(word) or word + 's'}"


def width() -> int:
    """The columns output may use: the terminal's (COLUMNS first), 80 when it is not a terminal."""
    import shutil

    return max(40, shutil.get_terminal_size((80, 24)).columns)


def wrapped(line: str, indent: int, cols: int | None = None) -> list[str]:
    """One line of output in lines of at most `cols` characters (default width()); the lines after the first
    start `indent` spaces in (under the column they continue). Spacing inside the line is kept."""
    import textwrap

    cols = cols or width()
    if len(line) <= cols:
        return [line]
    return textwrap.wrap(line, width=cols, subsequent_indent=" " * min(indent, cols // 2),
                         break_on_hyphens=False, drop_whitespace=True) or [line[:cols]]


def one_line(value: object) -> str:
    """A message for one line of a terminal: its line breaks shown as " | " (a device's text inside an error
    cannot start a line of its own and pass for the tool's), everything else as `shown`."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    text = "\n".join(ln.rstrip() for ln in str(value).replace("\r\n", "\n").strip("\n").split("\n"))
    return shown(text.replace("\n", " | "))


_JSON_BAD = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_safe(text: str) -> str:
    """JSON text (json.dumps, which escapes C0 already) with C1 and bidirectional controls escaped too: the
    same document, safe on a terminal."""
    return _JSON_BAD.sub(lambda m: "\\u%04x" % ord(m.group()), text)
