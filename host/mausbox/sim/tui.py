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

from mausbox.paths import FIRMWARE_PKG, micropython_binary
from mausbox.sim import run as simrun

CLICK, DOUBLE, LONG, YOUNG = "123456", "qwerty", "asdfgh", "zxcvbn"
KIND_OF_LIST = {"mice": "mouse", "clothing": "clothing", "cheese_cards": "cheese", "cards": "card"}
HELP = [
    "1-6 press (click)   q-y double press   a-h long press   z-n hold 2 s (young)",
    "/ put a card on the pad (type: mouse 7, Koffer, cheese)   - take the last card off   0 clear pad",
    "k gentle knock   K hard knock   N noise on/off   ? help   Q quit",
]
_QUAD = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"


def catalog_cards() -> list[tuple[str, str]]:
    """(identity, label) for every card of every catalog, game cards first."""
    from maus import cards

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
    words = query.lower().split()
    if not words:
        return []
    hits = []
    for ident, label in cards:
        hay = f"{ident} {label}".lower()
        nums = [w for w in words if w.isdigit()]
        if all(w in hay for w in words if not w.isdigit()) and all(
                ident.rsplit("/", 1)[-1].lstrip("0") == n.lstrip("0") for n in nums):
            hits.append((ident, label))
    return hits


