# M is for Mouse, variants B and C: races for pairs.
#
# B: a game leader taps each card before laying it (the reveal); the first press claims, the claimer taps
# the two cards of the pair. Valid: all face-up cards but the newest go to the claimer. Invalid (or too
# slow): no cards, and no claims until the card after next. Most cards when the stack is used up wins.
# C: 8 cards a round, read face down; a press gives the start signal. Claims queue in press order; a
# valid pair whose letter is free costs the claimer a chip, placed on that letter. The unit ends the round
# when no pair is left; the first player without chips wins.
from micropython import const

from maus.arbiter import FALSE_START, VALID, Arbiter
from maus.games.mim import Engine, ascii
from maus.games.mim_pairs import LETTERS
from maus.ticks import ticks_diff

_LEADER = const(0)  # B: waiting for the game leader to hold a button
_LAY = const(1)  # C: reading the round's cards
_READY = const(2)  # C: waiting for the start signal
_TABLE = const(3)  # cards face up: presses claim (B: the leader lays the next card)
_CLAIM = const(4)  # the claimer taps the two cards of the pair
_CHOOSE = const(5)  # C: the two cards allow several pairs: the claimer picks one
_OVER = const(6)

_ROUND = const(8)  # C: cards a round
_CHIPS = const(30)
_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt


