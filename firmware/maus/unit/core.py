# The unit's main loop and what every phase shares: inputs, outputs, timers, the Table games act through.
#
# One main loop services the buttons, timers, the RFID pad and the outputs. While a race is open it
# does nothing but service the buttons and sleep, so IRQ handlers run the moment an edge comes in.
#
# The shell is split into phases, each a module of maus.unit loaded when the unit enters it and let go
# when it leaves (with every module it loaded: a game, its texts, the log writer): menu (the idle
# menu), join (a chosen game's variant, joining), setup (the settings menu), play (a game and its end
# screen). Only one is in RAM at a time (docs/build.md). State that outlives a phase (the chosen game, the players who
# joined, menu positions) lives here. The host link while no host talks (HostWake) is here too: it is
# in RAM whenever the unit is, and a module of its own would cost its fixed part besides.
import gc
import sys

from micropython import const

from maus import loaded, moment, text, unload, unload_since
from maus.capture.irq import EV_PRESS, EV_RELEASE, EV_STUCK, EV_UNSTUCK
from maus.ticks import ticks_diff

TYPE_CHECKING = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if TYPE_CHECKING:  # maus.unit.build sets the unit's attributes
    from types import ModuleType
    from typing import Any

    from maus.capture.buttons import Gestures
    from maus.capture.irq import Capture, RaceWindow
    from maus.cards.reader import Presence
    from maus.drivers.mfrc522 import MFRC522
    from maus.games.base import Game, Player
    from maus.hw.esp32 import Hardware
    from maus.log.writer import GameLog
    from maus.piezo.cal import DigitalDetector
    from maus.piezo.detect import Detector
    from maus.settings.values import Settings
    from maus.unit.feedback import Feedback

_HEALTHY_MS = const(30000)  # running this long clears the crash counter
_RFID_POLL_MS = const(50)
_WATCH_SLICE_US = const(20000)  # armed piezo: sample this long between main-loop passes
LOOP_US = const(300)  # a main-loop pass on the ESP32 (charged as virtual time on the sim)
_GC_MS = const(500)  # collections right after an input or a timer at most this often (Unit._collect)
_GC_IDLE_MS = const(2000)  # between those, the idle loop collects once this long has passed without one
LINGER_MS = const(10000)  # a host session's requests come seconds apart at most: stay loaded that long
_IN_PER_POLL = const(160)  # as the host service: typing at the console cannot stall the loop
_DEAD_MS = const(1000)
# While the app runs it reads Ctrl-C as a byte (micropython.kbd_intr(-1), maus.unit.main): a lone one is a
# stray (one flipped bit makes "#" 0x23 a Ctrl-C 0x03); a second Ctrl-C, a CR or a Ctrl-A behind it stops
# the app. mpremote sends "\r\x03" then "\r\x01", mausbox "\r\x03\x03". A lone one is forgotten once
# the console has been quiet this long.
INTR_MS = const(500)


