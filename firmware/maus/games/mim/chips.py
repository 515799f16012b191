# M is for Mouse, variant C: all at once. 30 chips are split evenly (the rest goes back in the box). Each
# round 8 cards are read face down; a press gives the start signal. A valid pair whose letter is free
# costs the claimer a chip, placed on that letter. The unit ends the round when no pair is left; the
# first player without chips wins.
from maus import moment
from maus.games.mim.engine import LETTERS, ascii
from maus.games.mim.race import Race
from micropython import const

_ROUND = const(8)  # cards a round

_LAY = const(1)  # phases: as in mim.race
_READY = const(2)
_TABLE = const(3)
_CLAIM = const(4)
_CHOOSE = const(5)
_OVER = const(6)
_SHOW_MS = const(1500)


class Chips(Race):
    # State made by maus.games.mim.new (bare annotations: the compiler keeps nothing of them)
    chips: "list[int]"  # in hand, by player id
    placed: "list[int]"  # by player id
    round: int
    box: int  # the chips left over at the split

    def start(self):
        self.table.log("note", {"text": "chips", "each": self.chips[self.ids[0]], "box": self.box})
        self.new_round(False)  # here, not in mim.claims: the start is the game's tightest moment in RAM

    def new_round(self, wait):
        """The next round's cards are read (wait: the last verdict stays on the display a moment)."""
        self.round += 1
        self.n = 0
        self.phase = _LAY
        self.table.log("prompt", {"what": "round cards", "round": self.round})
        if wait:
            self.table.timer("next", _SHOW_MS)
        else:
            self.prompt()

    def prompt(self):
        ph = self.phase
        if ph == _LAY:
            self.say("lay8", n=self.n)
        elif ph == _READY:
            self.say("ready")
        elif ph == _TABLE:
            self.say("go")
        elif ph == _CLAIM:
            self.say("claimer", p=self.claimer)
        elif ph == _CHOOSE:
            self.show_choice()

    def card_tap(self, c, t_us):
        ph = self.phase
        if ph == _LAY:
            if self._slot(c) >= 0:
                self.bad("again")
                return
            self.slots[self.n] = c
            self.used[self.n] = 0
            self.n += 1
            self.table.sound("ok")
            if self.n < _ROUND:
                self.prompt()
                return
            cards = []
            for i in range(self.n):  # (a loop: a comprehension would be a function of its own in RAM)
                cards.append(self.ident(self.slots[i]))
            self.table.log("note", {"text": "round cards", "round": self.round, "cards": cards})
            if self.pairs_left() == 0:
                with moment():
                    import maus.games.mim.claims

                    maus.games.mim.claims.c_round_end(self)
                return
            self.phase = _READY
            self.prompt()
        elif ph == _READY:
            self.prompt()
        elif ph == _TABLE:
            self.bad("press_first")

    def idle_press(self, p, t_us):
        if self.phase == _READY:  # the start signal
            self.table.log("reveal", {"card": None, "round": self.round, "by": p})
            self.table.sound("start")
            self.open(t_us)
            self.prompt()

    def idle_gesture(self, p, kind):
        if self.phase == _LAY and kind == "long":
            self.say("status", text="\n".join(self.g.status()))


    def won(self, p, k, letter):
        t = self.table
        pos = self.opts[2 * k + 1]  # the letter's element
        slot = self.cs[pos >> 2]
        self.used[slot] |= 1 << (pos & 3)
        self.chips[p] -= 1
        self.placed[p] += 1
        t.log("score", {"player": p, "delta": 1, "why": "chip"})
        t.log("chip", {"player": p, "card": self.ident(self.slots[slot]), "on": LETTERS[letter]})
        self.say("c_ok", pair=ascii(self.pair_text(letter)), p=p, l=LETTERS[letter], left=self.chips[p])
        if self.chips[p] == 0:
            self.phase = _OVER
            self.say("c_won", p=p)
            self.g.end("no chips left")
        elif self.pairs_left() == 0:
            with moment():
                import maus.games.mim.claims

                maus.games.mim.claims.c_round_end(self)
        elif self.queue:
            self.serve()
        else:
            self.claimer = 0
            self._leds()
            self.open(self.tap_t)  # the cards changed: a new race from this moment
            t.timer("next", _SHOW_MS)

    def penalty(self, p, slow):
        self.say("c_slow" if slow else "c_wrong", p=p)
