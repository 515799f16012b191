"""The virtual unit in a terminal: buttons on the keyboard, cards from a search box, the OLED drawn
from the real framebuffer, LEDs, buzzer and the game log as it is written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mausbox.mpbuild import micropython_binary
from mausbox.paths import FIRMWARE_PKG
from mausbox.sim import run as simrun
from mausbox.sim import words

CLICK, DOUBLE, LONG, YOUNG = "123456", "qwerty", "asdfgh", "zxcvbn"
KIND_OF_LIST = {"mice": "mouse", "clothing": "clothing", "cheese_cards": "cheese", "cards": "card"}
LEGEND = "1-6 click  q-y double  a-h long  z-n young  / card  - off  k/K knock  N noise  ? help  Q quit"
LEGEND_SHORT = "1-6 click  q-y double  a-h long  / card  - off  ? every key  Q quit"  # under 80 columns
HELP = [  # the full help (`?`): every key, as the README's table
    "Keys of the virtual unit",
    "",
    "1 2 3 4 5 6     player 1-6 presses their button (a click)",
    "q w e r t y     a double press of player 1-6",
    "a s d f g h     a long press (1.2 s) of player 1-6",
    "z x c v b n     a 2.5 s hold (join as a young player)",
    "/               put a card on the pad: type to search (mouse 7, Koffer,",
    "                cheese, mausgeflippt), Up/Down to pick a match, Enter puts it",
    "                on the pad, Esc cancels",
    "-               take the last card off the pad",
    "0               clear the pad",
    "k / K           a gentle / a hard knock on the castle",
    "N               ambient noise on or off",
    "R               restart the app when the unit sits at its REPL (its EN button)",
    "?               this help, or back to the unit",
    "Q or Ctrl-C     quit",
    "",
    "A game: tap its game card (/ mausgef Enter, then -), press to join, a double",
    "press starts. The unit's language is its `lang` setting (Settings menu, or",
    "mausbox config set lang en).",
]
MIN_W, MIN_H = 80, 24  # the smallest terminal the screen is laid out for
_QUAD = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"


def catalog_cards() -> list[tuple[str, str]]:
    """(identity, label) for every card of every catalog, game cards first."""
    from maus.cards import ident as cards

    out = [("game/mausgeflippt", "game card Mausgeflippt"), ("game/mim", "game card M is for Mouse"),
           ("game/mms", "game card Mucks Mäuschen Still")]
    for path in sorted((FIRMWARE_PKG / "catalogs").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        game = data.get("game", path.stem)
        for key, kind in KIND_OF_LIST.items():
            for entry in data.get(key, []) if isinstance(data.get(key), list) else []:
                if not isinstance(entry, dict) or "id" not in entry:
                    continue
                ident = cards.format_id(game, kind, entry["id"]) if isinstance(entry["id"], int) else None
                if ident is None:
                    continue
                rest = ", ".join(_flat(v) for k, v in entry.items() if k != "id")
                out.append((ident, f"{kind} {entry['id']}: {rest}"))
    return out


def _flat(v) -> str:
    if isinstance(v, list):
        return " ".join(_flat(x) for x in v)
    if isinstance(v, dict):
        return " ".join(_flat(x) for x in v.values())
    return str(v)


def search(cards: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
    """The cards every word of the query matches (a number: the card's number), best first: the card whose
    identity or description is the query, then those whose description holds it as a phrase, then those
    of the kind named (`cheese 1`, `clothing`), then the rest in catalog order."""
    words = query.lower().split()
    if not words:
        return []
    phrase = " ".join(words)
    nums = [w for w in words if w.isdigit()]
    hits = []
    for i, (ident, label) in enumerate(cards):
        hay = f"{ident} {label}".lower()
        if all(w in hay for w in words if not w.isdigit()) and all(
                ident.rsplit("/", 1)[-1].lstrip("0") == n.lstrip("0") for n in nums):
            kind, _, rest = label.lower().partition(": ")
            kind_words = kind.split()
            if phrase in (ident.lower(), rest.strip()):
                rank = 0
            elif phrase in rest:
                rank = 1
            elif kind_words and kind_words[0] in words or any(w in ident.lower().split("/") for w in words):
                rank = 2
            else:
                rank = 3
            hits.append((rank, i, ident, label))
    return [(ident, label) for _r, _i, ident, label in sorted(hits)]


def render_oled(hexframe: str, width: int = 128, height: int = 64, braille: bool = False) -> list[str]:
    """An SSD1306 MONO_VLSB frame as text: 2x2 pixels a character (quadrant blocks, 64x32), or 2x4 (braille
    dots, 64x16) for a small terminal."""
    try:
        buf = bytes.fromhex(hexframe)
    except ValueError:
        return []

    def px(x, y):
        return (buf[x + (y // 8) * width] >> (y % 8)) & 1 if x < width and y < height and \
            x + (y // 8) * width < len(buf) else 0

    rows = []
    if braille:  # dots 1-8 of a braille cell (U+2800): left column 0x01 0x02 0x04 0x40, right 0x08 0x10 0x20 0x80
        for y in range(0, height, 4):
            rows.append("".join(chr(0x2800 | px(x, y) | px(x, y + 1) << 1 | px(x, y + 2) << 2 | px(x + 1, y) << 3
                                    | px(x + 1, y + 1) << 4 | px(x + 1, y + 2) << 5 | px(x, y + 3) << 6
                                    | px(x + 1, y + 3) << 7) for x in range(0, width, 2)))
        return rows
    for y in range(0, height, 2):
        rows.append("".join(_QUAD[px(x, y) | px(x + 1, y) << 1 | px(x, y + 1) << 2 | px(x + 1, y + 1) << 3]
                            for x in range(0, width, 2)))
    return rows


def layout(h: int, w: int) -> dict | None:
    """Where everything goes on an h x w terminal, or None when it is too small (under MIN_W x MIN_H).
    The OLED is drawn whole: 2x2 pixels a character when 32 rows fit with a log below, else braille (16 rows).
    The side panel (LEDs, buzzer, pad, card search) is right of it; the game log and the key legend below."""
    if h < MIN_H or w < MIN_W:
        return None
    big = h >= 1 + 34 + 8 and w >= 66 + 40
    rows = 32 if big else 16
    top = 1
    box_h = rows + 2
    side_x = 67
    log_y = top + box_h
    legend_y = h - 1
    return {"braille": not big, "rows": rows, "top": top, "box_h": box_h, "side_x": side_x, "side_w": w - side_x,
            "log_y": log_y, "log_rows": max(0, legend_y - log_y - 1), "legend_y": legend_y}


class Link:
    """The FIFOs to the firmware: control lines in, peripheral state out."""

    def __init__(self, root: Path):
        sim = root / ".sim"
        self.ctl_path, self.out_path = sim / "ctl", sim / "out"
        for p in (self.ctl_path, self.out_path):
            if p.exists():
                p.unlink()
            os.mkfifo(p)
        # O_RDWR: neither end blocks waiting for the other; the firmware opens its ends later.
        self.ctl = os.open(self.ctl_path, os.O_RDWR | os.O_NONBLOCK)
        self.out = os.open(self.out_path, os.O_RDWR | os.O_NONBLOCK)
        self._buf = b""
        self.leds: list[str] = []
        self.frame = ""  # the OLED's last frame (hex), drawn for the terminal's size
        self.tone = 0
        self.tone_at = 0.0
        self._pending: list[tuple[float, dict]] = []

    def env(self) -> dict:
        return {"MAUSBOX_SIM_CTL": str(self.ctl_path), "MAUSBOX_SIM_OUT": str(self.out_path)}

    def send(self, act: dict, delay_s: float = 0.0) -> None:
        if delay_s:
            self._pending.append((time.monotonic() + delay_s, act))
        else:
            os.write(self.ctl, simrun.scenario_text([dict(act, at_ms=0)]).encode())  # a tap with its card's text

    def pump(self) -> None:
        now = time.monotonic()
        due = [a for a in self._pending if a[0] <= now]
        self._pending = [a for a in self._pending if a[0] > now]
        for _, act in sorted(due, key=lambda a: a[0]):
            self.send(act)
        try:
            while True:
                chunk = os.read(self.out, 65536)
                if not chunk:
                    break
                self._buf += chunk
        except BlockingIOError:
            pass
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "leds" in msg:
                self.leds = msg["leds"]
            if "oled" in msg:
                self.frame = msg["oled"]
            if "tone" in msg:
                self.tone = msg["tone"]
                self.tone_at = now

    # gestures -------------------------------------------------------------------------------------
    # One control line a gesture, its release timed by the unit's clock (maus.sim.hw): a unit that a busy
    # machine stalls still sees a click as a click, not a press and release read back to back.
    def click(self, p: int) -> None:
        self.send({"hold": p, "ms": 80})

    def double(self, p: int) -> None:
        self.send({"double": p})

    def hold(self, p: int, s: float) -> None:
        self.send({"hold": p, "ms": int(s * 1000)})


def _latest_log(root: Path) -> list[dict]:
    """The newest game log's last 200 records (a torn or damaged line is left out)."""
    logs = simrun.logs_in(root)
    if not logs:
        return []
    out = []
    for raw in logs[-1].read_text(encoding="utf-8", errors="replace").splitlines()[-200:]:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def log_lines(records: list[dict], width: int) -> list[str]:
    """Records in words, `t` first, wrapped to the width (continuation lines indented under the text)."""
    import textwrap

    out = []
    for rec in records:
        t = rec.get("t", 0)
        head = f"{t / 1000:7.1f}s " if isinstance(t, (int, float)) else " " * 9
        out.extend(textwrap.wrap(words.describe(rec), max(20, width - 1), initial_indent=head,
                                 subsequent_indent=" " * len(head)) or [head])
    return out


def terminal_lang(environ=os.environ) -> str:
    """The unit language for this terminal's locale (LC_ALL, LC_MESSAGES, then LANG, as gettext reads them):
    German for de_*, English otherwise (the unit knows only these two: maus.text.LANGS)."""
    loc = environ.get("LC_ALL") or environ.get("LC_MESSAGES") or environ.get("LANG") or ""
    return "de" if loc.lower().startswith("de") else "en"


def follow_lang(root: Path, environ=os.environ) -> str | None:
    """A virtual unit with no settings yet speaks the terminal's language: its `lang` setting is saved as the
    unit's own menu would. -> the language set, None when the unit has settings (they stay as they are)."""
    from maus.settings import values as fw_settings

    if (root / fw_settings.FILE).exists() or (root / fw_settings.BAK).exists():
        return None
    lang = terminal_lang(environ)
    if lang != fw_settings.defaults()["lang"]:
        fw_settings.Settings(str(root)).set("lang", lang)
    return lang


def main(root: Path, heap: str, serial: bool = False, link: str | None = None, baud: int | None = None,
         exec_delay_ms: int = 0, headless: bool = False, bridge_max: int | None = None) -> int:
    simrun.prepare_root(root)
    lang = follow_lang(root)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # clean up (registry, link) on kill too
    fifo = Link(root)
    unit = proc = None
    if serial:
        from mausbox.sim.serial import SerialUnit

        unit = SerialUnit(root, heapsize=heap, baud=baud, exec_delay_ms=exec_delay_ms, env=fifo.env(),
                          link=link, register=True, bridge_max=bridge_max)
        pty = unit.start()
        print(f"virtual unit on {pty}" + (f" (also {link})" if link else "") + f"; flash folder {root}", flush=True)
        print(f"try: mpremote connect {pty} fs ls", flush=True)
    if lang is not None:
        print(f"a new unit: it speaks {'German' if lang == 'de' else 'English'} (LANG); change it with the `lang` "
              "setting (the unit's Settings menu, or `mausbox config set lang de|en`)", flush=True)
    if not serial:
        exe = micropython_binary()
        if exe is None:
            print("MicroPython unix port not found: run `make setup`", file=sys.stderr)
            return 3
        # The unit's console is a pipe of ours, never the terminal: the firmware's host wake-up reads its
        # console, and keys typed for the screen would go to it instead of to curses.
        proc = subprocess.Popen([exe, "-X", f"heapsize={heap}", "main.py"], cwd=root, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=simrun.firmware_env(root, **fifo.env()))
        os.set_blocking(proc.stdout.fileno(), False)  # type: ignore[union-attr]
    try:
        if headless or not sys.stdout.isatty():
            if not headless:
                print("not a terminal: the virtual unit runs headless (control FIFO "
                      f"{fifo.ctl_path}); Ctrl-C stops it", flush=True)
            while True:
                fifo.pump()
                if proc is not None and proc.poll() is not None:
                    return proc.returncode
                time.sleep(0.05)
        import curses

        return curses.wrapper(_ui, root, fifo, proc, unit)
    except KeyboardInterrupt:
        return 0
    finally:
        if unit is not None:
            unit.stop()
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()


class Ui:
    """The screen's state and its keys, apart from curses (tests drive it with a fake screen)."""

    def __init__(self, root: Path, fifo, unit=None, cards: list[tuple[str, str]] | None = None):
        self.root, self.fifo, self.unit = root, fifo, unit
        self.cards = catalog_cards() if cards is None else cards
        self.pad: list[tuple[str, str]] = []
        self.console: list[str] = []
        self.query: str | None = None  # the card search, while it is open
        self.hits: list[tuple[str, str]] = []
        self.sel = 0  # the match Enter takes
        self.noise = 0.0
        self.help = False  # the full help instead of the unit
        self._log_key: tuple | None = None
        self._log: list[dict] = []

    def key(self, key: int) -> bool:
        """One key; False to quit."""
        import curses

        fifo = self.fifo
        ch = chr(key) if 0 <= key < 256 else ""
        if self.query is not None:
            if key in (10, 13, curses.KEY_ENTER):
                if self.hits:
                    ident, label = self.hits[self.sel]
                    fifo.send({"tap": ident})
                    self.pad.append((ident, label))
                self.query = None
            elif key == 27:
                self.query = None
            elif key in (curses.KEY_DOWN, 9):
                self.sel = (self.sel + 1) % len(self.hits) if self.hits else 0
            elif key == curses.KEY_UP:
                self.sel = (self.sel - 1) % len(self.hits) if self.hits else 0
            elif key in (curses.KEY_BACKSPACE, 127, 8):
                self.query = self.query[:-1]
                self.hits, self.sel = search(self.cards, self.query), 0
            elif ch.isprintable():
                self.query += ch
                self.hits, self.sel = search(self.cards, self.query), 0
            return True
        if self.help:
            self.help = ch not in ("?", "q") and key != 27 and ch != "Q" and key != 3
            return not (ch == "Q" or key == 3)
        if ch == "Q" or key == 3:
            return False
        if ch in CLICK:
            fifo.click(CLICK.index(ch) + 1)
        elif ch in DOUBLE:
            fifo.double(DOUBLE.index(ch) + 1)
        elif ch in LONG:
            fifo.hold(LONG.index(ch) + 1, 1.2)
        elif ch in YOUNG:
            fifo.hold(YOUNG.index(ch) + 1, 2.5)
        elif ch == "/":
            self.query, self.hits, self.sel = "", [], 0
        elif ch == "-" and self.pad:
            fifo.send({"remove": self.pad.pop()[0]})
        elif ch == "0":
            while self.pad:
                fifo.send({"remove": self.pad.pop()[0]})
        elif ch == "k":  # a bump the castle takes in silence / one that rings (sim.run.KNOCKS: why these)
            fifo.send(dict(simrun.KNOCKS["gentle"]))
        elif ch == "K":
            fifo.send(dict(simrun.KNOCKS["hard"]))
        elif ch == "N":
            self.noise = 0.0 if self.noise else 0.3
            fifo.send({"noise": self.noise})
        elif ch == "R" and self.at_repl():
            self.unit.reset()  # the EN button: the app (main.py) runs again
        elif ch == "?":
            self.help = True
        return True

    def at_repl(self) -> bool:
        return self.unit is not None and not self.unit.app_running

    def game_log(self) -> list[dict]:
        """The newest log's records, read again only when the file changed."""
        logs = simrun.logs_in(self.root)
        try:
            key = (logs[-1], logs[-1].stat().st_size) if logs else None
        except OSError:
            key = None
        if key != self._log_key:
            self._log_key, self._log = key, _latest_log(self.root)
        return self._log

    def draw(self, scr, pal: dict) -> None:
        scr.erase()
        h, w = scr.getmaxyx()

        def put(y, x, s, attr=0):
            if 0 <= y < h and 0 <= x < w:
                try:
                    scr.addstr(y, x, s[: max(0, w - x - (1 if y == h - 1 else 0))], attr)
                except Exception:  # noqa: BLE001 - curses refuses the last cell; never crash on a draw
                    pass

        if self.help:
            for i, line in enumerate(HELP[: h - 1]):
                put(i, 0, line, pal.get("w", 0) if i == 0 else 0)
            put(h - 1, 0, "? or Esc: back to the unit", pal.get("c", 0))
            scr.refresh()
            return
        lay = layout(h, w)
        if lay is None:
            msg = [f"Make the window at least {MIN_W}x{MIN_H}", f"(it is {w}x{h}); Q quits"]
            for i, line in enumerate(msg):
                put(h // 2 - 1 + i, max(0, (w - len(line)) // 2), line, pal.get("y", 0))
            scr.refresh()
            return
        unit = self.unit
        put(0, 0, "Mausbox virtual unit" + (f"  serial: {unit.pty_path}" if unit else "") + f"  flash: {self.root}",
            pal.get("w", 0))
        top, rows = lay["top"], lay["rows"]
        oled = render_oled(self.fifo.frame, braille=lay["braille"]) if self.fifo.frame else []
        put(top, 0, "+" + "-" * 64 + "+")
        for i in range(rows):
            put(top + 1 + i, 0, "|" + (oled[i] if i < len(oled) else "").ljust(64) + "|")
        put(top + rows + 1, 0, "+" + "-" * 64 + "+")
        if not oled and not self.at_repl():  # until the firmware draws its first frame (its boot: seconds)
            put(top + rows // 2, 3, "the unit is starting (MicroPython boots the firmware)...", pal.get("c", 0))
        if self.at_repl():
            for i, line in enumerate(("The unit is at its MicroPython REPL:", "the app is not running (a tool",
                                      "such as mpremote stopped it).", "Press R to restart the app.")):
                put(top + 2 + i, 3, f" {line:<38} ", pal.get("notice", 0))
        x, sw = lay["side_x"], lay["side_w"]
        y = top
        put(y, x, "Players", pal.get("w", 0))
        for i, hexrgb in enumerate(self.fifo.leds):
            r, g, b = (int(hexrgb[k:k + 2], 16) for k in (0, 2, 4))
            name = _colour_key(r, g, b)
            put(y + 1 + i, x, f"P{i + 1}")
            put(y + 1 + i, x + 3, "●" if name else "○", pal.get(name, 0) if name else 0)
            put(y + 1 + i, x + 5, CLICK[i])
        y += 1 + max(len(self.fifo.leds), 1)
        tone = self.fifo.tone if time.monotonic() - self.fifo.tone_at < 1.0 or self.fifo.tone else 0
        put(y, x, f"♪ {tone} Hz" if tone else "quiet")
        put(y + 1, x, f"noise {self.noise:.1f}")
        y += 2
        if self.query is not None:  # the search: in the side panel, or over the OLED when the panel is narrow
            wide = sw >= 40
            qx, qy = (x, y) if wide else (1, top + 1)
            width = (w - qx - 1) if wide else 64
            if not wide:
                for i in range(rows):
                    put(top + 1 + i, 1, " " * 64)
            line = f"card> {self.query}_"
            if len(line) > width:  # a long query: its end, where the typing is
                line = "card> …" + line[len(line) - width + 7:]
            put(qy, qx, line[:width], pal.get("y", 0))
            room = max((lay["box_h"] + top - qy - 1) if wide else rows - 1, 1)
            first = min(max(0, self.sel - room + 1), max(0, len(self.hits) - room))
            for i, (_ident, label) in enumerate(self.hits[first:first + room]):
                n = first + i
                put(qy + 1 + i, qx, f"{'>' if n == self.sel else ' '} {label}"[:width],
                    pal.get("y", 0) if n == self.sel else 0)
            if not self.hits and self.query:
                put(qy + 1, qx, "  no card matches")
            put(lay["legend_y"], 0, f"{len(self.hits)} match(es): Up/Down picks, Enter puts it on the pad, "
                                    "Esc cancels", pal.get("c", 0))
        else:
            put(y, x, "On the pad:", pal.get("w", 0))
            for i, (ident, _label) in enumerate(self.pad[-(lay["box_h"] + top - y - 1):]):
                put(y + 1 + i, x, ident[: max(0, sw - 1)])
            put(lay["legend_y"], 0, LEGEND if len(LEGEND) < w else LEGEND_SHORT, pal.get("c", 0))
        recs = self.game_log()
        n = lay["log_rows"]
        verdict = words.last_verdict(recs)
        if verdict:  # the display shows a verdict for a moment; the screen keeps it until the next one
            put(lay["log_y"], 0, f"Last: {verdict}", pal.get("y", 0))
        else:
            put(lay["log_y"], 0, "Game log" + ("" if recs else " (no game yet)"), pal.get("w", 0))
        lines = log_lines(recs[-n:], w) if n > 1 else []
        for i, line in enumerate(lines[-(n - 1):] if n > 1 else []):
            put(lay["log_y"] + 1 + i, 0, line)
        if self.console and self.console[-1].startswith("[the firmware stopped"):
            put(lay["legend_y"] - 1, 0, self.console[-1], pal.get("r", 0))
        scr.refresh()


def _ui(scr, root: Path, fifo: Link, proc, unit) -> int:
    import curses

    try:
        curses.curs_set(0)
    except curses.error:  # a terminal that cannot hide its cursor
        pass
    scr.nodelay(True)
    scr.keypad(True)
    pal = {}
    try:  # a terminal without colours (TERM=vt220, say) gets the screen in one colour
        curses.start_color()
        curses.use_default_colors()
        for i, (name, c) in enumerate([("r", curses.COLOR_RED), ("g", curses.COLOR_GREEN),
                                       ("b", curses.COLOR_BLUE), ("y", curses.COLOR_YELLOW),
                                       ("m", curses.COLOR_MAGENTA), ("c", curses.COLOR_CYAN),
                                       ("w", curses.COLOR_WHITE)], 1):
            curses.init_pair(i, c, -1)
            pal[name] = curses.color_pair(i) | curses.A_BOLD
        curses.init_pair(8, curses.COLOR_BLACK, curses.COLOR_YELLOW)  # a notice: dark on bright, readable
        pal["notice"] = curses.color_pair(8)
    except curses.error:
        pal = {}
    ui = Ui(root, fifo, unit)
    # MAUSBOX_SIM_CONSOLE_LOG=FILE: the unit's console kept in FILE too (the screen keeps its last lines only),
    # so a terminal test that fails can say what the unit printed
    tee_path = os.environ.get("MAUSBOX_SIM_CONSOLE_LOG")
    tee = open(tee_path, "ab") if tee_path else None  # noqa: SIM115 - open for the whole session
    while True:
        fifo.pump()
        if proc is not None and proc.stdout is not None:
            try:
                data = proc.stdout.read()
            except (BlockingIOError, TypeError):
                data = None
            if data and tee is not None:
                tee.write(data)
                tee.flush()
            if data:
                ui.console.extend(data.decode("utf-8", "replace").splitlines())
                ui.console = ui.console[-200:]
            if proc.poll() is not None:
                scr.nodelay(False)
                ui.console.append(f"[the firmware stopped with exit code {proc.returncode}; press any key]")
        key = scr.getch()
        if key != -1 and not ui.key(key):
            return 0
        ui.draw(scr, pal)
        time.sleep(0.03)


def _colour_key(r: int, g: int, b: int) -> str:
    if r == g == b == 0:
        return ""
    if r and g and b:
        return "w"
    if r and g:
        return "y"
    if r and b:
        return "m"
    if g and b:
        return "c"
    return "r" if r else ("g" if g else "b")
