# Mausgeflippt: the rules as a state machine (rulebook: shared/rules/mausgeflippt.txt).
#
# The unit sees only what is tapped on the pad and the buttons. It knows the open mouse and cheese,
# the mice and cheeses left, every caught mouse, every penalty card and whose it is; it never sees a
# hand. Decisions where the rulebook is silent: docs/games/mausgeflippt.md.
from micropython import const

from maus.arbiter import FALSE_START, VALID, Arbiter
from maus.game import Game
from maus.games.mausgeflippt_catalog import CHEESES, CLOTHING, MICE, load
from maus.ticks import ticks_diff

# Phases
_SETUP = const(0)  # waiting for the first cheese
_REVEAL = const(1)  # waiting for a mouse on the pad
_RACE = const(2)  # a mouse is open, presses race
_CLAIM = const(3)  # a claimant plays a clothing card or double-presses
_COLLECT = const(4)  # a claimant taps every hand card, then presses
_CHEESE = const(5)  # waiting for the next cheese
_OVER = const(6)

_HAND = const(7)
_YOUNG_HAND = const(4)
_MAX_DOWN = const(3)  # face-down penalties that block "Mausgeflippt!"
_SHOW_MS = const(1500)  # a verdict stays on the display this long before the next prompt
_P = const(7)  # per-player arrays are indexed by player id 1..6

_KINDS = ("mouse", "clothing", "cheese")
_COUNTS = (MICE, CLOTHING, CHEESES)


