"""The board's line editor for the virtual unit's friendly REPL: `shared/readline/readline.c` as an ESP32 builds it,
and `py/repl.c`'s rule for when an input needs more lines and how completions are printed."""

from __future__ import annotations

HISTORY = 8  # MICROPY_READLINE_HISTORY_SIZE on the ESP32 (py/mpconfig.h default)


def continue_with_input(text: bytes) -> bool:
    """MicroPython's `mp_repl_continue_with_input` (py/repl.c): does this REPL input need more lines?"""
    if not text:
        return False
    first = text.split(b"\n", 1)[0]
    word = first.split(None, 1)[0] if first.split() else b""
    word = word.split(b"(", 1)[0].rstrip(b":")
    compound = text.startswith(b"@") or word in (
        b"if", b"while", b"for", b"try", b"with", b"def", b"class", b"async")
    NONE, S1, D1, S3, D3 = range(5)
    q = NONE
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in (0x27, 0x22):  # ' "
            one, three = (S1, S3) if c == 0x27 else (D1, D3)
            if q in (NONE, three) and text[i + 1:i + 3] == bytes((c, c)):
                i += 2
                q = three if q == NONE else NONE
            elif q in (NONE, one):
                q = one if q == NONE else NONE
        elif c == 0x5C and i + 1 < n and text[i + 1] in (0x27, 0x22, 0x5C):
            if q != NONE:
                i += 1
        elif q == NONE:
            if c in b"([{":
                depth += 1
            elif c in b")]}":
                depth -= 1
        i += 1
    if q in (S3, D3):
        return True
    if depth > 0 and q == NONE:
        return True
    if text.endswith(b"\\"):
        return True
    return compound and not text.endswith(b"\n")


def columns(names: list[bytes]) -> bytes:
    """py/repl.c print_completions: 16-character slots, at most 64 characters a line (cooked)."""
    out = bytearray()
    line_len = 64
    for n in names:
        gap = (line_len + 15) // 16 * 16 - line_len
        if gap < 2:
            gap += 16
        if line_len + gap + len(n) <= 64:
            out += b" " * gap + n
            line_len += gap + len(n)
        else:
            out += b"\r\n" + n
            line_len = len(n)
    return bytes(out + b"\r\n")


