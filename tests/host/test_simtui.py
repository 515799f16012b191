"""The simulator's screen, drawn on a fake terminal: the OLED whole down to 80x24 (braille below the size
for 2x2 blocks), legend and log around it, a clear message below that; `?` the full help; card search
picks among its matches; the unit at its REPL is said, with R to restart the app."""

from __future__ import annotations

import curses

import pytest
from mausbox.sim import tui


class FakeScreen:
    """A terminal h x w: text written past its right edge is an error (curses would wrap it onto the next
    line, over whatever is there)."""

    def __init__(self, h: int, w: int):
        self.h, self.w = h, w
        self.erase()

    def getmaxyx(self):
        return self.h, self.w

    def erase(self):
        self.grid = [[" "] * self.w for _ in range(self.h)]

    def addstr(self, y, x, s, attr=0):
        assert 0 <= y < self.h and 0 <= x and x + len(s) <= self.w, (y, x, s)
        for i, c in enumerate(s):
            self.grid[y][x + i] = c

    def refresh(self):
        pass

    def lines(self):
        return ["".join(r) for r in self.grid]

    def text(self):
        return "\n".join(self.lines())


class FakeLink:
    def __init__(self, frame: bytes):
        self.frame = frame.hex()
        self.leds = ["ff0000", "0000ff", "000000", "000000", "000000", "000000"]
        self.tone, self.tone_at = 0, 0.0
        self.sent: list[dict] = []

    def send(self, act, delay_s=0.0):
        self.sent.append(act)

    def click(self, p):
        self.sent.append({"click": p})

    double = hold = click


class FakeUnit:
    pty_path = "/dev/pts/99"

    def __init__(self, running=True):
        self.app_running = running
        self.resets = 0

    def reset(self):
        self.resets += 1


def frame_with_border() -> bytes:
    """A 128x64 MONO_VLSB frame: a one-pixel border round the whole display."""
    buf = bytearray(128 * 8)
    for x in range(128):
        buf[x] |= 0x01  # y = 0
        buf[x + 7 * 128] |= 0x80  # y = 63
    for page in range(8):
        buf[page * 128] = 0xFF  # x = 0
        buf[page * 128 + 127] = 0xFF  # x = 127
    return bytes(buf)


def _ui(tmp_path, unit=None):
    return tui.Ui(tmp_path, FakeLink(frame_with_border()), unit,
                  cards=[("mg/mouse/09", "mouse 9: yellow shirt yellow bow blue hat green bag brie"),
                         ("mg/clothing/05", "clothing 5: yellow bow"), ("mg/mouse/07", "mouse 7: red bow")])


@pytest.mark.parametrize("h,w,braille", [(24, 80, True), (30, 100, True), (45, 120, False), (60, 200, False)])
def test_the_oled_is_whole_and_nothing_overlaps_it(tmp_path, h, w, braille):
    ui = _ui(tmp_path)
    scr = FakeScreen(h, w)
    ui.draw(scr, {})
    lay = tui.layout(h, w)
    assert lay is not None and lay["braille"] is braille
    lines = scr.lines()
    top, rows = lay["top"], lay["rows"]
    assert lines[top].startswith("+" + "-" * 64 + "+") and lines[top + rows + 1].startswith("+" + "-" * 64 + "+")
    inside = [ln[1:65] for ln in lines[top + 1: top + rows + 1]]
    blank = "\u2800" if braille else " "
    assert all(len(r) == 64 for r in inside)
    # the border of the display in its first and last row and column: every pixel row and column is drawn
    assert blank not in inside[0] and blank not in inside[-1]
    assert all(r[0] != blank and r[-1] != blank for r in inside)
    assert all(ln[0] == "|" and ln[65] == "|" for ln in lines[top + 1: top + rows + 1])
    assert lines[h - 1].startswith("1-6 click")  # the legend, on its own line below the log
    assert "? " in lines[h - 1] and "Q quit" in lines[h - 1]  # whole, whatever the width


def test_a_small_window_says_how_big_it_must_be(tmp_path):
    for h, w in ((23, 80), (24, 79), (10, 40)):
        scr = FakeScreen(h, w)
        _ui(tmp_path).draw(scr, {})
        assert f"Make the window at least {tui.MIN_W}x{tui.MIN_H}" in scr.text() and f"{w}x{h}" in scr.text()


def test_a_tall_window_shows_a_long_game_log(tmp_path, monkeypatch):
    monkeypatch.setattr(tui, "_latest_log", lambda root: [
        {"seq": i, "t": i * 1000, "type": "press", "player": 1, "offset_us": 1000, "false_start": False}
        for i in range(50)])
    monkeypatch.setattr(tui.simrun, "logs_in", lambda root: [])
    ui = _ui(tmp_path)
    ui._log_key = "x"  # stale: read again
    scr = FakeScreen(45, 120)
    ui.draw(scr, {})
    assert sum("s P1 pressed +1.0 ms" in ln for ln in scr.lines()) >= 6


