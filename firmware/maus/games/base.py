# The contract between the runtime and a game's rules.
#
# A game is a pure state machine: the runtime feeds it events (cards, presses, gestures, timers,
# alarms) and the game acts only through its Table: log records, prompts, LEDs, sounds, timers and
# race windows. No pin, no clock read, no file: the same class runs on the unit, in the virtual unit
# and in tests (tests/fw/tablefake.py is a Table that records everything).
from micropython import const

TYPE_CHECKING = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if TYPE_CHECKING:
    from typing import Any  # noqa: F401 - the type comments below

# Player colours, by player id 1..6 (index 0 unused). The LEDs show them; the log records them.
_COLOURS = const(("", "red", "blue", "green", "yellow", "purple", "cyan"))


class Player:
    # A player at the table (the join phase makes them: it loads this module at the first join).
    __slots__ = ("id", "young", "colour")

    def __init__(self, pid, young=False):
        self.id = pid
        self.young = young
        self.colour = _COLOURS[pid]

    def as_log(self):
        return {"id": self.id, "colour": self.colour, "young": self.young}


class Game:
    GAME = ""  # short name used in identities and logs: "mg", "mim", "mms"
    TITLE = ""  # shown on the display
    VARIANTS = (None,)  # type: tuple  # variants the game supports; None when it has just one
    TEXT = {"en": {}, "de": {}}  # type: dict  # prompt texts by language: key -> format string with {name} fields
    table: "Table"  # the runtime's (maus.unit.play.TableView; tests/fw/tablefake.py)

    def __init__(self, table, players, settings, catalog, variant=None, seed=0):
        # table: the runtime's Table; players: list of Player (ids 1..6, in seating order);
        # settings: dict (maus.settings.values schema); catalog: parsed catalog dict of this game;
        # seed: for anything random (electronic dice), so a scenario replays byte-identically.
        self.table = table
        self.players = players
        self.settings = settings
        self.catalog = catalog
        self.variant = variant
        self.seed = seed
        self.done = False

    # --- lifecycle -------------------------------------------------------------------------------
    def summary(self):
        """When done: {"scores": {"1": pts, ...}, "winners": [ids], "breakdown": {"1": {...}}, "reason": str}."""
        raise NotImplementedError

    def status(self):
        """Lines (<= 16 chars each, up to 6) for the between-rounds status screen (a long press)."""
        return []

    def _ignored(self, _a=None, _b=None, _c=None):
        # What a game does not override: one no-op for all of them (each function costs RAM on the unit).
        # The runtime passes the arguments by position and allocates nothing to call it.
        pass

    # start(): called once after game_start has been logged; prompt for the first action.
    start = _ignored  # type: Any
    # --- events (all times are ticks_us / ms from the unit's clock; use maus.ticks for arithmetic) --
    # on_tap(ident, uid, t_us): a card arrived on the pad. ident: canonical identity string ("mg/mouse/07",
    #     "game/mim"), or None when the card could not be identified (unknown UID, garbled NDEF).
    # on_remove(ident, uid): the card left the pad.
    # on_press(player, t_us): a confirmed press, with the time of its FIRST edge (ticks_us). Delivered a few
    #     ms after the edge (settle time), possibly out of edge order between players: arbitrate by t_us,
    #     not arrival.
    # on_release(player, t_us): the button went up.
    # on_gesture(player, kind): kind "click" (single press, after the double-press window passed), "double"
    #     or "long" (held >= long_press_ms; sent while still held). Always follows the on_press of the same
    #     press.
    # on_timer(name): a timer set with table.timer(name, ms) expired.
    # on_alarm(level): the vibration detector fired while armed (Mucks Mäuschen Still).
    on_tap = on_remove = on_press = on_release = on_gesture = on_timer = on_alarm = _ignored  # type: Any


# The Table: what a game may do. The runtime implements it (maus.unit.play.TableView); tests use
# tests/fw/tablefake.py. Written out here, not as a class: the unit never needs one (docs/build.md 7).
#
#   table.now_ms(): the unit's clock, ms (ticks_ms; use maus.ticks for arithmetic).
#   table.log(rtype, fields): Append a record of type rtype with the dict fields to the game log.
#   table.say(key, **kw): Show the prompt TEXT[lang][key].format(**kw) on the display and the console.
#   table.led(player, colour, mode="on"): player 0 = all LEDs; colour a name ("red", "white", "off" ...) or
#       None = off; mode "on"|"blink".
#   table.sound(name): One of: "start", "reveal", "ok", "wrong", "cheese", "alarm", "tick", "win", "error",
#       "prompt", "join".
#   table.timer(name, ms): (Re)start the one-shot timer `name`; on_timer(name) follows after ms unless
#       cancelled.
#   table.cancel(name): Stop the timer `name` if it runs.
#   table.race_open(reveal_t_us): A race starts: the runtime goes idle (no display, no RFID polling) until
#       race_close().
#   table.race_close(): The race is decided: normal service resumes (the winner may tap cards now).
#   table.detector(armed): Arm or disarm the vibration detector (Mucks Mäuschen Still).
#   table.finish(): The game is over: once the handler that calls it has returned, the runtime logs game_end with
#                   game.summary() and shows the results.

if TYPE_CHECKING:  # the contract above for the type checker (the compiler drops the block: no class on the unit)
    from typing import Protocol

    class Table(Protocol):
        def now_ms(self) -> int: ...
        def log(self, rtype: str, fields: dict[str, Any]) -> None: ...
        def say(self, key: str, **kw: Any) -> None: ...
        def led(self, player: int, colour: str | None, mode: str = "on") -> None: ...
        def sound(self, name: str) -> None: ...
        def timer(self, name: str, ms: int) -> None: ...
        def cancel(self, name: str) -> None: ...
        def race_open(self, reveal_t_us: int) -> None: ...
        def race_close(self) -> None: ...
        def detector(self, armed: bool) -> None: ...
        def finish(self) -> None: ...
