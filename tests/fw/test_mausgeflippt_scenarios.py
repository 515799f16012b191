# The scenario files tests/scenarios/mg-*.jsonl, played through the game with a minimal stand-in for the
# unit shell (game card, joining, young hold, double press to start, gestures from maus.capture.buttons) in
# virtual time: the summary must be the .expect.json. The virtual unit plays the same files end to end.
import json
import os

import maus.games.mausgeflippt.rules  # noqa: F401 - the game first: a small heap compiles it best
from fwtest import repo_path
from maus.capture.buttons import Gestures
from maus.games.base import Player
from maus.games.mausgeflippt import cards as mausgeflippt_cards
from maus.games.mausgeflippt import catalog as mausgeflippt_catalog
from maus.games.mausgeflippt.rules import Mausgeflippt
from maus.ticks import wrap
from tablefake import FakeTable

CAT = mausgeflippt_cards.load(mausgeflippt_catalog.read_file())
DIR = repo_path("tests/scenarios")
YOUNG_HOLD_MS = 2000
_MISTAKES = {"penalty_card", "want_mouse", "want_cheese", "want_clothing", "under_stack", "caught_before",
             "cheese_used", "unknown_card", "wrong_game", "too_many", "no_cards"}


class Lean(FakeTable):
    """Remembers which prompts and sounds came, not every one: a long game fits a 96 KB heap."""

    def __init__(self):
        super().__init__()
        self.said = set()
        self.sounds = set()

    def log(self, rtype, fields):
        pass

    def say(self, key, **kw):
        self.said.add(key)

    def sound(self, name):
        self.sounds.add(name)


class Shell:
    def __init__(self):
        self.mode = "menu"
        self.joined = {}  # player -> young
        self.down_at = {}
        self.t = Lean()
        self.game = None
        self.gest = Gestures(6, self.gesture)
        self.now = 0

    def gesture(self, i, kind):
        p = i + 1
        if self.mode == "join" and kind == "double" and p in self.joined:
            players = [Player(q, self.joined[q]) for q in sorted(self.joined)]
            self.game = Mausgeflippt(self.t, players, {}, CAT)
            self.t.game = self.game
            self.mode = "play"
            self.game.start()
        elif self.mode == "play":
            self.game.on_gesture(p, kind)

    def until(self, at):
        while True:
            nxt = at
            d = self.gest.next_due(self.now)
            if d > 0 and self.now + d < nxt:  # 0 also while a double press's second press is held
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
            if ident == "game/mausgeflippt":
                if self.mode == "menu":
                    self.mode = "join"
            elif self.mode == "play":
                g.on_tap(ident, "uid", us)
        elif "remove" in ev:
            if self.mode == "play":
                g.on_remove(ev["remove"], "uid")
        elif "press" in ev:
            p = ev["press"]
            if self.mode == "join" and p not in self.joined:
                self.joined[p] = False
            self.down_at[p] = at
            if self.mode == "play":
                g.on_press(p, us)
            self.gest.press(p - 1, at)
        elif "release" in ev:
            p = ev["release"]
            if self.mode == "join" and at - self.down_at.get(p, at) >= YOUNG_HOLD_MS:
                self.joined[p] = True
            self.gest.release(p - 1, at)
            if self.mode == "play":
                g.on_release(p, us)


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


def _check(name):
    sh, want = play(name)
    g = sh.game
    assert g is not None and g.done, name
    s = g.summary()
    assert {"scores": s["scores"], "winners": s["winners"], "reason": s["reason"]} == want, (name, s, want)
    assert sum(b["mice"] for b in s["breakdown"].values()) + g.s.mice_left == 32
    assert not sh.t.said & _MISTAKES, sh.t.said & _MISTAKES  # the scenario plays only legal moves
    return sh


def test_scenario_files_come_in_pairs():
    names = [n for n in os.listdir(DIR) if n.startswith("mg-")]
    runs = [n[:-6] for n in names if n.endswith(".jsonl")]
    assert len(runs) >= 3
    for r in runs:
        assert r + ".expect.json" in names


def test_two_players_young_one_last_cheese():
    sh = _check("mg-2p-cheese")
    assert sh.joined == {1: False, 2: True}
    assert "error" not in sh.t.sounds


def test_four_players_every_mouse_caught():
    sh = _check("mg-4p-mice")
    assert sh.joined[3] is True and "blocked" in sh.t.said and "too_slow" in sh.t.said
    assert "stack_mouse" in sh.t.said


def test_six_players_ties():
    sh = _check("mg-6p-ties")
    assert len(sh.joined) == 6 and "stack_mouse" in sh.t.said and "unclaimed" in sh.t.said
    assert "error" not in sh.t.sounds
