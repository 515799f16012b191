# Mausgeflippt: the rules as a state machine (rulebook: shared/rules/mausgeflippt.txt).
#
# This file: the game's state, reveals, races, cheeses, the claims' order and the round's end: what a
# game needs at any moment. The rules of a claim (items, "Mausgeflippt!" with a whole collection,
# protected mice, penalties, passing a claim on) are mausgeflippt.claims's, the end and summary
# mausgeflippt.moments's, the status screen and late ties mausgeflippt.aside's: each loaded for its moment (a
# card, a press, a timer of a claim, the end) and let go again. The table the unit can know and the cards are in mausgeflippt.cards. Decisions where the
# rulebook is silent: docs/games/mausgeflippt.md.
from maus import moment
from maus.capture.arbiter import VALID
from maus.games.base import Game
from maus.games.mausgeflippt.cards import CHEESES, CLOTHING, MICE, load, load_catalog  # noqa: F401
from maus.text import Texts
from maus.ticks import ticks_diff
from micropython import const

# The prompts: 16 characters x 6 lines, ASCII only (the OLED font has no umlauts), in
# maus/texts/mg.<lang>.json, read from flash when shown (maus.text).
TEXT = Texts("mg")

_SETUP = const(0)  # waiting for the first cheese
_REVEAL = const(1)  # waiting for a mouse on the pad
_RACE = const(2)  # a mouse is open, presses race
_CLAIM = const(3)  # a claimant plays a clothing card or double-presses (mausgeflippt.claims)
_COLLECT = const(4)  # a claimant taps every hand card, then presses
_CHEESE = const(5)  # waiting for the next cheese
_OVER = const(6)

_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt

_TYPES = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if _TYPES:
    from maus.capture.arbiter import Arbiter
    from maus.games.mausgeflippt.cards import Catalog, TableState

_KINDS = ("mouse", "clothing", "cheese")
_COUNTS = (MICE, CLOTHING, CHEESES)


