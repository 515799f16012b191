# The scenario files tests/scenarios/mim-*.jsonl, played through the game with a minimal stand-in for the
# unit shell (game card, variant choice, joining, double press to start, gestures from maus.capture.buttons, no
# card reads while a race is open) in virtual time: the summary must be the .expect.json. The virtual unit
# plays the same files end to end (`mausbox sim --scenario`). Variants B and C: test_mim_scenarios_b.py, _c.py.
import json
import os

import maus.games.mim.turns  # noqa: F401  (compiled first, while the heap is in one piece)
from fwtest import repo_path
from maus.capture.buttons import Gestures
from maus.games.base import Player
from maus.games.mim.rules import MIsForMouse  # noqa: I001
from maus.ticks import wrap
from tablefake import FakeTable
from test_mim_kit import CAT

DIR = repo_path("tests/scenarios")
# prompts a scenario of legal moves never sees (a wrong claim or pair is planned: its verdict is checked)
_MISTAKES = {"unknown_card", "wrong_game", "again", "played", "not_on_table", "press_first"}


class Lean(FakeTable):
    """Remembers which prompts came and the verdicts, not every record: a long game fits a 96 KB heap."""

    def __init__(self):
        super().__init__()
        self.said = set()
        self.sounds = set()
        self.verdicts = [0, 0]  # wrong, right

    def log(self, rtype, fields):
        if rtype == "verdict":
            self.verdicts[1 if fields["ok"] else 0] += 1

    def say(self, key, **kw):
        if self.game is not None:  # the game's first prompt ("leader" in B) is expected
            self.said.add(key)

    def sound(self, name):
        self.sounds.add(name)


class Shell:
    def __init__(self):
        self.mode = "menu"
        self.variant = 0
        self.joined = []
        self.t = Lean()
        self.game = None
        self.gest = Gestures(6, self.gesture)
        self.now = 0
        self.pending = []  # (at_ms, event) of holds' releases

    def gesture(self, i, kind):
        p = i + 1
        if self.mode == "variant" and p == 1:
            if kind == "click":
                self.variant = (self.variant + 1) % 3
            elif kind == "long":
                self.mode = "join"
        elif self.mode == "join" and kind == "double" and p in self.joined:
            players = [Player(q) for q in sorted(self.joined)]
            self.game = MIsForMouse(self.t, players, {"lang": "en"}, CAT, "ABC"[self.variant], 1)
            self.t.game = self.game
            self.mode = "play"
            self.game.start()
        elif self.mode == "play":
            self.game.on_gesture(p, kind)

    def until(self, at):
        while True:
            nxt = at
            d = self.gest.next_due(self.now)
            if d > 0 and self.now + d < nxt:
                nxt = self.now + d
            for due in self.t.timers.values():
                if due < nxt:
                    nxt = due
            self.t.advance(nxt - self.now)
            self.now = nxt
            self.gest.poll(nxt)
            if nxt >= at:
                return

    def apply(self, ev):
        at = ev["at_ms"]
        self.until(at)
        us = wrap(at * 1000)
        g = self.game
        if "tap" in ev:
            ident = ev["tap"]
            if ident == "game/mim":
                if self.mode == "menu":
                    self.mode = "variant"
            elif self.mode == "play" and self.t.race is None:  # no card reads while a race is open
                g.on_tap(ident, "uid", us)
        elif "press" in ev or "hold" in ev:
            p = ev.get("press") or ev["hold"]
            if self.mode == "join" and p not in self.joined:
                self.joined.append(p)
            if self.mode == "play":
                g.on_press(p, us)
            self.gest.press(p - 1, at)
            if "hold" in ev:
                self.until(at + ev["ms"])
                self.release(p, at + ev["ms"])
        elif "release" in ev:
            self.release(ev["release"], at)

    def release(self, p, at):
        self.gest.release(p - 1, at)
        if self.mode == "play":
            self.game.on_release(p, wrap(at * 1000))


def play(name):
    sh = Shell()
    with open("%s/%s.jsonl" % (DIR, name)) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                sh.apply(json.loads(line))
    sh.until(sh.now + 60000)
    with open("%s/%s.expect.json" % (DIR, name)) as f:
        want = json.load(f)
    return sh, want


def check(name, wrong):
    sh, want = play(name)
    g = sh.game
    assert g is not None and g.done, name
    s = g.summary()
    assert {"scores": s["scores"], "winners": s["winners"], "reason": s["reason"]} == want, (name, s, want)
    assert not sh.t.said & _MISTAKES, sh.t.said & _MISTAKES
    assert sh.t.verdicts[0] == wrong, sh.t.verdicts  # exactly the planned wrong claims
    return sh


def test_scenario_files_come_in_pairs():
    names = [n for n in os.listdir(DIR) if n.startswith("mim-")]
    runs = [n[:-6] for n in names if n.endswith(".jsonl")]
    assert len(runs) >= 3
    for r in runs:
        assert r + ".expect.json" in names


def test_variant_a_three_players():
    sh = check("mim-a-3p", 1)
    assert {"choose", "passed", "round_won", "game_won"} <= sh.t.said