def test_question_mark_shows_the_full_help_and_back(tmp_path):
    ui = _ui(tmp_path)
    assert ui.key(ord("?")) and ui.help
    scr = FakeScreen(24, 80)
    ui.draw(scr, {})
    text = scr.text()
    for key in ("q w e r t y", "a s d f g h", "z x c v b n", "k / K", "Up/Down", "lang"):
        assert key in text, key
    assert ui.key(ord("?")) and not ui.help
    assert ui.key(ord("1")) and ui.fifo.sent[-1] == {"click": 1}
    assert not ui.key(ord("Q"))


def test_card_search_lists_matches_to_pick_from(tmp_path):
    ui = _ui(tmp_path)
    ui.key(ord("/"))
    for c in "yellow bow":
        ui.key(ord(c))
    assert [i for i, _ in ui.hits] == ["mg/clothing/05", "mg/mouse/09"]  # the card named first
    scr = FakeScreen(24, 80)
    ui.draw(scr, {})
    assert "clothing 5: yellow bow" in scr.text() and "2 match(es)" in scr.text()
    ui.key(curses.KEY_DOWN)
    ui.key(10)
    assert ui.fifo.sent[-1] == {"tap": "mg/mouse/09"} and ui.query is None  # not the top hit
    ui.key(ord("-"))
    assert ui.fifo.sent[-1] == {"remove": "mg/mouse/09"}


def test_the_unit_at_its_repl_is_said_and_r_restarts_the_app(tmp_path):
    unit = FakeUnit(running=False)
    ui = _ui(tmp_path, unit)
    scr = FakeScreen(24, 80)
    ui.draw(scr, {})
    assert "at its MicroPython REPL" in scr.text() and "Press R" in scr.text()
    ui.key(ord("R"))
    assert unit.resets == 1
    unit.app_running = True
    ui.draw(scr, {})
    assert "REPL" not in scr.text()
    ui.key(ord("R"))
    assert unit.resets == 1  # the app runs: R does nothing


def test_a_serial_unit_knows_when_its_app_stopped(tmp_path):
    """What the screen reads: Ctrl-C on the port (as mpremote sends) leaves the unit at its REPL; its EN
    button (R) runs the app again."""
    import os
    import time

    from mausbox.cmd_sim import wait_ready
    from mausbox.mpbuild import micropython_binary
    from mausbox.sim import run as simrun
    from mausbox.sim.serial import SerialUnit

    if micropython_binary() is None:
        pytest.skip("MicroPython unix port not installed")
    root = simrun.prepare_root(tmp_path / "unit")

    def until(cond, what):
        end = time.monotonic() + 120
        while not cond():
            assert time.monotonic() < end, what
            time.sleep(0.1)

    since = time.time() - 1
    with SerialUnit(root, heapsize=simrun.DEFAULT_HEAP) as unit:
        assert wait_ready(root, since) and unit.app_running
        fd = os.open(unit.pty_path, os.O_RDWR | os.O_NOCTTY)
        try:
            os.write(fd, b"\x03\x03")
            until(lambda: not unit.app_running, "Ctrl-C did not stop the app")
            unit.reset()
            until(lambda: unit.app_running, "the reset did not start the app")
        finally:
            os.close(fd)


def test_the_log_is_in_words_and_the_last_verdict_stays(tmp_path, monkeypatch):
    recs = [{"seq": 0, "t": 0, "type": "game_start", "game": "mg", "players": [{"id": 1}, {"id": 2}]},
            {"seq": 1, "t": 5000, "type": "verdict", "player": 1, "ok": False, "reason": "item_not_worn"},
            {"seq": 2, "t": 5001, "type": "score", "player": 1, "delta": -1, "why": "wrong_item"},
            {"seq": 3, "t": 5002, "type": "prompt", "what": "reveal"}]
    recs += [{"seq": 4 + i, "t": 6000 + i, "type": "tap", "identity": "mg/mouse/0" + str(i % 9 + 1), "uid": "04"}
             for i in range(30)]  # long after the verdict left the unit's display
    monkeypatch.setattr(tui, "_latest_log", lambda root: recs)
    monkeypatch.setattr(tui.simrun, "logs_in", lambda root: [])
    for h, w in ((24, 80), (40, 120)):
        ui = _ui(tmp_path)
        ui._log_key = "x"
        scr = FakeScreen(h, w)
        ui.draw(scr, {})
        text = scr.text()
        assert "Last: P1: wrong, not worn!; P1 -1 (wrong item)" in text
        assert '{"' not in text and "card mg/mouse/" in text  # words, not JSON


def test_card_search_ranks_the_card_named_first():
    cards = tui.catalog_cards()
    hits = tui.search(cards, "red hat")
    assert hits and hits[0][1].startswith("clothing") and "red hat" in hits[0][1], hits[:3]
    hits = tui.search(cards, "cheese 1")
    assert hits[0][0] == "mg/cheese/1", hits[:3]
    assert tui.search(cards, "mg/mouse/07")[0][0] == "mg/mouse/07"
