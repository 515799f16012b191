# M is for Mouse, variant A: turns round the table.
#
# Each round the three middle cards are read. The player on turn taps one hand card and one middle card
# (either order); a pair puts a chip on the element it used on the middle card. A long press passes: that
# player is out for the round. The last player left wins the round and puts a hand card aside; who gives
# up the last card wins. The unit cannot see hands, so it counts them.
from maus import moment
from maus.games.mim.engine import Engine
from micropython import const

_LAY = const(0)  # reading the middle cards
_TURN = const(1)  # the player on turn taps a hand card and a middle card
_CHOOSE = const(2)  # the two cards allow several pairs: the player picks one
_OVER = const(3)

_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt


class Turns(Engine):
    # State made by maus.games.mim.new (bare annotations: the compiler keeps nothing of them)
    mid: bytearray  # the middle cards (card indexes)
    used: bytearray  # chips on them (Pairs bits)
    nmid: int
    hand: "list[int]"  # cards in each hand, by player id
    out: bytearray  # by player id: passed this round
    won: bytearray  # rounds won, by player id
    pairs: "list[int]"  # by player id
    passes: "list[int]"  # by player id
    turn: int  # the player on turn
    round: int
    hcard: int  # the hand card tapped (-1: none yet)
    mslot: int  # the middle card's slot tapped (-1: none yet)
    phase: int  # _LAY .. _OVER

    def start(self):
        with moment():
            import maus.games.mim.rounds

            maus.games.mim.rounds.new_round(self)

    # --- rounds ----------------------------------------------------------------------------------

    def _prompt(self):
        if self.phase == _LAY:
            self.say("lay3", n=self.nmid)
        elif self.phase == _TURN:
            self._leds()
            self.say("turn", p=self.turn)

    def _leds(self):
        t = self.table
        for p in self.ids:
            if self.out[p]:
                t.led(p, None)
            else:
                t.led(p, self.colour[p], "blink" if p == self.turn else "on")

    def _next(self, p):
        # the next player after p (clockwise = by button) still in the round
        ids = self.ids
        i = ids.index(p)
        for k in range(1, len(ids) + 1):
            q = ids[(i + k) % len(ids)]
            if not self.out[q]:
                return q
        return p

    # --- events ----------------------------------------------------------------------------------
    def on_tap(self, ident, t_us):
        c = self.card(ident)
        if c < 0 or self.phase == _OVER:
            return
        ph = self.phase
        if ph == _LAY:
            with moment():
                import maus.games.mim.rounds

                maus.games.mim.rounds.a_lay(self, c)  # a moment: a middle card of the round
        elif ph == _TURN:
            self.table.cancel("next")
            slot = self._slot(c)
            if slot >= 0:
                self.mslot = slot
            else:
                self.hcard = c
            if self.hcard >= 0 and self.mslot >= 0:
                with moment():
                    import maus.games.mim.rounds

                    maus.games.mim.rounds.a_try(self)  # a moment: the verdict on two cards
            else:
                self.table.sound("tick")
                self.say("mid_card" if self.hcard >= 0 else "hand_card", p=self.turn)
        elif ph == _CHOOSE:
            self.show_choice()

    def on_press(self, player, t_us):
        pass

    def on_gesture(self, player, kind):
        ph = self.phase
        if ph == _CHOOSE and player == self.turn:
            if kind == "click":
                self.next_choice()
            elif kind == "long":
                with moment():
                    import maus.games.mim.rounds

                    maus.games.mim.rounds.a_take(self, self.opt_i)
        elif kind == "long":
            if ph == _TURN and player == self.turn:
                with moment():
                    import maus.games.mim.rounds

                    maus.games.mim.rounds.passes(self)  # a moment: the player is out of the round
            else:
                self.say("status", text="\n".join(self.g.status()))
        elif ph == _TURN and kind == "click" and player != self.turn:
            self.say("not_turn", p=player, q=self.turn)  # ignored, and said why; the turn prompt comes back
            self.table.timer("next", _SHOW_MS)

    def on_timer(self, name):
        if name == "next":
            self._prompt()

    # --- a turn ----------------------------------------------------------------------------------
    def _slot(self, c):
        for i in range(self.nmid):
            if self.mid[i] == c:
                return i
        return -1
