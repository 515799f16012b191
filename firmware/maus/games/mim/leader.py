# M is for Mouse, variant B: a game leader taps each card before laying it (the reveal). The first press
# claims; a valid pair wins all face-up cards but the newest. A wrong claim (or none within the claim
# window) wins nothing and bars the claimer until the card after next. Most cards at the end wins.
from maus import moment
from maus.games.mim.race import Race
from micropython import const

_LEADER = const(0)  # phases: as in mim.race
_TABLE = const(3)
_CLAIM = const(4)
_OVER = const(6)


class Leader(Race):
    # State made by maus.games.mim.new (bare annotations: the compiler keeps nothing of them)
    seen: bytearray  # by card index: laid this game
    leader: int  # the game leader's player id (0: none yet)
    cards: "list[int]"  # won, by player id

    choose = False

    def start(self):
        self.table.log("prompt", {"what": "leader"})
        self.prompt()

    def prompt(self):
        ph = self.phase
        if ph == _LEADER:
            self.say("leader")
        elif ph == _TABLE:
            if self.laid == 0:
                self.say("lead_first", p=self.leader)
            else:
                self.say("lead_next", p=self.leader, left=self.total - self.laid)
        elif ph == _CLAIM:
            self.say("claimer", p=self.claimer)

    def idle_gesture(self, p, kind):
        if self.phase == _LEADER and kind == "long":
            self.leader = p
            self.table.log("note", {"text": "leader", "player": p})
            self.table.sound("ok")
            self.phase = _TABLE
            self.prompt()

    def card_tap(self, c, t_us):
        with moment():
            import maus.games.mim.claims

            maus.games.mim.claims.b_card(self, c, t_us)  # a moment: a card read

    def armed(self):
        super().armed()
        if self.laid == self.total:
            self.table.timer("last", 2 * self.claim_ms)  # unclaimed pairs after the last card

    def last(self):
        self.phase = _OVER
        self.say("b_end")
        self.g.end("stack used up")

    def won(self, p, k, letter):
        with moment():
            import maus.games.mim.claims

            maus.games.mim.claims.b_won(self, p, letter)  # a moment: a claim is good

    def penalty(self, p, slow):
        self.lock[p] = self.laid + 2  # these cards and the next one
        self.say("b_slow" if slow else "b_wrong", p=p)
