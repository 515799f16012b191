# Mucks Mäuschen Still: the rules as a state machine (rulebook: shared/rules/mucks-maeuschen-still.txt).
#
# 16 sticks split evenly, turns in seating order from the player who starts. On their turn a player
# clicks to start the attempt (the piezo detector is armed), then presses again when the stick sits:
# it stays. A vibration alarm sends the stick back and passes the turn. A long press: no hole
# combination left (pass). A double press reports a stick that slid off the castle (out of the game).
# The castle_end-th stick in the castle ends the game (fewest sticks wins); placing one's last stick
# wins at once. Decisions where the rulebook is silent: docs/games/mms.md.
from maus import moment
from maus.games.base import Game
from maus.games.mms.castle import Catalog, load_catalog
from maus.text import Texts
from micropython import const

_WHO = const(0)  # who starts? the first click
_ROLL = const(1)  # the dice are shown; the player clicks to start the attempt
_ARMED = const(2)  # the attempt: detector armed
_PRESSED = const(3)  # the player pressed during the attempt; its gesture decides
_AFTER = const(4)  # after an alarm: double presses report sticks that slid off
_SHOW = const(5)  # a verdict on the display before the next turn
_OVER = const(6)

# The prompts: 16 characters x 6 lines, ASCII only (the OLED font has no umlauts), in
# maus/texts/mms.<lang>.json, read from flash when shown (maus.text).
TEXT = Texts("mms")