class Unit:
    # Set on the unit only when they change from these (a smaller attribute table: under 38 entries
    # it takes 37 slots, not 47):
    root = ""  # the flash's mount point ("" on the unit)
    loop_us = LOOP_US  # for the latency self-test (maus.checks.latency), which is below this layer
    calib = None  # (base, floor) of a calibration this session, when calib.json could not keep it
    enrolment = None  # the enrolment map (maus.cards.enrol), if the unit has one
    _stop_watch = None  # the armed piezo's stop test (watch_stop, bound once with the detector)
    _piezo_read = None  # its reading: the ADC's read_u16, or a comparator pin's value (bound with it)
    named = ()  # type: tuple  # the games whose names are interned (maus.unit.names, when first chosen)
    _ending = False  # the game said it is over (finish): its end comes when the handler returns (_switch)
    # Made by maus.unit.build (bare annotations: the compiler keeps nothing of them)
    _boot_ms: "int | None"  # ticks_ms at boot; None once the unit has run _HEALTHY_MS and cleared the crash counter
    _gc_at: int  # ticks_ms of the last idle collection
    _mark: "tuple[str, ...] | None"  # the modules loaded before the phase (maus.loaded): what stays when it goes
    _next: "tuple[str, object] | None"  # a phase switch asked for (name, arg), done when the handler returns
    capture: "Capture"
    choice: "str | None"  # the selected game's key (maus.unit.shared.GAMES)
    detector: "Detector | DigitalDetector | None"  # the piezo, while a game that needs it is on
    fb: "Feedback"
    game: "Game | None"
    gest: "Gestures"
    host: "HostWake | None"  # set by maus.unit.main
    hw: "Hardware"  # maus.hw.esp32's, or the virtual unit's (maus.sim.hw, a subclass)
    joined: "list[Player]"  # in join order
    lang: str
    log: "GameLog | None"  # while a game is on
    menu_i: int
    mode: str  # "menu", "variant", "join", "settings", "play", "end"
    n: int  # buttons
    pending_abort: bool
    phase: "ModuleType | None"  # the phase taking the input (maus.unit.menu, .join, .setup, .play)
    race: bool  # a race window is open
    reader: "MFRC522 | None"
    recovered: "list[dict[str, Any]]"  # boot recovery's reports (maus.log.repair.recover)
    rfid: "Presence | None"
    seed: int
    settings: "Settings"
    settings_i: int
    status: "dict[str, Any]"  # status.json's fields (JSON values)
    stop: bool
    timers: "dict[str, int]"  # name -> due ticks_ms
    unrecovered: "list[str]"  # logs boot recovery could not repair (names)
    variant: "str | None"
    variant_i: int
    window: "RaceWindow"

    def __init__(self, hw, root="", seed=0, recovered=None):
        # The set-up runs once: its code (maus.unit.build) is loaded for it and let go again.
        try:
            from maus.unit.build import build

            build(self, hw, root, seed, recovered)
        finally:
            unload("maus.unit.build")

    @property
    def store(self):
        """The logs on flash (maus.log.store.LogStore), made when asked for: the unit's own steps ask while
        they run unloaded, so the module goes again after them."""
        from maus.log.store import LogStore

        return LogStore(self.root)

    # --- phases -----------------------------------------------------------------------------------------
    def switch(self, name, arg=None):
        """Leave the phase for maus.unit.<name> once the running handler returns (its code is still
        on the stack until then)."""
        self._next = (name, arg)

    def _switch(self):
        if self._ending:
            self._ending = False
            self.phase.end_game(self)  # asks for the end screen (switch)
        nxt = self._next
        if nxt is None:
            return
        self._next = None
        self.phase = None
        self.game = None
        self.detector = None
        if nxt[0] == "join" and self.host is not None and self.host.svc is not None:
            self.host._mod.rest(self.host)  # a game is chosen: an idle host service goes now (maus.host.service rest)
        if self._mark is not None:
            unload_since(self._mark)
        gc.collect()  # the phase before is garbage now: its RAM is free before the next one loads
        if nxt[0] == "join" and nxt[1] not in self.named:  # a game chosen for the first time since the boot
            with moment():
                import maus.unit.names

                maus.unit.names.chosen(self, nxt[1])
        self._mark = loaded()
        self.phase = __import__("maus.unit." + nxt[0], None, None, ("enter",))
        self.phase.enter(self, nxt[1])
        self._switch()  # entering may ask for another phase (a catalog that does not fit the game)

    # --- settings ---------------------------------------------------------------------------------------
    def settings_changed(self):
        # The host changed settings: the shell follows at once; a game in progress keeps its own copy.
        self.lang = self.settings.get("lang")
        if self.mode != "play":
            with moment():
                import maus.unit.build

                maus.unit.build.apply_timing(self)

    def _setting_changed(self, key, old, new):
        if self.log is not None:
            self.log.record("settings", {"key": key, "old": old, "new": new})

    # --- the Table the games act through ---------------------------------------------------------------
    def log_record(self, rtype, fields):
        log = self.log
        if log is not None:
            log.record(rtype, fields)
            if log.degraded and not log.warned:
                with moment():
                    import maus.unit.ends

                    maus.unit.ends.degraded(self)  # said once, the game goes on

    def say(self, _key, **kw):
        table = self.game.TEXT if self.game is not None else text.TEXT
        self.fb.text(text.fmt(table, self.lang, _key, kw))

    def timer(self, name, ms):
        self.timers[name] = self.hw.ticks_ms() + ms

    def cancel(self, name):
        self.timers.pop(name, None)

    def race_open(self, reveal_t_us):
        self.race = True
        self.window.open()
        if self.rfid is not None:
            self.rfid.pause()

    def race_close(self):
        self.race = False
        self.window.close()
        if self.rfid is not None:
            self.rfid.resume()

    def detector_arm(self, armed):
        d = self.detector
        if d is None:
            return
        if armed:
            d.set_sensitivity(self.settings.get("sensitivity"))
            d.arm(self.hw.ticks_us())
        else:
            d.disarm()

    def _watch(self):
        # While armed nothing else runs: sample the piezo as fast as the loop allows, in slices so
        # button events and timers are still served.
        d = self.detector
        # (pending: an alarm raised while the host's desk sampled the piezo, maus.unit.desk Desk._sample)
        if d.pending or d.watch(self._piezo_read, self.hw.ticks_us, self._stop_watch, _WATCH_SLICE_US) == 1:  # ALARM
            self._alarm()

    def watch_stop(self):
        # the armed piezo's stop test: something for the loop to serve
        cap = self.capture
        return cap.pending or cap.busy()

    def _alarm(self):
        lvl = self.detector.take()
        if lvl is not None and self.mode == "play":
            self.game.on_alarm(lvl)

    def finish(self):
        # The game is over: its end (the phase's end_game) comes once the handler that said so has returned
        # (_switch), so the game's own end moment has left RAM before the log's end loads (a game's end is its
        # tightest moment in RAM).
        self._ending = True

    def abort(self, reason):
        with moment():
            import maus.unit.ends

            maus.unit.ends.abort(self, reason)
        self.switch("menu")
        self._switch()

    # --- shell output helpers ---------------------------------------------------------------------------
    def _say(self, _key, **kw):
        self.fb.text(text.fmt(text.TEXT, self.lang, _key, kw))

    def word(self, key):
        """A shell word (a menu item, a game's name) in the unit's language."""
        return text.fmt(text.TEXT, self.lang, key, {})

    def _event_line(self, parts):
        # Every log record also goes to the console for `mausbox monitor`, piece by piece (the log's
        # pieces, maus.log.writer.pieces: no block the size of the line); a host frame takes it whole.
        if self.host is not None and self.host.event(parts):
            return  # sent as an event frame to the monitor that asked for it
        w = sys.stdout.write
        w("EV ")
        for p in parts:
            w(p.decode())

    # --- input events ------------------------------------------------------------------------------------------
    def _cap_event(self, kind, i, t_us):
        p = i + 1
        now = self.hw.ticks_ms()
        if kind == EV_PRESS:
            d = self.detector
            if d is not None and d.armed:
                d.blank(t_us)  # the press's own thump is not an alarm
                if d.pending:
                    self._alarm()
            if self.mode == "play":
                self.game.on_press(p, t_us)
            elif self.mode == "join":
                self.phase.join_press(self, p)
            self.gest.press(i, now, t_us)
        elif kind == EV_RELEASE:
            self.gest.release(i, now, t_us)
            if self.mode == "play":
                self.game.on_release(p, t_us)
            elif self.mode == "join":
                self.cancel("young%d" % p)
        elif kind == EV_STUCK:
            self.gest.cancel(i)
            self._say("stuck", p=p)
            self.fb.sound("error")
            self.log_record("note", {"text": "stuck button", "player": p})
        elif kind == EV_UNSTUCK:
            self.log_record("note", {"text": "button released", "player": p})

    def _gesture(self, i, kind):
        p = i + 1
        if self.mode == "play":
            self.log_record("gesture", {"player": p, "kind": kind})  # replays need them (docs/replay.md)
            self.game.on_gesture(p, kind)
        elif self.phase is not None:
            self.phase.gesture(self, p, kind)
        self._switch()
        self._collect(self.hw.ticks_ms(), _GC_MS)  # a player's input handled: the moment to collect

    def _on_tap(self, ident, uid):
        if ident is not None and ident.startswith("game/"):
            from maus.unit.shared import GAMES

            key = ident[5:]  # a game card's identity is "game/" + its menu key (GAMES)
            if key not in GAMES:
                self._say("unknown_card")
                self.fb.sound("error")
            elif self.phase is not None:
                self.phase.game_card(self, key)
        elif self.mode == "play":
            self.game.on_tap(ident, uid, self.hw.ticks_us())
        elif ident is None:
            self._say("unknown_card")
            self.fb.sound("error")
        self._switch()
        self._collect(self.hw.ticks_ms(), _GC_MS)  # a player's input handled: the moment to collect

    # --- the main loop --------------------------------------------------------------------------------------------
    def step(self):
        hw = self.hw
        hw.spend(LOOP_US)
        self.capture.service()
        if self._next is not None or self._ending:
            self._switch()  # a press ended the game (its end screen: play.end_game)
        now = hw.ticks_ms()
        self.gest.poll(now)
        if self.timers:
            due = None
            for name in self.timers:  # not .items(): a view and a tuple a pass would fill the heap in a race
                t = self.timers[name]
                if ticks_diff(now, t) >= 0 and (due is None or ticks_diff(t, self.timers[due]) < 0):
                    due = name
            if due is not None:
                del self.timers[due]
                was = self.race
                if due.startswith("young"):
                    if self.mode == "join":
                        self.phase.join_young(self, int(due[5:]))
                elif self.mode == "play":
                    self.game.on_timer(due)
                elif due == "abort":
                    self.pending_abort = False
                self._switch()
                if not was:  # (not a race's decision: the others' presses come now)
                    self._collect(now, _GC_MS)  # a timer's: what it shows (a prompt, the dice) is answered later
        if self.race:
            self.window.step()  # a race window: nothing but the buttons until it closes
            return
        if self.rfid is not None:
            for ev in self.rfid.poll(now):
                uid = ev[2].lower() if ev[2] else ev[2]
                if ev[0] == "tap":
                    self._on_tap(ev[1] or None, uid)
                elif self.mode == "play" and not (ev[1] or "").startswith("game/"):
                    self.game.on_remove(ev[1], uid)
        soon = -1
        if self.host is not None:  # the host link, served outside race windows
            w = self.host.serve(now)
            if w is not None:
                soon = w
        self.fb.update(now)
        hw.wdt_feed()
        if self.detector is not None and self.detector.armed:
            self._watch()
            return
        if self._boot_ms is not None and ticks_diff(now, self._boot_ms) >= _HEALTHY_MS:
            self._boot_ms = None
            from maus.unit.shared import crash_count

            crash_count(hw, 0)
        wait = self._wait_ms(now)
        if 0 <= soon < wait:
            wait = soon  # the host link has more to do (streaming a log)
        # idle time: collect if there has been no collection for a while
        if wait > 0 and ticks_diff(now, self._gc_at) >= _GC_IDLE_MS:
            self._collect(now, _GC_IDLE_MS)
        hw.idle(wait, self.host.waker() if self.host is not None else None)

    # A collection stops the world for ~5.8 ms on the board (maus.sim.world Esp32Timing.gc_pause_us) and the buttons'
    # soft IRQs wait for its end: a press whose edge comes meanwhile gets its first edge that late. The idle loop
    # collected every 500 ms, and ~1 % of the presses outside race windows met one (issue 27: the season's capture
    # p99, 0.4-2 ms against 0.1-0.2 ms). Collecting only when the heap fills (or half of what is free has gone)
    # fragments it: what a game keeps goes high above the garbage, and a long-lived unit's host requests met no
    # room ("nomem") in the 300-game season. So the unit collects about as often, but at the moments no press is
    # timed: right after it has taken a player's input (a gesture, a card) or a timer has changed what it shows
    # (not a race's decision: the others' presses come then), at most every _GC_MS; the players have not seen
    # what it shows yet. The idle loop collects only when there has been none for _GC_IDLE_MS. Never during a race
    # (the window collected as it opened: maus.capture RaceWindow) nor while a press is being taken or may come.
    # (gc.threshold() would only add collections, at any moment.)
    def _collect(self, now, after_ms):
        """Collect now unless the last collection was under after_ms ago, a race is on, or a press is being taken (an
        edge settling, a debounce) or expected (a button down, a click that a second press would make a double)."""
        cap = self.capture
        if self.race or ticks_diff(now, self._gc_at) < after_ms or cap.pending or cap.busy() or \
                self.gest.next_due(now) >= 0:
            return
        getattr(self.hw, "collect", gc.collect)()  # (sim: timed)
        self._gc_at = now

    def _wait_ms(self, now):
        if self.capture.pending or self.capture.busy():
            return 1
        wait = _RFID_POLL_MS if self.rfid is not None else 100
        for t in self.timers.values():
            wait = min(wait, ticks_diff(t, now))
        g = self.gest.next_due(now)
        if g >= 0:
            wait = min(wait, g)
        wait = min(wait, self.fb.next_due(now))
        for i in range(self.n):
            if self.capture.is_down(i):
                wait = min(wait, 20)
        return max(wait, 0)

    def run(self, until=None):
        self.capture.start()  # announces buttons stuck at boot
        self.switch("menu")
        self._switch()
        while not self.stop:
            self.step()
            if until is not None and until():
                break


