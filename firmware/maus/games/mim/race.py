# M is for Mouse, variants B and C: what both races share. A press claims (the Arbiter decides the first
# one by its edge time); claims queue in press order; the claimer taps the two cards of the pair and, when
# they allow several, picks one with the button. The variants (mim.leader: B, mim.chips: C) say what a
# pair wins and when the table changes.
from maus import moment
from maus.capture.arbiter import VALID
from maus.games.mim.engine import Engine
from maus.ticks import ticks_diff
from micropython import const

_LEADER = const(0)  # B: waiting for the game leader to hold a button
_LAY = const(1)  # C: reading the round's cards
_READY = const(2)  # C: waiting for the start signal
_TABLE = const(3)  # cards face up: presses claim (B: the leader lays the next card)
_CLAIM = const(4)  # the claimer taps the two cards of the pair
_CHOOSE = const(5)  # C: the two cards allow several pairs: the claimer picks one
_OVER = const(6)

_TYPES = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if _TYPES:
    from typing import Callable

    from maus.capture.arbiter import Arbiter

_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt
# (the variants repeat the phases they use as their own consts: a const costs no RAM, a name would)


class Race(Engine):
    # State made by maus.games.mim.new (bare annotations: the compiler keeps nothing of them)
    arb: "Arbiter"
    claim_ms: int
    hint_ms: int  # 0: no hints
    total: int  # cards in the catalog
    slots: bytearray  # the face-up cards (card indexes), oldest first
    used: bytearray  # chips on them (Pairs bits; C: letters only)
    n: int  # face-up cards
    laid: int  # B: cards laid so far
    lock: bytearray  # B: by player id: no claims while laid < lock[p]
    queue: "list[tuple[int, int]]"  # waiting claims (offset_us, player), earliest first
    claimer: int  # 0: none
    tap1: int  # table slot of the claimer's first card (-1: none yet)
    cs: bytearray  # table slots of the two cards on offer
    tap_t: int  # ticks_us of the claimer's second card
    deciding: bool
    reveal_t: int  # ticks_us the table last changed
    ok: "list[int]"  # good claims, by player id
    wrong: "list[int]"  # wrong claims, by player id
    phase: int  # _LEADER .. _OVER

    def _leds(self):
        t = self.table
        for p in self.ids:
            t.led(p, self.colour[p], "blink" if p == self.claimer else "on")

    def _slot(self, c):
        for i in range(self.n):
            if self.slots[i] == c:
                return i
        return -1

    def pairs_left(self):
        return self.finder.find(self.slots, self.n, self.used)

    # --- events ----------------------------------------------------------------------------------
    def on_tap(self, ident, t_us):
        c = self.card(ident)
        if c < 0:
            return
        ph = self.phase
        if ph == _CLAIM:
            self._claim_tap(c, t_us)
        elif ph == _CHOOSE:
            self.show_choice()
        else:
            self.card_tap(c, t_us)

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
                arb = self.arb
                kind = arb.press(p, t_us)
                t.log("press", arb.fields(p, kind, ticks_diff(t_us, arb.reveal_t)))
                if kind == VALID and not self.deciding:
                    self.deciding = True
                    for name in ("quiet", "hint", "last"):
                        t.cancel(name)
                    t.timer("decide", self.arb.decide_ms())
        elif ph == _CLAIM or ph == _CHOOSE:  # after the decision: logged, and queued (a moment of its own)
            with moment():
                import maus.games.mim.claims

                maus.games.mim.claims.late_press(self, p, t_us)
        else:
            self.idle_press(p, t_us)

    def on_gesture(self, p, kind):
        if self.phase == _CHOOSE and p == self.claimer:
            if kind == "click":
                self.next_choice()
            elif kind == "long":
                self._take(self.opt_i)
        else:
            self.idle_gesture(p, kind)

    def on_timer(self, name):
        ph = self.phase
        t = self.table
        if name == "decide":
            if ph == _TABLE and self.deciding:
                self._decide()
        elif name == "quiet":
            t.race_close()
            if ph == _TABLE and not self.deciding:
                self.prompt()
        elif name == "claim":
            if ph == _CLAIM or ph == _CHOOSE:
                self._wrong("too slow", True)
        elif name == "hint":
            if ph == _TABLE and not self.deciding:
                with moment():
                    import maus.games.mim.aside

                    maus.games.mim.aside.hint(self)  # hints are a setting, off by default
        elif name == "last":
            if ph == _TABLE and not self.deciding:
                self.last()
        elif name == "next":
            self.prompt()

    # hooks of the variants: what both define are bare annotations (the compiler keeps nothing of them)
    card_tap: "Callable[[int, int], None]"  # (card, t_us): a card tap outside a claim
    idle_gesture: "Callable[[int, str], None]"  # (player, kind): a gesture outside a choice
    prompt: "Callable[[], None]"  # (): the prompt of the phase
    won: "Callable[[int, int, int], None]"  # (player, k, letter): claim k of the offered pairs is good (letter: its letter index)
    penalty: "Callable[[int, bool], None]"  # (player, slow): the claim was wrong (slow: the claim window ran out)

    def idle_press(self, p, t_us):
        pass

    def last(self):
        pass

    # --- the table -------------------------------------------------------------------------------
    def open(self, t_us):
        """The table changed at t_us: a new race for pairs."""
        t = self.table
        self.reveal_t = t_us
        if self.arb.open:
            self.arb.close()  # lock-outs of the last race end; early presses (arbiter closed) stay
        self.arb.reveal(t_us)
        self.deciding = False
        self.claimer = 0
        self.phase = _TABLE
        t.race_open(t_us)
        t.timer("quiet", self.claim_ms)
        self.armed()

    def armed(self):
        # the table waits for claims: a hint after a while, if there is a pair
        if self.hint_ms and self.pairs_left():
            self.table.timer("hint", self.hint_ms)

    # --- claims ----------------------------------------------------------------------------------
    def _decide(self):
        self.deciding = False
        won = self.arb.decide()
        self.table.race_close()
        self.table.cancel("quiet")
        tied = len(won) > 1
        q = []
        for p, off, kind in self.arb.presses:  # (loops, not comprehensions: each would be a function in RAM)
            if kind == VALID:
                q.append((off, p))
        q.sort()
        self.queue = q
        for off, p in q:
            self.table.log("claim", {"player": p, "offset_us": off, "tied": tied and off - q[0][0] <= self.arb.tie_us})
        self.serve(False)

    def serve(self, wait=True):
        """The next claim in the queue, or back to the same cards; wait: a verdict is on the display."""
        t = self.table
        if not self.queue:
            self.claimer = 0
            self.phase = _TABLE
            self._leds()
            self.arb.reveal(self.reveal_t)  # the same cards: claims are open again
            self.armed()
        else:
            self.claimer = self.queue.pop(0)[1]
            self.tap1 = -1
            self.phase = _CLAIM
            self._leds()
            t.timer("claim", self.claim_ms)
        if wait:
            t.timer("next", _SHOW_MS)
        else:
            self.prompt()

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
            self._wrong("no free pair", False)
        elif n == 1 or not self.choose:
            self._take(0)
        else:
            self.phase = _CHOOSE
            self.table.sound("prompt")
            self.table.timer("claim", self.claim_ms)
            self.show_choice()

    choose = True  # B: every pair wins the same cards, no need to choose

    def _take(self, k):
        t = self.table
        p = self.claimer
        t.cancel("claim")
        letter = self.opt_letter(k)
        self.verdict(p, True, "pair", letter)
        self.ok[p] += 1
        t.sound("ok")
        self.won(p, k, letter)

    def _wrong(self, reason, slow):
        t = self.table
        p = self.claimer
        t.cancel("claim")
        self.verdict(p, False, reason)
        self.wrong[p] += 1
        t.sound("wrong")
        self.penalty(p, slow)
        self.serve()

    def drop_queue(self):
        if self.queue:
            ps = []
            for _o, p in self.queue:
                ps.append(p)
            self.table.log("note", {"text": "claims dropped", "players": ps})
            self.queue = []
