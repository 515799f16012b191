"""Writes the Mucks Mäuschen Still scenarios (tests/scenarios/mms-*.jsonl) and their expected game ends.

Run `python tests/scenarios/mms-make.py` after changing a game below. Each game is a list of turns; the
script turns them into timed button presses and knocks following the unit shell's flow (tap the game
card, join, double press to start, a click says who starts) and keeps its own count of the sticks, as
an oracle independent of the firmware, to write the .expect.json.

Turn kinds: ("place",) the stick stays; ("alarm", amp) a bump of the castle while armed, the next
player's click ends the report window; ("alarm_wait", amp) the same, the report window times out;
("slid", amp, k) an alarm, then k double presses report sticks that slid off; ("pass",) a long press;
("quiet", level) an attempt with a quiet stick insertion (ambient noise that must not alarm), then
the stick stays; ("fell",) a double press on one's own turn: a stick fell off, the turn is over.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORT_MS = 4000  # maus.games.mms.rules.Mms.report_ms
SHOW_MS = 1500  # Mms.show_ms
CLICK_MS = 400  # double_press_ms: a click is known this long after its release


class Script:
    def __init__(self, n, starter, comment):
        self.n = n
        self.lines = ["# " + comment]
        self.t = 1000
        self.sticks = {p: 16 // n for p in range(1, n + 1)}
        self.castle = 0
        self.turn = starter
        self.done = None
        self.at("tap", "game/mms")
        self.t += 300
        self.at("remove", "game/mms")
        self.t += 700
        for p in range(1, n + 1):
            self.click(p, wait=False)
            self.t += 500
        self.t += 200
        self.double(1)  # start the game
        self.t += 900
        self.click(starter)  # who starts

    def at(self, key, value, **extra):
        rec = {"at_ms": self.t, key: value}
        rec.update(extra)
        self.lines.append(json.dumps(rec))

    def click(self, p, wait=True):
        self.at("press", p)
        self.t += 80
        self.at("release", p)
        if wait:
            self.t += CLICK_MS + 300

    def double(self, p):
        self.at("press", p)
        self.t += 60
        self.at("release", p)
        self.t += 100
        self.at("press", p)
        self.t += 60
        self.at("release", p)

    def next_player(self):
        return self.turn % self.n + 1

    def play(self, *turn):
        assert self.done is None, "the game is over"
        kind = turn[0]
        p = self.turn
        if kind == "pass":
            self.at("hold", p, ms=1200)
            self.t += 1200 + SHOW_MS + 300
        elif kind == "fell":
            self.double(p)
            assert self.castle > 0
            self.castle -= 1
            self.t += SHOW_MS + 500
        else:
            self.click(p)  # the attempt starts: armed
            self.t += 300
            if kind == "quiet":
                self.at("noise", turn[1])
                self.t += 1500
                self.click(p)  # the stick sits
                self.at("noise", 0)
                self.place(p)
            elif kind == "place":
                self.t += 900
                self.click(p)
                self.place(p)
            else:
                self.at("knock", turn[1], ms=40)
                self.t += 500
                if kind == "alarm":
                    self.click(self.next_player())
                elif kind == "alarm_wait":
                    self.t += REPORT_MS + 300
                elif kind == "slid":
                    for _ in range(turn[2]):
                        self.double(self.next_player())
                        self.t += 400
                        assert self.castle > 0
                        self.castle -= 1
                    self.t += REPORT_MS + 300
        self.turn = self.next_player()

    def place(self, p):
        self.sticks[p] -= 1
        self.castle += 1
        if self.sticks[p] == 0:
            self.done = {"winners": [p], "reason": "last_stick"}
        elif self.castle == 12:
            least = min(self.sticks.values())
            self.done = {"winners": [q for q in self.sticks if self.sticks[q] == least], "reason": "castle_full"}
        else:
            self.t += SHOW_MS + 300

    def write(self, name):
        assert self.done is not None, name + ": the game did not end"
        self.t += 2000
        (HERE / f"mms-{name}.jsonl").write_text("\n".join(self.lines) + "\n")
        expect = {"scores": {str(p): s for p, s in self.sticks.items()}, **self.done}
        (HERE / f"mms-{name}.expect.json").write_text(json.dumps(expect) + "\n")


def two_players_draw():
    s = Script(2, 1, "Mucks Maeuschen Still, 2 players: alarms, a pass, a quiet insertion; "
                     "the 12th stick ends it in a draw (2 sticks each)")
    s.play("place")  # P1 7
    s.play("alarm", 0.3)  # P2
    s.play("place")  # P1 6
    s.play("place")  # P2 7
    s.play("pass")  # P1
    s.play("quiet", 0.15)  # P2 6
    for _ in range(4):
        s.play("place")  # P1 5 4 / P2 5 4
    s.play("alarm_wait", 0.08)  # P1
    s.play("place")  # P2 3
    s.play("place")  # P1 3
    s.play("place")  # P2 2
    s.play("place")  # P1 2: 12 in the castle
    s.write("2p-draw")


def three_players_slid():
    s = Script(3, 2, "Mucks Maeuschen Still, 3 players (5 sticks each, 1 back in the box): alarms, "
                     "sticks slide off after an alarm and on a turn; P3 places the last stick and wins")
    s.play("place")  # P2 4
    s.play("place")  # P3 4
    s.play("alarm", 0.5)  # P1
    s.play("place")  # P2 3
    s.play("slid", 0.2, 2)  # P3: alarm, two sticks slide off (castle 1)
    s.play("place")  # P1 4
    s.play("fell")  # P2: a stick fell off on the turn (castle 1)
    s.play("place")  # P3 3
    s.play("pass")  # P1
    s.play("alarm", 0.06)  # P2
    s.play("place")  # P3 2
    s.play("quiet", 0.1)  # P1 3
    s.play("alarm_wait", 1.0)  # P2
    s.play("place")  # P3 1
    s.play("place")  # P1 2
    s.play("place")  # P2 2
    s.play("place")  # P3 0: wins
    s.write("3p-last")


def four_players_last():
    s = Script(4, 4, "Mucks Maeuschen Still, 4 players (4 sticks each): alarms, a pass, "
                     "a stick slides off; P4 places the last stick and wins at once")
    s.play("place")  # P4 3
    s.play("alarm", 0.12)  # P1
    s.play("place")  # P2 3
    s.play("pass")  # P3
    s.play("place")  # P4 2
    s.play("place")  # P1 3
    s.play("slid", 0.4, 1)  # P2: castle 4 -> 3
    s.play("alarm", 0.05)  # P3
    s.play("quiet", 0.2)  # P4 1
    s.play("alarm_wait", 0.7)  # P1
    s.play("place")  # P2 2
    s.play("place")  # P3 3
    s.play("place")  # P4 0: wins
    s.write("4p-last")


def four_players_full():
    s = Script(4, 1, "Mucks Maeuschen Still, 4 players: alarms and a pass; the 12th stick fills the castle "
                     "and all four share the win with 1 stick each")
    order = ["place", "place", "place", "alarm",  # round 1: P1 P2 P3 P4
             "place", "pass", "place", "place",
             "alarm", "place", "place", "place",
             "place", "place", "alarm", "place"]  # P4's third stick is the 12th
    for k in order:
        s.play(*((k, 0.25) if k == "alarm" else (k,)))
    s.write("4p-full")


if __name__ == "__main__":
    two_players_draw()
    three_players_slid()
    four_players_last()
    four_players_full()
    for f in sorted(HERE.glob("mms-*.expect.json")):
        print(f.name, f.read_text().strip())