class Mausgeflippt(Game):
    GAME = "mg"
    TITLE = "Mausgeflippt"
    TEXT = {
        "en": {
            "first_cheese": "Show the first\ncheese",
            "next_cheese": "Show the next\ncheese",
            "reveal_any": "Reveal a mouse",
            "reveal": "P{p}: reveal\na mouse",
            "claim": "P{p}: play a card\nor double-press",
            "collect": "P{p}: tap all\n{n} cards, then\npress",
            "blocked": "P{p}: 3 face-down\nno Mausgeflippt!\nPlay a card",
            "caught": "P{p} caught it!\n+1 = {pts} points",
            "stack_mouse": "P{p} caught it!\nTake a mouse\nfrom the stack\n+1 = {pts} points",
            "no_mouse": "P{p} right, but\nno mouse left",
            "wrong_item": "P{p}: not worn!\nPenalty -1\n= {pts} points",
            "wrong_coll": "P{p}: {n} match!\n1 face down\nPenalty -{n}\n= {pts} points",
            "cheese": "P{p}: protected!\nTake the cheese\n-2{more}\n= {pts} points",
            "cheese_more": ", cards -{n}",
            "discard": "\nDiscard the card",
            "too_slow": "P{p}: too slow",
            "unclaimed": "Nobody caught it\nMouse goes under\nthe stack",
            "unknown_card": "Unknown card",
            "wrong_game": "Not a Mausge-\nflippt card",
            "want_cheese": "Show a cheese\ncard",
            "want_mouse": "Reveal a mouse\nfirst",
            "want_clothing": "Tap a clothing\ncard",
            "caught_before": "Mouse {m} is\nalready caught",
            "under_stack": "That mouse is\nunder the stack",
            "cheese_used": "That cheese is\nused up",
            "penalty_card": "That card is a\npenalty card",
            "too_many": "A hand has only\n{n} cards",
            "no_cards": "Tap your cards\nfirst",
            "status": "{text}",
            "st_head": "Mice {m} Cheese {c}",
            "st_player": "P{p} {pts}pt down{d}",
            "st_pair": "{p}:{pts}d{d}",
            "end_mouse": "Last mouse!\nGame over",
            "end_cheese": "Last cheese!\nGame over",
        },
        "de": {
            "first_cheese": "Ersten Kaese\nzeigen",
            "next_cheese": "Naechsten Kaese\nzeigen",
            "reveal_any": "Maus aufdecken",
            "reveal": "S{p}: Maus\naufdecken",
            "claim": "S{p}: Karte legen\noder 2x druecken",
            "collect": "S{p}: alle {n}\nKarten legen,\ndann druecken",
            "blocked": "S{p}: 3 verdeckt\nkein Mausge-\nflippt! Karte!",
            "caught": "S{p} faengt sie!\n+1 = {pts} Punkte",
            "stack_mouse": "S{p} faengt!\nMaus vom Stapel\nnehmen\n+1 = {pts} Punkte",
            "no_mouse": "S{p} richtig,\nkeine Maus mehr",
            "wrong_item": "S{p}: traegt sie\nnicht! -1\n= {pts} Punkte",
            "wrong_coll": "S{p}: {n} passt!\n1 verdeckt\nMinus {n}\n= {pts} Punkte",
            "cheese": "S{p}: geschuetzt\nKaese nehmen -2{more}\n= {pts} Punkte",
            "cheese_more": "\nKarten -{n}",
            "discard": "\nKarte ablegen",
            "too_slow": "S{p}: zu langsam",
            "unclaimed": "Keiner faengt\nMaus unter den\nStapel",
            "unknown_card": "Karte unbekannt",
            "wrong_game": "Keine Mausge-\nflippt-Karte",
            "want_cheese": "Eine Kaesekarte\nzeigen",
            "want_mouse": "Erst eine Maus\naufdecken",
            "want_clothing": "Eine Kleider-\nkarte legen",
            "caught_before": "Maus {m} ist\nschon gefangen",
            "under_stack": "Die Maus liegt\nunter dem Stapel",
            "cheese_used": "Der Kaese ist\nschon weg",
            "penalty_card": "Das ist eine\nStrafkarte",
            "too_many": "Eine Hand hat\nnur {n} Karten",
            "no_cards": "Erst die Karten\nlegen",
            "status": "{text}",
            "st_head": "Maeuse {m} Kaese{c}",
            "st_player": "S{p} {pts}P verd.{d}",
            "st_pair": "{p}:{pts}v{d}",
            "end_mouse": "Letzte Maus!\nSpielende",
            "end_cheese": "Letzter Kaese!\nSpielende",
        },
    }

    def __init__(self, table, players, settings, catalog, variant=None, seed=0):
        super().__init__(table, players, settings, catalog, variant, seed)
        self.cat = load(catalog)  # ValueError naming the problem for a bad catalog
        g = settings.get
        self.lang = g("lang", "en") if g("lang", "en") in self.TEXT else "en"
        self.claim_ms = g("claim_window_ms", 5000)
        self.protect_ms = g("protection_timeout_ms", 3000)
        self.nudge_ms = g("hint_after_s", 20) * 1000
        self.arb = Arbiter(g("tie_window_us", 2000), g("lockout", True))
        self.joined = [False] * _P
        self.young = [False] * _P
        for p in players:
            self.joined[p.id] = True
            self.young[p.id] = p.young
        # the table as the unit knows it
        self.mice = [0] * _P  # caught mice per player
        self.up = [0] * _P  # face-up clothing penalties
        self.down = [0] * _P  # face-down clothing penalties
        self.cheeses = [0] * _P  # cheeses taken
        self.caught = bytearray(MICE + 1)  # by mouse id: 1 = caught (open mice only; stack mice are anonymous)
        self.mice_left = MICE  # in the stack, open mouse included
        self.penalty = bytearray(CLOTHING + 1)  # by clothing id: owner of that penalty card, 0 = none
        self.cheese_used = bytearray(CHEESES + 1)  # by cheese id: 1 = shown or taken
        self.cheese_stack = CHEESES  # face down
        self.open_cheese = 0
        self.mouse = 0  # the open mouse
        self.under = 0  # the mouse that went under the stack last
        self.protected = False
        self.revealer = 0
        self.phase = _SETUP
        self.reason = ""
        # one reveal
        self.early_t = [None] * _P  # press time of a press while waiting for a reveal
        self.queue = []  # claimants in press order
        self.qi = 0
        self.claimant = 0
        self.valid = 0  # valid claims this reveal
        self.took_cheese = 0  # cheeses taken this reveal
        self._deciding = False  # the decide timer runs
        self.coll = bytearray(_HAND)  # the collection being tapped (clothing ids)
        self.ncoll = 0

    # --- helpers ---------------------------------------------------------------------------------
    def _say(self, key, **kw):
        self.table.say(key, **kw)
        self.table.log("prompt", {"key": key})

    def _bad(self, key, **kw):
        self.table.sound("error")
        self._say(key, **kw)

    def score(self, p):
        return self.mice[p] - self.up[p] - self.down[p] - 2 * self.cheeses[p]

    def penalty_points(self, p):
        return self.up[p] + self.down[p] + 2 * self.cheeses[p]

    def _points(self, p, delta, why):
        self.table.log("score", {"player": p, "delta": delta, "why": why})

    def _verdict(self, p, ok, reason):
        self.table.log("verdict", {"player": p, "ok": ok, "reason": reason})

    def _hand(self, p):
        return _YOUNG_HAND if self.young[p] else _HAND

    def _parse(self, ident):
        # "mg/clothing/07" -> (kind index, id), (-1, 0) for another game, (-2, 0) unknown
        parts = ident.split("/")
        if len(parts) != 3 or parts[0] != "mg":
            return (-1, 0) if len(parts) >= 2 else (-2, 0)
        try:
            k = _KINDS.index(parts[1])
            n = int(parts[2])
        except ValueError:
            return -2, 0
        if not 1 <= n <= _COUNTS[k]:
            return -2, 0
        return k, n

    def _prompt(self):
        # the standing prompt of the current phase, repeated after hint_after_s
        ph = self.phase
        if ph == _SETUP:
            self._say("first_cheese")
        elif ph == _CHEESE:
            self._say("next_cheese")
        elif ph == _REVEAL:
            self.table.led(0, None)
            if self.revealer:
                self.table.led(self.revealer, self.players_colour(self.revealer))
                self._say("reveal", p=self.revealer)
            else:
                self._say("reveal_any")
        else:
            return
        self.table.timer("prompt", self.nudge_ms)

    def players_colour(self, p):
        for pl in self.players:
            if pl.id == p:
                return pl.colour
        return "white"

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self):
        self.table.sound("start")
        self._prompt()

    def summary(self):
        scores = {}
        breakdown = {}
        best = None
        for pl in self.players:
            p = pl.id
            s = self.score(p)
            scores[str(p)] = s
            breakdown[str(p)] = {"mice": self.mice[p], "clothing_up": self.up[p], "clothing_down": self.down[p],
                                 "cheeses": self.cheeses[p], "penalty_points": self.penalty_points(p),
                                 "young": self.young[p]}
            key = (s, -self.penalty_points(p))
            if best is None or key > best:
                best = key
        winners = [pl.id for pl in self.players if (self.score(pl.id), -self.penalty_points(pl.id)) == best]
        return {"scores": scores, "winners": winners, "breakdown": breakdown, "reason": self.reason}

    def status(self):
        t = self.TEXT[self.lang]
        lines = [t["st_head"].format(m=self.mice_left, c=self.cheese_stack + (1 if self.open_cheese else 0))]
        ids = [pl.id for pl in self.players]
        if len(ids) <= 5:
            for p in ids:
                lines.append(t["st_player"].format(p=p, pts=self.score(p), d=self.down[p]))
        else:
            for i in range(0, len(ids), 2):
                lines.append(" ".join(t["st_pair"].format(p=p, pts=self.score(p), d=self.down[p])
                                      for p in ids[i:i + 2]))
        return lines

    def _finish(self, reason):
        self.phase = _OVER
        self.reason = reason
        for name in ("prompt", "claim", "decide", "unclaimed"):
            self.table.cancel(name)
        self.table.race_close()
        self.done = True
        self._say("end_mouse" if reason == "last_mouse" else "end_cheese")
        self.table.sound("win")
        self.table.led(0, None)
        for p in self.summary()["winners"]:
            self.table.led(p, self.players_colour(p), "blink")
        self.table.finish()

    # --- events ----------------------------------------------------------------------------------
    def on_tap(self, ident, uid, t_us):
        self.table.log("tap", {"identity": ident, "uid": uid})
        if self.phase == _OVER:
            return
        if ident is None:
            self._bad("unknown_card")
            return
        kind, n = self._parse(ident)
        if kind < 0:
            if ident != "game/mausgeflippt":  # our own game card back on the pad: harmless
                self._bad("wrong_game" if kind == -1 else "unknown_card")
            return
        ph = self.phase
        if ph == _SETUP or ph == _CHEESE:
            if kind == 2:
                self._show_cheese(n)
            else:
                self._bad("want_cheese")
        elif ph == _REVEAL:
            if kind == 0:
                self._reveal(n, ident, t_us)
            else:
                self._bad("want_mouse")
        elif ph == _CLAIM or ph == _COLLECT:
            if kind == 1:
                self._clothing(n)
            else:
                self._bad("want_clothing")
        # _RACE: the pad is not polled during a race; a stray tap is logged and ignored

    def on_press(self, player, t_us):
        if not 1 <= player < _P or not self.joined[player]:
            return
        ph = self.phase
        if ph == _RACE:
            kind = self.arb.press(player, t_us)
            self.table.log("press", {"player": player, "offset_us": ticks_diff(t_us, self.arb.reveal_t),
                                     "false_start": kind == FALSE_START})
            if kind == VALID and not self._deciding:
                self._deciding = True
                self.table.cancel("unclaimed")
                self.table.timer("decide", self.arb.decide_ms())
        elif ph == _REVEAL:
            # a press before the mouse is out: a false start unless it turns into a long press (status)
            self.early_t[player] = t_us
        elif ph == _COLLECT and player == self.claimant:
            self._end_collection(False)

    def on_gesture(self, player, kind):
        if not 1 <= player < _P or not self.joined[player]:
            return
        if kind == "long":
            if self.phase == _REVEAL or self.phase == _CHEESE or self.phase == _SETUP:
                self.early_t[player] = None  # it was a status request, not a false start
                self._say("status", text="\n".join(self.status()))
        elif kind == "double" and self.phase == _CLAIM and player == self.claimant:
            self._call()

    def on_timer(self, name):
        if name == "prompt":
            if self.phase != _OVER:
                self._prompt()
        elif name == "decide" and self.phase == _RACE:
            self._decide()
        elif name == "unclaimed" and self.phase == _RACE:
            self._unclaimed()
        elif name == "claim" and (self.phase == _CLAIM or self.phase == _COLLECT):
            self._claim_timeout()

    # --- setup and cheeses -----------------------------------------------------------------------
    def _show_cheese(self, n):
        if self.cheese_used[n]:
            self._bad("cheese_used")
            return
        self.cheese_used[n] = 1
        self.cheese_stack -= 1
        self.open_cheese = n
        self.table.log("note", {"text": "open cheese", "cheese": n,
                                "type": self.cat.cheese_types[self.cat.cheese_cards[n - 1]]})
        self.table.sound("ok")
        self.phase = _REVEAL
        self._prompt()

    # --- the reveal and the race -----------------------------------------------------------------
    def _reveal(self, m, ident, t_us):
        if self.caught[m]:
            self._bad("caught_before", m=m)
            return
        if m == self.under and self.mice_left > 1:
            self._bad("under_stack")
            return
        self.mouse = m
        self.protected = self.cat.mouse_cheese[m - 1] == self.cat.cheese_cards[self.open_cheese - 1]
        self.table.cancel("prompt")
        self.table.led(0, None)
        for p in range(1, _P):
            if self.early_t[p] is not None:
                self.arb.early(p)  # released or still held: pressed before the mouse was out
        self.arb.reveal(t_us)
        self.table.log("reveal", {"card": ident, "by": self.revealer})
        for p in range(1, _P):
            t = self.early_t[p]
            if t is not None:
                off = ticks_diff(t, t_us)
                self.table.log("press", {"player": p, "offset_us": off if off < 0 else -1, "false_start": True})
                self.early_t[p] = None
        self.queue = []
        self.qi = 0
        self.valid = 0
        self.took_cheese = 0
        self._deciding = False
        self.phase = _RACE
        self.table.race_open(t_us)
        self.table.timer("unclaimed", self.protect_ms)

    def _decide(self):
        won = self.arb.decide()
        self.table.race_close()
        self.queue = [p for p, off in won]
        tied = len(won) > 1
        for p, off in won:
            self.table.log("claim", {"player": p, "offset_us": off, "tied": tied})
        self._next_claim()

    def _unclaimed(self):
        self.arb.decide()
        self.table.race_close()
        self.table.log("timeout", {"timer": "unclaimed", "outcome": "under_stack", "protected": self.protected})
        self._say("unclaimed")
        self._round_end()

    # --- claims ----------------------------------------------------------------------------------
    def _next_claim(self):
        if self.qi >= len(self.queue):
            self._round_end()
            return
        p = self.queue[self.qi]
        self.qi += 1
        self.claimant = p
        self.phase = _CLAIM
        self.table.led(p, self.players_colour(p), "blink")
        self.table.sound("prompt")
        self._say("claim", p=p)
        self.table.timer("claim", self.claim_ms)

    def _call(self):
        p = self.claimant
        if self.down[p] >= _MAX_DOWN:
            self.table.log("verdict", {"player": p, "ok": False, "reason": "blocked_3_face_down"})
            self._bad("blocked", p=p)
            return  # the claim window keeps running for a clothing card
        self.phase = _COLLECT
        self.ncoll = 0
        self.table.log("claim", {"player": p, "call": "mausgeflippt"})
        self._say("collect", p=p, n=self._hand(p))
        self.table.timer("claim", self.claim_ms)

    def _clothing(self, c):
        if self.penalty[c]:
            self._bad("penalty_card")
            return
        if self.phase == _CLAIM:
            self.table.cancel("claim")
            self._judge_item(c)
            self._next_claim()
            return
        for i in range(self.ncoll):
            if self.coll[i] == c:
                return  # read again: already counted
        if self.ncoll >= self._hand(self.claimant):
            self._bad("too_many", n=self._hand(self.claimant))
            return
        self.coll[self.ncoll] = c
        self.ncoll += 1
        self.table.sound("tick")
        self.table.timer("claim", self.claim_ms)  # each card gives the next one a fresh window

    def _end_collection(self, timed_out):
        if self.ncoll == 0:
            if not timed_out:
                self._bad("no_cards")
                return
            self._claim_timeout_nothing()
            return
        self.table.cancel("claim")
        if timed_out:
            self.table.log("timeout", {"timer": "claim", "player": self.claimant, "outcome": "collection_judged"})
        self._judge_collection()
        self._next_claim()

    def _claim_timeout(self):
        if self.phase == _COLLECT:
            self._end_collection(True)
        else:
            self._claim_timeout_nothing()

    def _claim_timeout_nothing(self):
        p = self.claimant
        self.table.log("timeout", {"timer": "claim", "player": p,
                                   "outcome": "cheese" if self.protected else "no_claim"})
        if self.protected:
            self._verdict(p, False, "protected")
            self._take_cheese(p, 0, False)
        else:
            self._verdict(p, False, "timeout")
            self.table.led(p, None)
            self._say("too_slow", p=p)
        self._next_claim()

    def _judge_item(self, c):
        p = self.claimant
        code = self.cat.clothing[c - 1]
        worn = self.cat.worn(self.mouse, code)
        if self.protected:
            self._verdict(p, False, "protected_item_worn" if worn else "protected_item_not_worn")
            if not worn:
                self._penalise(p, c, False)
            self._take_cheese(p, 0 if worn else 1, worn)
        elif worn:
            self._verdict(p, True, "item_worn")
            self._catch(p)
        else:
            self._verdict(p, False, "item_not_worn")
            self._penalise(p, c, False)
            self.table.sound("wrong")
            self.table.led(p, "red")
            self._say("wrong_item", p=p, pts=self.score(p))

    def _judge_collection(self):
        p = self.claimant
        n = 0
        for i in range(self.ncoll):
            c = self.coll[i]
            if self.cat.worn(self.mouse, self.cat.clothing[c - 1]):
                self._penalise(p, c, n == 0)  # the first matching card lies face down
                n += 1
        if self.protected:
            self._verdict(p, False, "protected_collection")
            self._take_cheese(p, n, False)
        elif n == 0:
            self._verdict(p, True, "collection_clean")
            self._catch(p)
        else:
            self._verdict(p, False, "collection_matches")
            self.table.sound("wrong")
            self.table.led(p, "red")
            self._say("wrong_coll", p=p, n=n, pts=self.score(p))

    def _penalise(self, p, c, face_down):
        self.penalty[c] = p
        if face_down:
            self.down[p] += 1
        else:
            self.up[p] += 1
        self._points(p, -1, "clothing_down" if face_down else "clothing_up")

    def _catch(self, p):
        # the first valid claim catches the open mouse, later (tied) ones a mouse from the stack
        self.valid += 1
        self.table.sound("ok")
        self.table.led(p, "green")
        if self.valid == 1:
            self.caught[self.mouse] = 1
        elif self.mice_left == 0:
            self._say("no_mouse", p=p)
            return
        self.mice_left -= 1
        self.mice[p] += 1
        self._points(p, 1, "mouse")
        self._say("caught" if self.valid == 1 else "stack_mouse", p=p, pts=self.score(p))

    def _take_cheese(self, p, cards, discard):
        # the first cheese taken is the open one, later (tied) ones come from the stack
        self.table.sound("cheese")
        self.table.led(p, "yellow", "blink")
        if self.took_cheese:
            if self.cheese_stack == 0:
                return
            self.cheese_stack -= 1
        self.took_cheese += 1
        self.cheeses[p] += 1
        self._points(p, -2, "cheese")
        t = self.TEXT[self.lang]
        more = t["cheese_more"].format(n=cards) if cards else ""
        if discard:
            more += t["discard"]
        self._say("cheese", p=p, more=more, pts=self.score(p))

    # --- end of a reveal -------------------------------------------------------------------------
    def _round_end(self):
        self.table.cancel("claim")
        self.arb.close()
        if self.queue:
            self.revealer = self.queue[0]  # the first to claim reveals next
        if self.valid == 0:
            self.under = self.mouse
            if self.queue:
                self.table.log("note", {"text": "mouse under the stack", "mouse": self.mouse})
        if self.mice_left == 0:
            self._finish("last_mouse")
            return
        if self.took_cheese:
            self.open_cheese = 0
            if self.cheese_stack == 0:
                self._finish("last_cheese")
                return
            self.phase = _CHEESE
        else:
            self.phase = _REVEAL
        self.table.timer("prompt", _SHOW_MS)