# --- the host link while no host talks --------------------------------------------------------------------
# A few hundred bytes that watch the USB console for the start of a frame ("#", docs/protocol.md) and only
# then load the host service (maus.host.service, ~18 KB with its buffers and maus.log.store). When the host has
# gone quiet for LINGER_MS (no request, no stream, no event subscription, no card lease) the service and the
# modules its import loaded are let go again, so a game or the idle menu does not carry it (docs/build.md
# section 7). The request counters outlive it. Bytes before a "#" are not a frame: the service would drop
# them too (a console echo, typing).
class HostWake:
    def __init__(self, ctx, inp=None, out=None, ready=None):
        self.ctx = ctx
        self.inp = inp if inp is not None else sys.stdin.buffer
        self.out = out
        self.poller = None  # the console's select.poll, when it is a stream (waker)
        if ready is None:
            import select

            p = select.poll()
            p.register(sys.stdin, select.POLLIN)
            self.poller = p
            ready = self._stdin_ready
        self.ready = ready
        self._one = bytearray(1)
        self.svc = None  # the HostService while a host session is on (maus.host.service.woken, .asleep)
        self._mod = None  # its module
        self._mods = ()  # the modules loading it brought in: they go with it
        self._seen = 0  # its request count at the last look
        self._quiet_from = 0
        self.dead_until = -1  # stdin at its end: looked at again once a second
        self.requests = 0  # of the services let go (HostService.requests counts on from there)
        self.bad_frames = 0
        self._intr_at = -1  # ticks_ms of a lone Ctrl-C (INTR_MS); -1: none
        self.events_until = 0  # ticks_ms until which log records go out as E frames (a monitor's lease)
        self.desk = None  # maus.unit.desk's Desk while a game is on

    def intr(self, c):
        """Each console byte the app reads: True if it was a Ctrl-C, held back as half of an interrupt; raises
        KeyboardInterrupt on the second half."""
        if self._intr_at >= 0:
            self._intr_at = -1
            if c == 3 or c == 0x0D or c == 1:
                raise KeyboardInterrupt
        if c == 3:
            self._intr_at = self.ctx.hw.ticks_ms()
            return True
        return False

    def quiet(self):
        """The console has nothing more to read now: a lone Ctrl-C that has waited INTR_MS is forgotten."""
        if self._intr_at >= 0 and ticks_diff(self.ctx.hw.ticks_ms(), self._intr_at) >= INTR_MS:
            self._intr_at = -1

    def serve(self, now=None):
        """Each main-loop pass outside races: read the console until a frame starts; while a session is on, the service serves."""
        svc = self.svc
        if self.ctx.log is not None:  # a game is on: the desk, and the service's memory is the game's
            if self.desk is None:
                self.lull()
                if self.desk is None:
                    return None
            return self.desk.serve()
        if self.desk is not None:
            self.desk = None
            unload("maus.unit.desk")
        if svc is None:
            if not self._look():
                return None
            svc = self._wake()
            if svc is None:
                return None
        w = svc.serve(now)
        t = self.ctx.hw.ticks_ms()
        if svc.requests != self._seen or svc.job is not None or svc.events_until or svc.card_until >= 0:
            self._seen = svc.requests
            self._quiet_from = t
        elif ticks_diff(t, self._quiet_from) >= LINGER_MS:
            self._mod.asleep(self)  # the host has gone quiet: the service goes
            return None
        return w

    def waker(self):
        """The console's poller while a host session is on (the service answered lately), for the loop's idle to
        end when the next request comes (hw.idle); None otherwise: the loop idles as the game needs, and a "#"
        waits for the next pass."""
        svc = self.svc
        if svc is None or svc.dead or svc.awake_until < 0 or self.ctx.log is not None:
            return None
        return svc.poller

    def event(self, parts):
        """A log record, as its pieces (maus.log.writer.pieces), for a subscribed monitor (HostService.event,
        which takes the line whole; in a game the desk's); False while no monitor is subscribed."""
        svc = self.svc
        if svc is not None:
            return svc.event(b"".join(parts))
        d = self.desk
        return d is not None and d.event(parts)

    def lull(self):
        """A game starts: the service goes now, before the game needs its memory, and the desk comes: the link
        in a game (maus.unit.desk), part of the game's memory."""
        part = None  # a request the service had begun to read: the desk reads on from it
        if self.svc is not None:
            part = self._mod.asleep(self, True)
        if self.desk is None:
            try:
                from maus.unit.desk import Desk

                self.desk = Desk(self)
            except MemoryError:  # the host's requests go unanswered this game; it asks again after it
                unload("maus.unit.desk")
        if part and self.desk is not None:
            self.desk.take(part)

    def _look(self):
        # True once a "#" came (given to the service as its first byte); everything before it is dropped.
        if self.dead_until >= 0:
            if ticks_diff(self.ctx.hw.ticks_ms(), self.dead_until) < 0:
                return False
            self.dead_until = -1
        one = self._one
        for _ in range(_IN_PER_POLL):
            if not self.ready():
                self.quiet()
                return False
            n = self.inp.readinto(one)
            if n is None:
                self.quiet()
                return False
            if not n:
                self.dead_until = (self.ctx.hw.ticks_ms() + _DEAD_MS) & 0x3FFFFFFF
                return False
            c = one[0]
            if self.intr(c):
                continue
            if c == 0x23:
                return True
        return False

    def _wake(self):
        mark = loaded()
        try:
            import maus.host.service as mod
        except MemoryError:  # no room for the service now (a fragmented heap in a game): the host asks again
            unload_since(mark)
            return None
        return mod.woken(self, mark)

    def _stdin_ready(self):
        for _ in self.poller.ipoll(0):
            return True
        return False