class Mausgeflippt(Game):
    GAME = "mg"
    TITLE = "Mausgeflippt"
    TEXT = TEXT  # type: ignore[assignment]  # a maus.text.Texts: read from flash when asked
    # The state, made by maus.games.mausgeflippt.start (bare annotations: the compiler keeps nothing of them)
    cat: "Catalog"
    lang: str  # the prompts' language (a key of TEXT)
    claim_ms: int
    protect_ms: int
    nudge_ms: int
    arb: "Arbiter"
    colour: "list[str]"  # by player id
    s: "TableState"
    phase: int  # _SETUP .. _OVER
    reason: str  # why the game ended ("" until then)
    mouse: int  # the open mouse
    under: int  # the mouse that went under the stack last
    protected: bool
    revealer: int  # who reveals next (0: anyone)
    early_t: "list[int | None]"  # by player id: ticks_us of a press while waiting for the mouse
    queue: "list[int]"  # this reveal's claimants, in press order
    qi: int
    claimant: int
    valid: int  # valid claims this reveal
    took_cheese: int  # cheeses taken this reveal
    deciding: bool  # the race's decide timer runs
    coll: bytearray  # the collection being tapped (clothing ids)
    ncoll: int

    def __init__(self, table, players, settings, catalog, variant=None, seed=0):
        super().__init__(table, players, settings, catalog, variant, seed)
        with moment():
            import maus.games.mausgeflippt.start

            maus.games.mausgeflippt.start.setup(self, players, settings)  # a moment: the game's state is made

    def _prompt(self, repeat=False):
        # the standing prompt of this phase; nothing happens for prompt_timeout_s: said again
        ph = self.phase
        p = self.revealer
        if ph == _SETUP:
            key = "first_cheese"
        elif ph == _CHEESE:
            key = "next_cheese"
        elif ph == _REVEAL:
            key = "reveal" if p else "reveal_any"
            self.table.led(0, None)
            if p:
                self.table.led(p, self.colour[p])
        else:
            return
        if repeat:
            self.table.log("timeout", {"what": key, "outcome": "repeated"})
            self.table.sound("prompt")
        self._say(key, p=p)
        self.table.timer("prompt", self.nudge_ms)

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self):
        self._prompt()

    def summary(self):
        with moment():
            import maus.games.mausgeflippt.moments

            return maus.games.mausgeflippt.moments.summary(self.s, self.reason)

    def status(self):
        with moment():
            import maus.games.mausgeflippt.aside

            return maus.games.mausgeflippt.aside.status(self.s, TEXT[self.lang])

    def _finish(self, reason):
        with moment():
            import maus.games.mausgeflippt.moments

            maus.games.mausgeflippt.moments.finish(self, reason)  # a moment: the game ends

    # --- events ----------------------------------------------------------------------------------
    def on_tap(self, ident, uid, t_us):
        self.table.log("tap", {"identity": ident, "uid": _hex(uid)})
        ph = self.phase
        if ph == _OVER or ph == _RACE:
            return  # the pad is not polled in a race: a stray read is only logged
        kind, n = _parse(ident)
        if kind < 0:
            if ident != "game/mausgeflippt":  # our own game card on the pad again: harmless
                self._bad("wrong_game" if kind == -1 else "unknown_card")
        elif ph == _SETUP or ph == _CHEESE:
            if kind == 2:
                self._show_cheese(n)
            else:
                self._bad("want_cheese")
        elif ph == _REVEAL:
            if kind == 0:
                self._reveal(n, ident, t_us)
            else:
                self._bad("want_mouse")
        elif kind != 1:
            self._bad("want_clothing")
        elif self.s.penalty[n]:
            self._bad("penalty_card")
        elif ph == _CLAIM:
            with moment():
                import maus.games.mausgeflippt.claims

                maus.games.mausgeflippt.claims.item(self, n)  # a moment: an item played is judged
        else:
            with moment():
                import maus.games.mausgeflippt.collection

                maus.games.mausgeflippt.collection.card(self, n)  # one card of "Mausgeflippt!"

    def on_press(self, player, t_us):
        if player not in self.s.ids:
            return
        ph = self.phase
        if ph == _RACE or ph == _CLAIM or ph == _COLLECT:
            # every press of the reveal is logged with its offset: valid, locked out, or late (after
            # the decision: it counts for the claim passing on, decision 3, and for reaction times)
            arb = self.arb
            kind = arb.press(player, t_us)
            self.table.log("press", arb.fields(player, kind, ticks_diff(t_us, arb.reveal_t)))
            if ph == _RACE and kind == VALID and not self.deciding:
                self.deciding = True
                self.table.cancel("unclaimed")
                self.table.timer("decide", arb.decide_ms())
            elif ph != _RACE and kind == VALID:
                with moment():
                    import maus.games.mausgeflippt.aside

                    maus.games.mausgeflippt.aside.late_tie(self, player)  # a moment: a long-bouncing contact
            elif ph == _COLLECT and player == self.claimant:
                with moment():
                    import maus.games.mausgeflippt.collection

                    maus.games.mausgeflippt.collection.end(self, False)  # a moment: the collection is judged
        elif ph == _REVEAL:
            self.early_t[player] = t_us  # a false start, unless it becomes a long press
            # said now (no race is open yet), not logged: no flash write just before a reveal; the press is
            # logged as a false start at the reveal
            self.table.say("false_start", p=player)

    def on_gesture(self, player, kind):
        if player not in self.s.ids:
            return
        ph = self.phase
        if kind == "long" and (ph == _REVEAL or ph == _CHEESE or ph == _SETUP):
            self.early_t[player] = None  # a status request, not a false start
            self._say("status", text="\n".join(self.status()))
        elif kind == "double" and ph == _CLAIM and player == self.claimant:
            with moment():
                import maus.games.mausgeflippt.collection

                maus.games.mausgeflippt.collection.call(self)  # a moment: "Mausgeflippt!"

    def on_timer(self, name):
        ph = self.phase
        if name == "show":
            self._prompt()
        elif name == "prompt":
            self._prompt(True)
        elif name == "decide" and ph == _RACE:
            self._decide()
        elif name == "unclaimed" and ph == _RACE:
            self.arb.decide()
            self.table.race_close()
            self.table.log("timeout", {"what": "unclaimed", "outcome": "under_stack", "protected": self.protected})
            self._say("unclaimed")
            self._round_end()
        elif name == "claim" and ph == _COLLECT and self.ncoll:
            with moment():
                import maus.games.mausgeflippt.collection

                maus.games.mausgeflippt.collection.end(self, True)  # a moment: judged as it stands
        elif name == "claim" and (ph == _COLLECT or ph == _CLAIM):
            with moment():
                import maus.games.mausgeflippt.claims

                maus.games.mausgeflippt.claims.no_claim(self)  # a moment: the window ran out with nothing played

    # --- output ----------------------------------------------------------------------------------
    def _say(self, key, **kw):
        self.table.say(key, **kw)
        self.table.log("prompt", {"what": key})

    def _bad(self, key, **kw):
        self.table.sound("error")
        self._say(key, **kw)

    # --- cheeses and reveals ---------------------------------------------------------------------
    def _show_cheese(self, n):
        if self.s.cheese_used[n]:
            self._bad("cheese_used")
            return
        self.s.show_cheese(n)
        self.table.log("note", {"text": "open cheese", "cheese": n,
                                "kind": self.cat.cheese_name(self.cat.cheese_cards[n - 1])})
        self.table.sound("ok")
        self.phase = _REVEAL
        self._prompt()

    def _reveal(self, m, ident, t_us):
        s = self.s
        if s.caught[m]:
            self._bad("caught_before", m=m)
            return
        if m == self.under and s.mice_left > 1:
            self._bad("under_stack")
            return
        self.mouse = m
        # never shown before the race: spotting it is the game
        self.protected = self.cat.mouse_cheese[m - 1] == self.cat.cheese_cards[s.open_cheese - 1]
        self.table.cancel("prompt")
        self.table.led(0, None)
        for p in s.ids:
            if self.early_t[p] is not None:
                self.arb.early(p)  # pressed before the mouse was out
        self.arb.reveal(t_us)
        self.table.log("reveal", {"card": ident, "by": self.revealer})
        for p in s.ids:
            t = self.early_t[p]
            if t is not None:
                off = ticks_diff(t, t_us)
                self.table.log("press", {"player": p, "offset_us": off if off < 0 else -1, "false_start": True})
                self.early_t[p] = None
        self.queue = []
        self.qi = 0
        self.valid = 0
        self.took_cheese = 0
        self.deciding = False
        self.phase = _RACE
        self.table.race_open(t_us)
        self.table.timer("unclaimed", self.protect_ms)

    def _decide(self):
        won = self.arb.decide()
        self.table.race_close()
        q = self.queue = []
        for p, _off in won:  # (a loop: a comprehension would be a function of its own in RAM)
            q.append(p)
        for p, off in won:
            self.table.log("claim", {"player": p, "offset_us": off, "tied": len(won) > 1})
        self._next_claim()

    # --- claims, in press order (each one's rules: mausgeflippt.claims) --------------------------
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

    # --- what a verdict does (both kinds of claim: mausgeflippt.claims, mausgeflippt.collection) --
    def _verdict(self, p, ok, reason):
        self.table.log("verdict", {"player": p, "ok": ok, "reason": reason})

    def _worn(self, c):
        return self.cat.worn(self.mouse, self.cat.clothing[c - 1])  # item AND colour

    def _score(self, p, delta, why):
        self.table.log("score", {"player": p, "delta": delta, "why": why})

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

    # --- end of a reveal -------------------------------------------------------------------------
    def _round_end(self):
        s = self.s
        self.table.cancel("claim")
        self.arb.close()
        if self.queue:
            self.revealer = self.queue[0]  # the first to claim reveals next
        if self.valid == 0:
            self.under = self.mouse
        if s.mice_left == 0:
            self._finish("last_mouse")
            return
        if self.took_cheese:
            s.open_cheese = 0
            if s.cheese_stack == 0:
                self._finish("last_cheese")
                return
            self.phase = _CHEESE
        else:
            self.phase = _REVEAL
        self.table.timer("show", _SHOW_MS)


def _parse(ident):
    # "mg/clothing/07" -> (kind index, id); (-1, 0) another game's card; (-2, 0) unknown
    if not isinstance(ident, str):
        return -2, 0
    parts = ident.split("/")
    if len(parts) < 2:
        return -2, 0
    if len(parts) != 3 or parts[0] != "mg":
        return -1, 0
    try:
        k = _KINDS.index(parts[1])
        n = int(parts[2])
    except ValueError:
        return -2, 0
    if not 1 <= n <= _COUNTS[k]:
        return -2, 0
    return k, n


def _hex(uid):
    # the tag UID for the log: lowercase hex
    if uid is None:
        return ""
    if isinstance(uid, (bytes, bytearray)):
        return uid.hex()
    return str(uid).lower()
