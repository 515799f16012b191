# Mausgeflippt: the game's state and the rules of a claim, the part after a race is decided: a clothing
# item, "Mausgeflippt!" with a whole collection, protected mice, ties. mausgeflippt.Mausgeflippt adds
# reveals, races and cheeses (one game in two files, so each compiles within a small heap).
from micropython import const

from maus.arbiter import Arbiter
from maus.game import Game
from maus.games.mausgeflippt_cards import load
from maus.games.mausgeflippt_state import TableState
from maus.text import Texts

# The prompts: 16 characters x 6 lines, ASCII only (the OLED font has no umlauts), in
# maus/texts/mg.<lang>.json, read from flash when shown (maus.text).
TEXT = Texts("mg")

_SETUP = const(0)  # phases, as in mausgeflippt.py
_CLAIM = const(3)
_COLLECT = const(4)
_HAND = const(7)
_YOUNG_HAND = const(4)
_MAX_DOWN = const(3)  # face-down penalties that block "Mausgeflippt!"
_P = const(7)  # per-player lists are indexed by player id 1..6


class Claims(Game):
    def __init__(self, table, players, settings, catalog, variant=None, seed=0):
        super().__init__(table, players, settings, catalog, variant, seed)
        self.cat = load(catalog)  # ValueError naming the problem for a bad catalog
        g = settings.get
        self.lang = g("lang", "en") if g("lang", "en") in TEXT else "en"
        self.claim_ms = g("claim_window_ms", 5000)
        self.protect_ms = g("protection_timeout_ms", 3000)
        self.nudge_ms = g("prompt_timeout_s", 60) * 1000
        self.arb = Arbiter(g("tie_window_us", 2000), g("lockout", True))
        self.colour = ["white"] * _P
        for pl in players:
            self.colour[pl.id] = pl.colour
        self.s = TableState(players)
        self.phase = _SETUP
        self.reason = ""
        self.mouse = 0  # the open mouse
        self.under = 0  # the mouse that went under the stack last
        self.protected = False
        self.revealer = 0  # who reveals next (0: anyone)
        self.early_t = [None] * _P  # time of a press while waiting for the mouse
        self.queue = []  # this reveal's claimants, in press order
        self.qi = 0
        self.claimant = 0
        self.valid = 0  # valid claims this reveal
        self.took_cheese = 0  # cheeses taken this reveal
        self.deciding = False  # the race's decide timer runs
        self.coll = bytearray(_HAND)  # the collection being tapped (clothing ids)
        self.ncoll = 0

    # --- output ----------------------------------------------------------------------------------
    def _say(self, key, **kw):
        self.table.say(key, **kw)
        self.table.log("prompt", {"what": key})

    def _bad(self, key, **kw):
        self.table.sound("error")
        self._say(key, **kw)

    def _verdict(self, p, ok, reason):
        self.table.log("verdict", {"player": p, "ok": ok, "reason": reason})

    def _score(self, p, delta, why):
        self.table.log("score", {"player": p, "delta": delta, "why": why})

    def _round_end(self):
        raise NotImplementedError  # mausgeflippt.Mausgeflippt

    # --- claims ----------------------------------------------------------------------------------
    def _next_claim(self):
        if self.qi >= len(self.queue):
            self._round_end()
            return
        p = self.queue[self.qi]
        self.qi += 1
        self.claimant = p
        self.phase = _CLAIM
        self.table.led(p, self.colour[p], "blink")
        self.table.sound("prompt")
        self._say("claim", p=p)
        self.table.timer("claim", self.claim_ms)

    def _hand(self, p):
        return _YOUNG_HAND if self.s.young[p] else _HAND

    def _call(self):
        # "Mausgeflippt!": refused with three face-down cards; the window stays open for a card
        p = self.claimant
        if self.s.down[p] >= _MAX_DOWN:
            self._verdict(p, False, "blocked_3_face_down")
            self._bad("blocked", p=p)
            return
        self.phase = _COLLECT
        self.ncoll = 0
        self.table.log("claim", {"player": p, "call": "mausgeflippt"})
        self._say("collect", p=p, n=self._hand(p))
        self.table.timer("claim", self.claim_ms)

    def _clothing(self, c):
        if self.s.penalty[c]:
            self._bad("penalty_card")
            return
        if self.phase == _CLAIM:
            self.table.cancel("claim")
            self._judge_item(c)
            self._next_claim()
            return
        for i in range(self.ncoll):
            if self.coll[i] == c:
                return  # read again: counted once
        n = self._hand(self.claimant)
        if self.ncoll >= n:
            self._bad("too_many", n=n)
            return
        self.coll[self.ncoll] = c
        self.ncoll += 1
        self.table.sound("tick")
        self.table.timer("claim", self.claim_ms)  # a fresh window for the next card

    def _end_collection(self, timed_out):
        if self.ncoll == 0:
            if timed_out:
                self._no_claim()
            else:
                self._bad("no_cards")
            return
        self.table.cancel("claim")
        if timed_out:
            self.table.log("timeout", {"what": "claim", "player": self.claimant, "outcome": "collection_judged"})
        self._judge_collection()
        self._next_claim()

    def _no_claim(self):
        # the claim window ran out with nothing played: the press alone was the try
        p = self.claimant
        self.table.log("timeout", {"what": "claim", "player": p,
                                   "outcome": "cheese" if self.protected else "no_claim"})
        if self.protected:
            self._verdict(p, False, "protected")
            self._cheese(p, 0, False)
        else:
            self._verdict(p, False, "timeout")
            self.table.led(p, None)
            self._say("too_slow", p=p)
            if self.qi >= len(self.queue):
                self._pass_on()
        self._next_claim()

    def _pass_on(self):
        # Decision 3: the mouse goes to the first player who PLACES a card (rulebook), so when the claimant
        # plays nothing the claim passes to the next player who pressed since the reveal, in press order.
        arb = self.arb
        for q in arb.order:
            if q not in self.queue:
                self.queue.append(q)
                self.table.log("claim", {"player": q, "offset_us": arb.offset(q), "passed": True})
                return

    # --- the rules of a claim --------------------------------------------------------------------
    def _worn(self, c):
        return self.cat.worn(self.mouse, self.cat.clothing[c - 1])  # item AND colour

    def _judge_item(self, c):
        p = self.claimant
        worn = self._worn(c)
        if self.protected:
            # a worn item on a protected mouse is discarded; a wrong one is a penalty too
            self._verdict(p, False, "protected_item_worn" if worn else "protected_item_not_worn")
            if not worn:
                self._penalise(p, c, False)
            self._cheese(p, 0 if worn else 1, worn)
        elif worn:
            self._verdict(p, True, "item_worn")
            self._catch(p)
        else:
            self._verdict(p, False, "item_not_worn")
            self._penalise(p, c, False)
            self._wrong(p, "wrong_item", 1)

    def _judge_collection(self):
        p = self.claimant
        n = 0
        for i in range(self.ncoll):
            c = self.coll[i]
            if self._worn(c):
                self._penalise(p, c, n == 0)  # one matching card face down, the rest face up
                n += 1
        if self.protected:
            self._verdict(p, False, "protected_collection")
            self._cheese(p, n, False)
        elif n == 0:
            self._verdict(p, True, "collection_clean")
            self._catch(p)
        else:
            self._verdict(p, False, "collection_matches")
            self._wrong(p, "wrong_coll", n)

    def _penalise(self, p, c, face_down):
        self.s.penalise(p, c, face_down)
        self._score(p, -1, "clothing_down" if face_down else "clothing_up")

    def _wrong(self, p, key, n):
        self.table.sound("wrong")
        self.table.led(p, "red")
        self._say(key, p=p, n=n, pts=self.s.score(p))

    def _catch(self, p):
        # each valid claim catches a mouse: the open one first, then (ties) one from the stack
        self.valid += 1
        self.table.sound("ok")
        self.table.led(p, "green")
        if not self.s.catch(p, self.mouse if self.valid == 1 else 0):
            self._say("no_mouse", p=p)
            return
        self._score(p, 1, "mouse")
        self._say("caught" if self.valid == 1 else "stack_mouse", p=p, pts=self.s.score(p))

    def _cheese(self, p, cards, discard):
        # the open cheese for the first claimant; a tied one takes the next from the stack
        self.table.sound("cheese")
        self.table.led(p, "yellow", "blink")
        if not self.s.take_cheese(p, self.took_cheese > 0):
            return
        self.took_cheese += 1
        self._score(p, -2, "cheese")
        t = TEXT[self.lang]
        more = t["cheese_more"].format(n=cards) if cards else ""
        self._say("cheese", p=p, more=more + (t["discard"] if discard else ""), pts=self.s.score(p))