def render_oled(hexframe: str, width: int = 128, height: int = 64) -> list[str]:
    """An SSD1306 MONO_VLSB frame as text, 2x2 pixels per character."""
    try:
        buf = bytes.fromhex(hexframe)
    except ValueError:
        return []

    def px(x, y):
        return (buf[x + (y // 8) * width] >> (y % 8)) & 1 if x < width and y < height else 0

    rows = []
    for y in range(0, height, 2):
        rows.append("".join(_QUAD[px(x, y) | px(x + 1, y) << 1 | px(x, y + 1) << 2 | px(x + 1, y + 1) << 3]
                            for x in range(0, width, 2)))
    return rows


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
        self.oled: list[str] = []
        self.tone = 0
        self.tone_at = 0.0
        self._pending: list[tuple[float, dict]] = []

    def env(self) -> dict:
        return {"MAUSBOX_SIM_CTL": str(self.ctl_path), "MAUSBOX_SIM_OUT": str(self.out_path)}

    def send(self, act: dict, delay_s: float = 0.0) -> None:
        if delay_s:
            self._pending.append((time.monotonic() + delay_s, act))
        else:
            os.write(self.ctl, (json.dumps(dict(act, at_ms=0)) + "\n").encode())

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
                self.oled = render_oled(msg["oled"])
            if "tone" in msg:
                self.tone = msg["tone"]
                self.tone_at = now

    # gestures -------------------------------------------------------------------------------------
    def click(self, p: int) -> None:
        self.send({"press": p})
        self.send({"release": p}, 0.08)

    def double(self, p: int) -> None:
        self.click(p)
        self.send({"press": p}, 0.2)
        self.send({"release": p}, 0.28)

    def hold(self, p: int, s: float) -> None:
        self.send({"press": p})
        self.send({"release": p}, s)


def _latest_log(root: Path) -> list[str]:
    logs = simrun.logs_in(root)
    if not logs:
        return []
    out = []
    for raw in logs[-1].read_text(encoding="utf-8", errors="replace").splitlines()[-200:]:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        body = {k: v for k, v in rec.items() if k not in ("seq", "crc", "t", "type", "settings")}
        out.append(f"{rec.get('t', 0) / 1000:7.1f}s {rec.get('type', '?'):10} {json.dumps(body, ensure_ascii=False)}")
    return out


def terminal_lang(environ=os.environ) -> str:
    """The unit language for this terminal's locale (LC_ALL, LC_MESSAGES, then LANG, as gettext reads them):
    German for de_*, English otherwise (the unit knows only these two: maus.text.LANGS)."""
    loc = environ.get("LC_ALL") or environ.get("LC_MESSAGES") or environ.get("LANG") or ""
    return "de" if loc.lower().startswith("de") else "en"


def follow_lang(root: Path, environ=os.environ) -> str | None:
    """A virtual unit with no settings yet speaks the terminal's language: its `lang` setting is saved as the
    unit's own menu would. -> the language set, None when the unit has settings (they stay as they are)."""
    from maus import settings as fw_settings

    if (root / fw_settings.FILE).exists() or (root / fw_settings.BAK).exists():
        return None
    lang = terminal_lang(environ)
    if lang != fw_settings.defaults()["lang"]:
        fw_settings.Settings(str(root)).set("lang", lang)
    return lang


def main(root: Path, heap: str, serial: bool = False, link: str | None = None, baud: int | None = None,
         exec_delay_ms: int = 0, headless: bool = False) -> int:
    simrun.prepare_root(root)
    lang = follow_lang(root)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # clean up (registry, link) on kill too
    fifo = Link(root)
    unit = proc = None
    if serial:
        from mausbox.sim.serial import SerialUnit

        unit = SerialUnit(root, heapsize=heap, baud=baud, exec_delay_ms=exec_delay_ms, env=fifo.env(),
                          link=link, register=True)
        pty = unit.start()
        print(f"virtual unit on {pty}" + (f" (also {link})" if link else "") + f"; flash folder {root}", flush=True)
        print(f"try: mpremote connect {pty} fs ls", flush=True)
    if lang is not None:
        print(f"a new unit: it speaks {'German' if lang == 'de' else 'English'} (LANG); change it with the `lang` "
              "setting (the unit's Settings menu, or `mausbox config set lang de|en`)", flush=True)
    else:
        exe = micropython_binary()
        if exe is None:
            print("MicroPython unix port not found: run `make setup`", file=sys.stderr)
            return 3
        proc = subprocess.Popen([exe, "-X", f"heapsize={heap}", "main.py"], cwd=root, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=simrun.firmware_env(root, **fifo.env()))
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


def _ui(scr, root: Path, fifo: Link, proc, unit) -> int:
    import curses

    curses.curs_set(0)
    scr.nodelay(True)
    curses.start_color()
    curses.use_default_colors()
    pal = {}
    for i, (name, c) in enumerate([("r", curses.COLOR_RED), ("g", curses.COLOR_GREEN), ("b", curses.COLOR_BLUE),
                                   ("y", curses.COLOR_YELLOW), ("m", curses.COLOR_MAGENTA),
                                   ("c", curses.COLOR_CYAN), ("w", curses.COLOR_WHITE)], 1):
        curses.init_pair(i, c, -1)
        pal[name] = curses.color_pair(i) | curses.A_BOLD
    cards = catalog_cards()
    pad: list[tuple[str, str]] = []
    console: list[str] = []
    query = None
    hits: list[tuple[str, str]] = []
    noise = 0.0
    show_help = True
    while True:
        fifo.pump()
        if proc is not None and proc.stdout is not None:
            try:
                data = proc.stdout.read()
            except (BlockingIOError, TypeError):
                data = None
            if data:
                console.extend(data.decode("utf-8", "replace").splitlines())
                console = console[-200:]
            if proc.poll() is not None:
                scr.nodelay(False)
                console.append(f"[the firmware stopped with exit code {proc.returncode}; press any key]")
        key = scr.getch()
        if key != -1:
            ch = chr(key) if 0 <= key < 256 else ""
            if query is not None:
                if key in (10, 13):
                    if hits:
                        ident, label = hits[0]
                        fifo.send({"tap": ident})
                        pad.append((ident, label))
                    query = None
                elif key == 27:
                    query = None
                elif key in (curses.KEY_BACKSPACE, 127, 8):
                    query = query[:-1]
                elif ch.isprintable():
                    query += ch
                hits = search(cards, query) if query else []
            elif ch == "Q" or key == 3:
                return 0
            elif ch in CLICK:
                fifo.click(CLICK.index(ch) + 1)
            elif ch in DOUBLE:
                fifo.double(DOUBLE.index(ch) + 1)
            elif ch in LONG:
                fifo.hold(LONG.index(ch) + 1, 1.2)
            elif ch in YOUNG:
                fifo.hold(YOUNG.index(ch) + 1, 2.5)
            elif ch == "/":
                query = ""
                hits = []
            elif ch == "-" and pad:
                fifo.send({"remove": pad.pop()[0]})
            elif ch == "0":
                while pad:
                    fifo.send({"remove": pad.pop()[0]})
            elif ch == "k":
                fifo.send({"knock": 0.15, "ms": 40})
            elif ch == "K":
                fifo.send({"knock": 0.7, "ms": 60})
            elif ch == "N":
                noise = 0.0 if noise else 0.3
                fifo.send({"noise": noise})
            elif ch == "?":
                show_help = not show_help
        _draw(scr, pal, root, fifo, pad, console, query, hits, noise, show_help, unit)
        time.sleep(0.03)


def _draw(scr, pal, root, fifo, pad, console, query, hits, noise, show_help, unit) -> None:
    scr.erase()
    h, w = scr.getmaxyx()

    def put(y, x, s, attr=0):
        if 0 <= y < h and x < w:
            try:
                scr.addstr(y, x, s[: max(0, w - x - 1)], attr)
            except Exception:  # noqa: BLE001 - a small terminal clips, never crashes
                pass

    put(0, 0, "Mausbox virtual unit" + (f"  serial: {unit.pty_path}" if unit else "") + f"  flash: {root}",
        pal["w"])
    put(1, 0, "+" + "-" * 64 + "+")
    for i in range(32):
        line = fifo.oled[i] if i < len(fifo.oled) else ""
        put(2 + i // 2 if False else 2 + i, 0, "|" + line.ljust(64) + "|")
    put(34, 0, "+" + "-" * 64 + "+")
    x = 67
    put(2, x, "Players", pal["w"])
    for i, hexrgb in enumerate(fifo.leds):
        r, g, b = (int(hexrgb[k:k + 2], 16) for k in (0, 2, 4))
        name = _colour_key(r, g, b)
        put(3 + i, x, f"P{i + 1} ", 0)
        put(3 + i, x + 3, "●" if name else "○", pal.get(name, 0) if name else 0)
        put(3 + i, x + 5, f"key {CLICK[i]}")
    tone = fifo.tone if time.monotonic() - fifo.tone_at < 1.0 or fifo.tone else 0
    put(10, x, f"Buzzer: {'♪ %d Hz' % tone if tone else 'quiet'}")
    put(11, x, f"Noise: {noise:.1f}")
    put(13, x, "On the pad:", pal["w"])
    for i, (ident, label) in enumerate(pad[-6:]):
        put(14 + i, x, f"{ident}  {label}"[:60])
    if query is not None:
        put(21, x, f"card> {query}_", pal["y"])
        for i, (_ident, label) in enumerate(hits[:8]):
            put(22 + i, x, f"{'→' if i == 0 else ' '} {label}"[:60])
    y = 36
    put(y, 0, "Game log", pal["w"])
    log = _latest_log(root)
    for i, line in enumerate(log[-(h - y - 8):] if h - y - 8 > 0 else []):
        put(y + 1 + i, 0, line)
    if show_help:
        for i, line in enumerate(HELP):
            put(h - 4 + i, 0, line, pal["c"])
    if console and console[-1].startswith("[the firmware stopped"):
        put(h - 5, 0, console[-1], pal["r"])
    scr.refresh()


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