class Race(Engine):
    def __init__(self, g, variant):
        super().__init__(g)
        s = self.settings
        self.b = variant == "B"
        self.arb = Arbiter(s.get("tie_window_us", 2000), s.get("lockout", True), s.get("settle_ms", 3))
        self.claim_ms = s.get("claim_window_ms", 5000)
        self.hint_ms = s.get("hint_after_s", 20) * 1000 if s.get("hints", False) else 0
        total = self.cat.n
        self.total = total
        self.slots = bytearray(total)  # the face-up cards (card indexes), oldest first
        self.used = bytearray(total)  # chips on them (Pairs bits; C: letters only)
        self.n = 0
        self.seen = bytearray(total)  # B: laid this game
        self.laid = 0  # B: cards laid so far
        self.leader = 0
        self.queue = []  # waiting claims [(offset_us, player)], earliest first
        self.claimer = 0
        self.tap1 = -1  # table slot of the claimer's first card
        self.cs = bytearray(2)  # table slots of the two cards on offer
        self.tap_t = 0
        self.deciding = False
        self.reveal_t = 0
        self.lock = bytearray(7)  # B: no claims while laid < lock[p]
        self.ok = [0] * 7
        self.wrong = [0] * 7
        self.cards = [0] * 7  # B: cards won
        self.chips = [0] * 7  # C: chips in hand
        self.placed = [0] * 7  # C: chips placed
        self.round = 0
        self.box = 0
        self.phase = _LEADER
        if not self.b:
            each = _CHIPS // len(self.ids)
            for p in self.ids:
                self.chips[p] = each
            self.box = _CHIPS - each * len(self.ids)

    def start(self):
        t = self.table
        if self.b:
            t.log("prompt", {"what": "leader"})
            self._prompt()
        else:
            t.log("note", {"text": "chips", "each": self.chips[self.ids[0]], "box": self.box})
            self._new_round(False)

    def _prompt(self):
        ph = self.phase
        if ph == _LEADER:
            self.say("leader")
        elif ph == _LAY:
            self.say("lay8", n=self.n)
        elif ph == _READY:
            self.say("ready")
        elif ph == _TABLE:
            if not self.b:
                self.say("go")
            elif self.laid == 0:
                self.say("lead_first", p=self.leader)
            else:
                self.say("lead_next", p=self.leader, left=self.total - self.laid)
        elif ph == _CLAIM:
            self.say("claimer", p=self.claimer)
        elif ph == _CHOOSE:
            self.show_choice()

    def _leds(self):
        t = self.table
        for p in self.ids:
            t.led(p, self.colour[p], "blink" if p == self.claimer else "on")

    # --- events ----------------------------------------------------------------------------------
    def on_tap(self, ident, t_us):
        c = self.card(ident)
        if c < 0:
            return
        ph = self.phase
        if ph == _LEADER:
            self.bad("leader")
        elif ph == _LAY:
            if self._slot(c) >= 0:
                self.bad("again")
                return
            self.slots[self.n] = c
            self.used[self.n] = 0
            self.n += 1
            self.table.sound("ok")
            if self.n < _ROUND:
                self._prompt()
                return
            self.table.log("note", {"text": "round cards", "round": self.round,
                                    "cards": [self.ident(x) for x in self.slots[: self.n]]})
            if self.finder.find(self.slots, self.n, self.used) == 0:
                self._round_end()
                return
            self.phase = _READY
            self._prompt()
        elif ph == _READY:
            self._prompt()
        elif ph == _TABLE:
            if not self.b:
                self.bad("press_first")
            elif self.deciding:
                pass  # a race is being decided: a stray read is only logged
            elif self.seen[c]:
                self.bad("played")
            else:
                self._reveal(c, t_us)
        elif ph == _CLAIM:
            self._claim_tap(c, t_us)
        elif ph == _CHOOSE:
            self.show_choice()

    def on_press(self, p, t_us):
        ph = self.phase
        t = self.table
        if ph == _TABLE:
            if self.laid < self.lock[p]:
                t.log("press", {"player": p, "offset_us": ticks_diff(t_us, self.reveal_t), "false_start": False,
                                "locked": True})
            elif not self.arb.open:
                self.arb.early(p)  # before the next card: a false start
                t.log("press", {"player": p, "offset_us": -1, "false_start": True})
            else:
                kind = self.arb.press(p, t_us)
                t.log("press", {"player": p, "offset_us": ticks_diff(t_us, self.arb.reveal_t),
                                "false_start": kind == FALSE_START})
                if kind == VALID and not self.deciding:
                    self.deciding = True
                    for name in ("quiet", "hint", "last"):
                        t.cancel(name)
                    t.timer("decide", self.arb.decide_ms())
        elif ph == _CLAIM or ph == _CHOOSE:
            off = ticks_diff(t_us, self.reveal_t)
            t.log("press", {"player": p, "offset_us": off, "false_start": False})
            if p == self.claimer or self.laid < self.lock[p]:
                return
            q = self.queue
            for o, x in q:
                if x == p:
                    return
            i = len(q)
            while i > 0 and q[i - 1][0] > off:
                i -= 1
            q.insert(i, (off, p))
            t.log("claim", {"player": p, "offset_us": off, "queued": True})
        elif ph == _READY:
            self._go(p, t_us)

    def on_gesture(self, p, kind):
        ph = self.phase
        if ph == _LEADER:
            if kind == "long":
                self.leader = p
                self.table.log("note", {"text": "leader", "player": p})
                self.table.sound("ok")
                self.phase = _TABLE
                self._prompt()
        elif ph == _CHOOSE and p == self.claimer:
            if kind == "click":
                self.next_choice()
            elif kind == "long":
                self._take(self.opt_i)
        elif ph == _LAY and kind == "long":
            self.say("status", text="\n".join(self.status()))

    def on_timer(self, name):
        ph = self.phase
        t = self.table
        if name == "decide":
            if ph == _TABLE and self.deciding:
                self._decide()
        elif name == "quiet":
            t.race_close()
            if ph == _TABLE and not self.deciding:
                self._prompt()
        elif name == "claim":
            if ph == _CLAIM or ph == _CHOOSE:
                self._wrong("too slow", True)
        elif name == "hint":
            if ph == _TABLE and not self.deciding:
                self._hint()
        elif name == "last":
            if ph == _TABLE and not self.deciding:
                self._b_end()
        elif name == "next":
            self._prompt()

    # --- B: the leader's cards -------------------------------------------------------------------
    def _reveal(self, c, t_us):
        t = self.table
        for name in ("hint", "last", "quiet"):
            t.cancel(name)
        self.seen[c] = 1
        self.slots[self.n] = c
        self.used[self.n] = 0
        self.n += 1
        self.laid += 1
        if self.arb.open:
            self.arb.close()  # lock-outs of the last card end; early presses (arbiter closed) stay
        self.reveal_t = t_us
        self.arb.reveal(t_us)
        t.log("reveal", {"card": self.ident(c), "by": self.leader, "n": self.laid})
        self.deciding = False
        if self.laid == self.total and self.finder.find(self.slots, self.n, self.used) == 0:
            self._b_end()
            return
        t.race_open(t_us)
        t.timer("quiet", self.claim_ms)
        self._armed()

    def _armed(self):
        # the table waits for claims: hints, and (B) the end after the last card
        t = self.table
        pairs = self.finder.find(self.slots, self.n, self.used)
        if self.hint_ms and pairs:
            t.timer("hint", self.hint_ms)
        if self.b and self.laid == self.total:
            t.timer("last", 2 * self.claim_ms)

    def _b_end(self):
        self.phase = _OVER
        self.say("b_end")
        self.end("stack used up")

    # --- C: rounds -------------------------------------------------------------------------------
    def _new_round(self, wait):
        self.round += 1
        self.n = 0
        self.phase = _LAY
        self.table.log("prompt", {"what": "round cards", "round": self.round})
        if wait:
            self.table.timer("next", _SHOW_MS)
        else:
            self._prompt()

    def _go(self, p, t_us):
        t = self.table
        self.reveal_t = t_us
        if self.arb.open:
            self.arb.close()
        self.arb.reveal(t_us)
        t.log("reveal", {"card": None, "round": self.round, "by": p})
        t.sound("start")
        self.phase = _TABLE
        self.deciding = False
        self._prompt()
        t.race_open(t_us)
        t.timer("quiet", self.claim_ms)
        self._armed()

    def _round_end(self):
        t = self.table
        t.log("note", {"text": "no pair left", "round": self.round})
        self._drop_queue()
        self.arb.close()
        t.race_close()
        for name in ("quiet", "hint", "claim", "decide"):
            t.cancel(name)
        self.say("c_round")
        self._new_round(True)

    # --- claims ----------------------------------------------------------------------------------
    def _decide(self):
        self.deciding = False
        won = self.arb.decide()
        self.table.race_close()
        self.table.cancel("quiet")
        tied = len(won) > 1
        q = [(off, p) for p, off, kind in self.arb.presses if kind == VALID]
        q.sort()
        self.queue = q
        for off, p in q:
            self.table.log("claim", {"player": p, "offset_us": off, "tied": tied and off - q[0][0] <= self.arb.tie_us})
        self._serve(False)

    def _serve(self, wait=True):
        # the next claim in the queue, or back to the table; wait: a verdict is on the display
        t = self.table
        if not self.queue:
            self.claimer = 0
            self.phase = _TABLE
            self._leds()
            self.arb.reveal(self.reveal_t)  # the same cards: claims are open again
            self._armed()
            t.timer("next", _SHOW_MS)
            return
        self.claimer = self.queue.pop(0)[1]
        self.tap1 = -1
        self.phase = _CLAIM
        self._leds()
        t.timer("claim", self.claim_ms)
        if wait:
            t.timer("next", _SHOW_MS)
        else:
            self._prompt()

    def _slot(self, c):
        for i in range(self.n):
            if self.slots[i] == c:
                return i
        return -1

    def _claim_tap(self, c, t_us):
        slot = self._slot(c)
        if slot < 0:
            self.bad("not_on_table")
            return
        if self.tap1 < 0:
            self.tap1 = slot
            self.table.sound("tick")
            return
        if slot == self.tap1:
            return
        s1 = self.tap1
        self.cs[0] = s1
        self.cs[1] = slot
        self.tap_t = t_us
        n = self.offer(self.slots[s1], self.used[s1], self.slots[slot], self.used[slot])
        if n == 0:
            self._wrong("no free pair" if not self.b else "no pair", False)
        elif n == 1 or self.b:  # in B every pair wins the same cards: no need to choose
            self._take(0)
        else:
            self.phase = _CHOOSE
            self.table.sound("prompt")
            self.table.timer("claim", self.claim_ms)
            self.show_choice()

    def _take(self, k):
        t = self.table
        p = self.claimer
        t.cancel("claim")
        letter = self.opt_letter(k)
        self.verdict(p, True, "pair", letter)
        self.ok[p] += 1
        t.sound("ok")
        pair = ascii(self.pair_text(letter))
        if self.b:
            got = self.n - 1
            self.cards[p] += got
            t.log("score", {"player": p, "delta": got, "why": "cards"})
            self.say("b_ok", pair=pair, p=p, n=got)
            self.slots[0] = self.slots[self.n - 1]  # the newest card stays
            self.used[0] = 0
            self.n = 1
            self._drop_queue()
            self.arb.close()
            self.claimer = 0
            self.phase = _TABLE
            self._leds()
            if self.laid == self.total:
                self._b_end()
            else:
                t.timer("next", _SHOW_MS)
            return
        pos = self.opts[2 * k + 1]  # the letter's element
        slot = self.cs[pos >> 2]
        self.used[slot] |= 1 << (pos & 3)
        self.chips[p] -= 1
        self.placed[p] += 1
        t.log("score", {"player": p, "delta": 1, "why": "chip"})
        t.log("chip", {"player": p, "card": self.ident(self.slots[slot]), "on": LETTERS[letter]})
        self.say("c_ok", pair=pair, p=p, l=LETTERS[letter], left=self.chips[p])
        if self.chips[p] == 0:
            self.phase = _OVER
            self.say("c_won", p=p)
            self.end("no chips left")
        elif self.finder.find(self.slots, self.n, self.used) == 0:
            self._round_end()
        elif self.queue:
            self._serve()
        else:
            # the table changed: a new race from this moment
            self.claimer = 0
            self._leds()
            self.reveal_t = self.tap_t
            self.arb.close()
            self.arb.reveal(self.tap_t)
            self.phase = _TABLE
            t.race_open(self.tap_t)
            t.timer("quiet", self.claim_ms)
            self._armed()
            t.timer("next", _SHOW_MS)

    def _wrong(self, reason, slow):
        t = self.table
        p = self.claimer
        t.cancel("claim")
        self.verdict(p, False, reason)
        self.wrong[p] += 1
        t.sound("wrong")
        if self.b:
            self.lock[p] = self.laid + 2  # this card and the next
            self.say("b_slow" if slow else "b_wrong", p=p)
        else:
            self.say("c_slow" if slow else "c_wrong", p=p)
        self._serve()

    def _drop_queue(self):
        if self.queue:
            self.table.log("note", {"text": "claims dropped", "players": [p for o, p in self.queue]})
            self.queue = []

    def _hint(self):
        if self.finder.find(self.slots, self.n, self.used) == 0:
            return
        letter = self.finder.letter(self.slots, 0)
        t = self.table
        t.log("prompt", {"what": "hint", "letter": LETTERS[letter]})
        t.led(0, "white", "blink")
        t.sound("prompt")
        self.say("hint", l=LETTERS[letter])

    # --- results ---------------------------------------------------------------------------------
    def winners(self):
        if self.b:
            best = max(self.cards[p] for p in self.ids)
            return [p for p in self.ids if self.cards[p] == best]
        return [p for p in self.ids if self.chips[p] == 0]

    def status(self):
        de = self.lang == "de"
        out = []
        for p in self.ids:
            if self.b:
                out.append(("S%d: %d Karten" if de else "P%d: %d cards") % (p, self.cards[p]))
            else:
                out.append(("S%d: %d Chips" if de else "P%d: %d chips") % (p, self.chips[p]))
        return out[:6]

    def summary(self):
        scores = {}
        br = {}
        for p in self.ids:
            k = str(p)
            if self.b:
                scores[k] = self.cards[p]
                br[k] = {"cards": self.cards[p], "claims_ok": self.ok[p], "claims_wrong": self.wrong[p],
                         "leader": p == self.leader}
            else:
                scores[k] = self.placed[p]
                br[k] = {"chips_left": self.chips[p], "chips_placed": self.placed[p], "claims_ok": self.ok[p],
                         "claims_wrong": self.wrong[p]}
        return {"scores": scores, "winners": self.winners(), "breakdown": br, "reason": self.reason}