class Mms(Game):
    GAME = "mms"
    TITLE = "Mucks Maeuschen Still"
    TEXT = TEXT  # type: ignore[assignment]  # a maus.text.Texts: read from flash when asked
    report_ms = 4000  # after an alarm: time to report sticks that slid off (double presses)
    show_ms = 1500  # a verdict stays this long before the next turn

    def __init__(self, table, players, settings, catalog, variant=None, seed=0):
        Game.__init__(self, table, players, settings, catalog, variant, seed)
        given = catalog is not None
        if isinstance(catalog, dict):
            catalog = load_catalog(catalog)
        self.bad_catalog = given and not isinstance(catalog, Catalog)
        # no catalog or a bad one: the default castle and dice, made for this moment
        if isinstance(catalog, Catalog):
            self.cat = catalog
        else:
            with moment():
                import maus.games.mms.catalog

                self.cat = Catalog(*maus.games.mms.catalog.default())
        lang = settings.get("lang", "de")
        self.lang = lang if lang in TEXT else "en"
        self.electronic = settings.get("dice", "electronic") != "real"
        self.nudge_ms = settings.get("prompt_timeout_s", 60) * 1000
        n = len(players)
        self.each = self.cat.sticks // n if n else 0
        self.box = self.cat.sticks - self.each * n
        # by player id, in seating order (one loop: a comprehension is a function of its own in RAM)
        self.ids = []
        self.colour = {}
        self.sticks = {}  # in front of each player
        self.placed = {}
        self.alarms = {}
        self.passes = {}
        for pl in players:
            p = pl.id
            self.ids.append(p)
            self.colour[p] = pl.colour
            self.sticks[p] = self.each
            self.placed[p] = 0
            self.alarms[p] = 0
            self.passes[p] = 0
        self.castle = 0
        self.out = 0  # slid off: out of the game
        self.turn = 0  # index into ids
        self.phase = _WHO
        self.dice = None  # the faces shown this turn (hole indices)
        self.reason = ""
        self.winners = []
        self._rng = ((seed * 2654435761) ^ 0x6D2B79F5) & 0xFFFFFFFF or 1

    # --- helpers ---------------------------------------------------------------------------------
    @property
    def player(self):
        return self.ids[self.turn]

    def _say(self, key, **kw):
        self.table.say(key, **kw)

    def _rand(self, n):
        s = self._rng
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        self._rng = s
        return s % n

    def _nudge(self):
        self.table.timer("nudge", self.nudge_ms)

    def _arm(self, on):
        self.table.detector(on)

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self):
        if not 2 <= len(self.ids) <= 4:
            self._say("players")
            self.table.sound("error")
            self.table.log("note", {"text": "Mucks Maeuschen Still needs 2-4 players", "players": len(self.ids)})
            self._end("bad_players", [])
            return
        if self.bad_catalog:
            self.table.log("note", {"text": "invalid mms catalog: default dice"})
        self.table.log("note", {"text": "sticks", "each": self.each, "box": self.box,
                                "dice": "electronic" if self.electronic else "real"})
        for p in self.ids:
            self.table.led(p, self.colour[p], "blink")
        if self.box:
            self._say("who_box", n=self.each, box=self.box)
        else:
            self._say("who", n=self.each)
        self.table.log("prompt", {"what": "who_starts"})
        self._nudge()

    def summary(self):
        with moment():
            import maus.games.mms.end

            return maus.games.mms.end.summary(self)

    def status(self):
        with moment():
            import maus.games.mms.end

            return maus.games.mms.end.status(self, TEXT[self.lang])

    def _end(self, reason, winners):
        self.phase = _OVER
        self.reason = reason
        self.winners = winners
        for name in ("nudge", "next"):
            self.table.cancel(name)
        self._arm(False)
        self.done = True
        self.table.led(0, None)
        for p in winners:
            self.table.led(p, self.colour[p], "blink")
        if winners:
            self.table.sound("win")
        self.table.finish()

    # --- turns -----------------------------------------------------------------------------------
    def _begin_turn(self):
        p = self.player
        self.phase = _ROLL
        self.table.led(0, None)
        self.table.led(p, self.colour[p], "blink")
        self.table.sound("prompt")
        if self.electronic:
            a = self.cat.dice[0][self._rand(len(self.cat.dice[0]))]
            b = self.cat.dice[1][self._rand(len(self.cat.dice[1]))]
            self.dice = (a, b)
            self.table.log("dice", {"player": p, "faces": [self.cat.holes[a], self.cat.holes[b]]})
            names = self.cat.names[self.lang]
            self._say("roll", p=p, a=names[a], b=names[b])
        else:
            self.dice = None
            self._say("roll_real", p=p)
        self.table.log("prompt", {"what": "attempt", "player": p})
        self._nudge()

    def _next_turn(self):
        self.turn = (self.turn + 1) % len(self.ids)
        self._begin_turn()

    def _show_then_next(self):
        self.phase = _SHOW
        self.table.cancel("nudge")
        self.table.timer("next", self.show_ms)

    def _start_attempt(self):
        p = self.player
        self.phase = _ARMED
        self.table.led(p, self.colour[p])
        self._say("armed", p=p)
        self.table.log("claim", {"player": p, "what": "attempt"})
        self._arm(True)
        self._nudge()

    def _stick_stays(self):
        p = self.player
        self.sticks[p] -= 1
        self.placed[p] += 1
        self.castle += 1
        self.table.log("verdict", {"player": p, "ok": True, "reason": "placed"})
        self.table.log("score", {"player": p, "delta": -1, "why": "stick placed", "castle": self.castle})
        if self.sticks[p] == 0:
            self._say("win_last", p=p)
            self._end("last_stick", [p])
            return
        if self.castle >= self.cat.castle_end:
            # (loops, not comprehensions: each would be a function of its own in RAM for the whole game)
            least = -1
            for q in self.ids:
                if least < 0 or self.sticks[q] < least:
                    least = self.sticks[q]
            win = []
            who = []
            tag = TEXT[self.lang]["tag"]
            for q in self.ids:
                if self.sticks[q] == least:
                    win.append(q)
                    who.append(tag.format(p=q))
            self._say("win_full", castle=self.castle, who=" ".join(who), n=least)
            self._end("castle_full", win)
            return
        self.table.sound("ok")
        self._say("placed", p=p, left=self.sticks[p], castle=self.castle)
        self._show_then_next()

    def _pass(self):
        p = self.player
        self.passes[p] += 1
        self.table.log("verdict", {"player": p, "ok": False, "reason": "no_holes"})
        self._say("pass", p=p)
        self._show_then_next()

    def _slid_off(self, reporter):
        if self.castle == 0:
            self.table.sound("error")
            self._say("no_stick")
            return False
        self.castle -= 1
        self.out += 1
        self.table.log("castle", {"player": reporter, "castle": self.castle, "out": self.out, "why": "slid_off"})
        self.table.sound("wrong")
        self._say("slid", castle=self.castle, out=self.out)
        return True

    # --- events ----------------------------------------------------------------------------------
    def on_tap(self, ident, uid, t_us):
        self.table.log("tap", {"identity": ident, "uid": uid})
        if self.phase == _OVER:
            return
        self.table.sound("error")
        self._say("unknown_card" if ident is None else "no_cards")

    def on_press(self, player, t_us):
        # The attempt ends with this press (the gesture decides how): stop listening at once.
        if self.phase == _ARMED and player == self.player:
            self._arm(False)
            self.phase = _PRESSED

    def on_gesture(self, player, kind):
        ph = self.phase
        if ph == _OVER or player not in self.sticks:
            return
        if ph == _WHO:
            if kind == "click":
                self.turn = self.ids.index(player)
                self.table.log("claim", {"player": player, "what": "starts"})
                self._begin_turn()
            return
        if ph == _AFTER:
            if kind == "double":
                if self._slid_off(player):
                    self.table.timer("next", self.report_ms)
            elif kind == "click" and player == self.ids[(self.turn + 1) % len(self.ids)]:
                self.table.cancel("next")  # the next player is ready
                self._next_turn()
            return
        if player != self.player:
            if ph == _ROLL and kind == "click":
                self._say("not_turn", p=player, q=self.player)  # ignored, and said why
                self.table.timer("reshow", self.show_ms)  # then the turn's prompt again
            return
        if ph == _ROLL:
            if kind == "click":
                self._start_attempt()
            elif kind == "long":
                self._pass()
            elif kind == "double":
                # a stick slid off during this turn: it is out, the turn is over
                if self._slid_off(player):
                    self._show_then_next()
        elif ph == _PRESSED:
            if kind == "click":
                self._stick_stays()
            elif kind == "long":
                self._pass()
            elif kind == "double":
                if self._slid_off(player):
                    self._show_then_next()
                else:  # nothing to slide off: the attempt goes on
                    self.phase = _ARMED
                    self._arm(True)

    def on_alarm(self, level):
        if self.phase != _ARMED:
            return
        p = self.player
        self._arm(False)
        self.alarms[p] += 1
        self.table.log("alarm", {"player": p, "level": level})
        self.table.log("verdict", {"player": p, "ok": False, "reason": "alarm"})
        self.table.sound("alarm")
        self.table.led(0, "red", "blink")
        self._say("alarm", p=p)
        self.phase = _AFTER
        self.table.cancel("nudge")
        self.table.timer("next", self.report_ms)

    def on_timer(self, name):
        ph = self.phase
        if name == "next" and ph in (_SHOW, _AFTER):
            self._next_turn()
        elif name == "nudge" and ph in (_WHO, _ROLL, _ARMED, _PRESSED):
            what = ("who_starts", "attempt", "stick_sits", "stick_sits")[ph]
            self.table.log("timeout", {"what": what, "outcome": "reminded"})
            if ph < _ARMED:
                self.table.sound("prompt")  # never a sound near an armed castle
            self._prompt(ph)
            self._nudge()
        elif name == "reshow" and ph == _ROLL:
            self._prompt(ph)

    def _prompt(self, ph):
        if ph == _WHO:
            self._say("who_box" if self.box else "who", n=self.each, box=self.box)
        elif ph == _ROLL:
            names = self.cat.names[self.lang]
            if self.dice:
                self._say("roll", p=self.player, a=names[self.dice[0]], b=names[self.dice[1]])
            else:
                self._say("roll_real", p=self.player)
        else:
            self._say("armed", p=self.player)