class Readline:
    """`shared/readline/readline.c` as an ESP32 builds it (emacs keys, auto-indent, 8 lines of history,
    no word moves): one key at a time, echo through `emit`. `complete(text)` asks the unit for Tab."""

    ENABLED, JUST_ADDED = 1, 2

    def __init__(self, emit, complete):
        self.emit = emit
        self.complete = complete
        self.hist: list[bytes] = []
        self.line = bytearray()
        self.orig = self.cursor = 0
        self.esc = 0  # 0 none, 1 ESC, 2 ESC [, 3 ESC [ digit, 4 ESC O
        self.esc_digit = 0
        self.hist_cur = -1
        self.last_nl = 0
        self.ai = 0
        self.prompt = b""

    def init(self, line: bytearray, prompt: bytes) -> None:
        self.line = line
        self.orig = self.cursor = len(line)
        self.esc = self.esc_digit = 0
        self.hist_cur = -1
        self.prompt = prompt
        self.emit(prompt)
        if not line:
            self.ai = self.ENABLED
        self._auto_indent()

    def note_newline(self, prompt: bytes) -> None:
        """The next line of a compound statement: pyexec.c calls readline() again (auto-indent stays off
        once a space or Tab cancelled it)."""
        self.init(self.line, prompt)

    def _auto_indent(self) -> None:
        if not self.ai & self.ENABLED:
            return
        line = self.line
        if len(line) > 1 and line[-1] == 0x0A:
            i = len(line) - 1
            while i > 0 and line[i - 1] != 0x0A:
                i -= 1
            j = i
            while j < len(line) and line[j] == 0x20:
                j += 1
            if i > 0 and j + 1 == len(line):  # the previous line is not the first and is all spaces
                k = i - 1
                while k > 0:
                    if line[k - 1] == 0x0A:
                        return  # the last two lines are all spaces: no auto-indent
                    if line[k - 1] != 0x20:
                        break
                    k -= 1
            n = (j - i) // 4 + (1 if line[-2] == 0x3A else 0)
            for _ in range(n):
                line += b"    "
                self.emit(b"    ")
                self.cursor += 4
                self.ai |= self.JUST_ADDED

    def _back(self, n: int) -> None:
        if n <= 0:
            return
        self.emit(b"\b" * n if n <= 4 else b"\x1b[%dD" % n)

    def push_history(self, entry: bytes) -> None:
        if entry and (not self.hist or self.hist[0] != entry):
            self.hist.insert(0, entry)
            del self.hist[HISTORY:]

    def process(self, c: int) -> int:
        """-1: keep reading; 0: a line (Enter); a control char for the REPL (Ctrl-A..E on an empty
        line, Ctrl-C)."""
        line = self.line
        last_len = len(line)
        back = fwd = 0
        redraw = False
        key = None
        if self.esc == 0:
            if 1 <= c <= 5 and len(line) == self.orig:
                return c
            if c == 3:
                return c
            key = {1: "home", 2: "left", 4: "delete", 5: "end", 6: "right", 14: "down", 16: "up"}.get(c)
            if key is None:
                if c == 11:  # Ctrl-K: kill to the end of the line
                    del line[self.cursor:]
                    redraw = True
                elif c == 21:  # Ctrl-U: kill from the start of the line
                    back = self.cursor - self.orig
                    del line[self.orig:self.cursor]
                    redraw = True
                elif self._newline(c):
                    self.emit(b"\r\n")
                    self.push_history(bytes(line[self.orig:]))
                    return 0
                elif c == 27:
                    self.esc = 1
                elif c in (8, 127):
                    if self.cursor > self.orig:
                        seg = line[self.orig:self.cursor]
                        n = 4 if len(seg) >= 4 and not seg.strip(b" ") else 1
                        del line[self.cursor - n:self.cursor]
                        back = n
                        redraw = True
                elif self.ai & self.JUST_ADDED and c in (9, 32):
                    # Tab or space right after auto-indent: no auto-indent (a space takes back 3 of the 4)
                    self.ai = 0
                    if c == 32:
                        back = 3
                        del line[-3:]
                elif c == 9:
                    if line and line[self.cursor - 1:self.cursor] in (b" ", b"\t", b"\n", b"\r"):
                        ins = b"    "
                    else:
                        ins = self.complete(bytes(line[self.orig:self.cursor]))
                    if ins == b"\n":  # many matches: the unit printed them; draw the line again
                        self.emit(self.prompt + bytes(line[self.orig:self.cursor]))
                        redraw = True
                    elif ins:
                        line[self.cursor:self.cursor] = ins
                        redraw = True
                        fwd = len(ins)
                elif 32 <= c <= 126:
                    line.insert(self.cursor, c)
                    redraw = True
                    fwd = 1
        elif self.esc == 1:
            self.esc = {0x5B: 2, 0x4F: 4}.get(c, 0)
        elif self.esc == 2:
            self.esc = 0
            if 0x30 <= c <= 0x39:
                self.esc, self.esc_digit = 3, c
            else:
                key = {0x41: "up", 0x42: "down", 0x43: "right", 0x44: "left", 0x48: "home", 0x46: "end"}.get(c)
        elif self.esc == 3:
            self.esc = 0
            if c == 0x7E:
                key = {0x31: "home", 0x37: "home", 0x34: "end", 0x38: "end", 0x33: "delete"}.get(self.esc_digit)
        elif self.esc == 4:
            self.esc = 0
            key = {0x48: "home", 0x46: "end"}.get(c)
        if key == "home":
            back = self.cursor - self.orig
        elif key == "end":
            fwd = len(line) - self.cursor
        elif key == "left":
            back = 1 if self.cursor > self.orig else 0
        elif key == "right":
            fwd = 1 if self.cursor < len(line) else 0
        elif key == "delete":
            if self.cursor < len(line):
                del line[self.cursor]
                redraw = True
        elif key == "up":
            if self.hist_cur + 1 < len(self.hist):
                self.hist_cur += 1
                back = self.cursor - self.orig
                del line[self.orig:]
                line += self.hist[self.hist_cur]
                redraw = True
                fwd = len(line) - self.orig
        elif key == "down":
            if self.hist_cur >= 0:
                self.hist_cur -= 1
                back = self.cursor - self.orig
                del line[self.orig:]
                if self.hist_cur >= 0:
                    line += self.hist[self.hist_cur]
                redraw = True
                fwd = len(line) - self.orig
        # redraw, efficiently (as readline.c does)
        if back > 0:
            self._back(back)
            self.cursor -= back
        if redraw:
            if len(line) < last_len:
                self.emit(b"\x1b[K")
            self.emit(bytes(line[self.cursor:]))
            self._back(len(line) - (self.cursor + fwd))
            self.cursor += fwd
        elif fwd > 0:
            self.emit(bytes(line[self.cursor:self.cursor + fwd]))
            self.cursor += fwd
        self.ai &= ~self.JUST_ADDED
        return -1

    def _newline(self, c: int) -> bool:
        if c in (13, 10) and self.last_nl in (0, c):
            self.last_nl = c
            return True
        self.last_nl = 0
        return False
