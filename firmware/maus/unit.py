# The unit: boot self-test, game selection, joining, running a game, the end screen, safe mode.
#
# One main loop services the buttons, timers, the RFID pad and the outputs. While a race is open it
# does nothing but service the buttons and sleep, so IRQ handlers run the moment an edge comes in.
import gc
import json
import sys

import maus
from maus import capture as cap_mod
from maus import gamelog, text
from maus.buttons import Gestures
from maus.capture import Capture
from maus.feedback import Feedback
from maus.game import Player
from maus.logstore import LogStore, write_atomic
from maus.settings import Settings
from maus.ticks import ticks_diff

# menu key -> (identity of the game card, module, players lo, hi, variants, young players allowed)
GAMES = {
    "mausgeflippt": ("game/mausgeflippt", "maus.games.mausgeflippt", 2, 6, (None,), True),
    "mim": ("game/mim", "maus.games.mim", 2, 5, ("A", "B", "C"), False),
    "mms": ("game/mms", "maus.games.mms", 2, 4, (None,), False),
}
MENU = ("mausgeflippt", "mim", "mms", "settings", "calibrate", "latency")
SETTINGS_MENU = ("lang", "volume", "tie_window_us", "lockout", "sensitivity", "claim_window_ms", "hints")
SETTING_STEPS = {"volume": 1, "tie_window_us": 1000, "sensitivity": 1, "claim_window_ms": 1000}

CRASH_LIMIT = 3
HEALTHY_MS = 30000  # running this long clears the crash counter
WDT_MS = 8000
RFID_POLL_MS = 50
WATCH_SLICE_US = 20000  # armed piezo: sample this long between main-loop passes
CALIB_FILE = "calib.json"
LOOP_US = 300  # a main-loop pass on the ESP32 (charged as virtual time on the sim)


def _find_game_class(mod):
    from maus.game import Game

    for name in dir(mod):
        obj = getattr(mod, name)
        if isinstance(obj, type) and obj is not Game and issubclass(obj, Game) and obj.GAME:
            return obj
    raise ImportError("no Game class in " + mod.__name__)


def load_game(key):
    modname = GAMES[key][1]
    mod = __import__(modname, None, None, ("x",))
    return mod, _find_game_class(mod)


def load_catalog(mod, short):
    """The game's catalog from maus/catalogs/<short>.json, compacted by the game module if it can."""
    here = __file__.rsplit("/", 1)[0] if "/" in __file__ else "maus"
    path = "%s/catalogs/%s.json" % (here, short)
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    loader = getattr(mod, "load_catalog", None)
    return loader(data) if loader else data


class Unit:
    def __init__(self, hw, root="", seed=0):
        self.hw = hw
        self.seed = seed
        self.settings = Settings(root, on_change=self._setting_changed)
        self.lang = self.settings.get("lang")
        self.store = LogStore(root)
        self.recovered = gamelog.recover(self.store)
        self.fb = Feedback(hw, self.settings)
        self.fb.console = self._console_say
        n = len(hw.buttons)
        self.n = n
        self.capture = Capture(hw.buttons, hw.ticks_us, hw.levels, emit=self._cap_event)
        self.poll_capture = hw.board.get("capture") == "poll"
        self.gest = Gestures(n, self._gesture)
        self._apply_timing()
        self.timers = {}
        self.race = False
        self.game = None
        self.log = None
        self.mode = "menu"
        self.menu_i = 0
        self.variant_i = 0
        self.choice = None  # selected game key
        self.joined = []  # Player list in join order
        self.settings_i = 0
        self.pending_abort = False
        self._warned_full = False
        self.stop = False
        self.reader = None
        self.rfid = None
        self.detector = None
        self.enrolment = None
        if hw.spi is not None:
            self._start_rfid()
        if hw.adc is not None:
            self._start_detector()
        self.status = {"version": maus.VERSION, "board": hw.board.get("name"), "safe_mode": False}
        self._boot_ms = hw.ticks_ms()
        self._healthy = False  # ran HEALTHY_MS without a crash: the crash counter was cleared
        self._gc_at = 0
        self.host = None  # maus.hostsvc.HostService, set by main(): the host's requests over the console

    def _start_rfid(self):
        from maus import cards, rfid
        from maus.drivers.mfrc522 import MFRC522

        try:
            self.reader = MFRC522(self.hw.spi, self.hw.rfid_cs, self.hw.rfid_rst)
        except Exception as e:  # noqa: BLE001 - a missing reader is reported by the self-test
            self.hw.problems.append("rfid: %s" % e)
            return
        self.enrolment = cards.Enrolment()
        if self.enrolment.error:
            self.hw.problems.append(self.enrolment.error)
        self.rfid = rfid.Presence(self.reader, self.enrolment)

    def _start_detector(self):
        from maus import piezo

        self.detector = piezo.Detector(sensitivity=self.settings.get("sensitivity"))
        try:
            with open(CALIB_FILE) as f:
                c = json.load(f)
            self.detector.calibrated(int(c["base"]), int(c["floor"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # not calibrated yet: the detector's defaults
        self.detector.disarm()
        cap = self.capture
        self._stop_watch = lambda: cap.pending or cap.busy()  # made once: watch() polls it often

    # --- settings -------------------------------------------------------------------------------------
    def _apply_timing(self):
        s = self.settings
        self.capture.settle_us = s.get("settle_ms") * 1000
        self.capture.debounce_us = s.get("debounce_ms") * 1000
        self.capture.stuck_ms = s.get("stuck_ms")
        self.gest.double_ms = s.get("double_press_ms")
        self.gest.long_ms = s.get("long_press_ms")

    def settings_changed(self):
        # The host changed settings: the shell follows at once; a game in progress keeps its own copy.
        self.lang = self.settings.get("lang")
        if self.mode != "play":
            self._apply_timing()

    def _setting_changed(self, key, old, new):
        if self.log is not None:
            self.log.record("settings", {"key": key, "old": old, "new": new})

    # --- the Table the games act through ---------------------------------------------------------------
    def now_ms(self):
        return self.hw.ticks_ms()

    def log_record(self, rtype, fields):
        log = self.log
        if log is not None:
            log.record(rtype, fields)
            if log.degraded and not self._warned_full:
                # A full or failing flash never stops a game: say so once and keep refereeing.
                self._warned_full = True
                self._say("log_degraded")
                self.fb.sound("error")
                print("LOG degraded:", log.error)

    def say(self, _key, **kw):
        table = self.game.TEXT if self.game is not None else text.TEXT
        self.fb.text(text.fmt(table, self.lang, _key, kw))

    def led(self, player, colour, mode="on"):
        self.fb.led(player, colour, mode)

    def sound(self, name):
        self.fb.sound(name)

    def timer(self, name, ms):
        self.timers[name] = self.hw.ticks_ms() + ms

    def cancel(self, name):
        self.timers.pop(name, None)

    def race_open(self, reveal_t_us):
        self.race = True
        if self.rfid is not None:
            self.rfid.pause()

    def race_close(self):
        self.race = False
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
        from maus import piezo

        d = self.detector
        r = d.watch(self.hw.adc.read_u16, self.hw.ticks_us, self._stop_watch, WATCH_SLICE_US)
        if r == piezo.ALARM:
            self._alarm()

    def _alarm(self):
        lvl = self.detector.take()
        if lvl is not None and self.mode == "play":
            self.game.on_alarm(lvl)

    def finish(self):
        self._end_game()

    # --- shell output helpers ---------------------------------------------------------------------------
    def _say(self, _key, **kw):
        self.fb.text(text.fmt(text.TEXT, self.lang, _key, kw))

    def _console_say(self, line):
        print("SAY", line)

    def _event_line(self, line):
        # Every log record also goes to the console for `mausbox monitor`.
        if self.host is not None and self.host.event(line):
            return  # sent as an event frame to the monitor that asked for it
        sys.stdout.write("EV ")
        sys.stdout.write(line if isinstance(line, str) else line.decode())
        if not (line.endswith("\n") if isinstance(line, str) else line.endswith(b"\n")):
            sys.stdout.write("\n")

    # --- input events ------------------------------------------------------------------------------------------
    def _cap_event(self, kind, i, t_us):
        p = i + 1
        now = self.hw.ticks_ms()
        if kind == cap_mod.EV_PRESS:
            d = self.detector
            if d is not None and d.armed:
                d.blank(t_us)  # the press's own thump is not an alarm
                if d.pending:
                    self._alarm()
            self._on_press(p, t_us)
            self.gest.press(i, now)
        elif kind == cap_mod.EV_RELEASE:
            self.gest.release(i, now)
            self._on_release(p, t_us)
        elif kind == cap_mod.EV_STUCK:
            self.gest.cancel(i)
            self._say("stuck", p=p)
            self.fb.sound("error")
            self.log_record("note", {"text": "stuck button", "player": p})
        elif kind == cap_mod.EV_UNSTUCK:
            self.log_record("note", {"text": "button released", "player": p})

    def _gesture(self, i, kind):
        p = i + 1
        if self.mode == "play":
            self.log_record("gesture", {"player": p, "kind": kind})  # replays need them (docs/replay.md)
            self.game.on_gesture(p, kind)
        elif self.mode == "menu":
            self._menu_gesture(p, kind)
        elif self.mode == "variant":
            self._variant_gesture(p, kind)
        elif self.mode == "join":
            self._join_gesture(p, kind)
        elif self.mode == "end":
            self._end_gesture(p, kind)
        elif self.mode == "settings":
            self._settings_gesture(p, kind)

    def _on_press(self, p, t_us):
        if self.mode == "play":
            self.game.on_press(p, t_us)
        elif self.mode == "join":
            self._join_press(p)

    def _on_release(self, p, t_us):
        if self.mode == "play":
            self.game.on_release(p, t_us)
        elif self.mode == "join":
            self.cancel("young%d" % p)

    def _on_tap(self, ident, uid, t_us):
        if ident is not None and ident.startswith("game/"):
            self._game_card(ident)
            return
        if self.mode == "play":
            self.game.on_tap(ident, uid, t_us)
        elif ident is None:
            self._say("unknown_card")
            self.fb.sound("error")

    def _on_remove(self, ident, uid):
        if self.mode == "play" and not (ident or "").startswith("game/"):
            self.game.on_remove(ident, uid)

    def _fire_timer(self, name):
        if name.startswith("young"):
            self._join_young(int(name[5:]))
        elif self.mode == "play":
            self.game.on_timer(name)
        elif name == "abort":
            self.pending_abort = False

    # --- menu, variant, join, end ----------------------------------------------------------------------------
    def show_menu(self):
        self.mode = "menu"
        self.fb.led(0, "off")
        self.fb.led(1, "white", "blink")
        self._say("menu", item=text.fmt(text.TEXT, self.lang, "m_" + MENU[self.menu_i], {}))

    def _menu_gesture(self, p, kind):
        if p != 1:
            return
        if kind == "click":
            self.menu_i = (self.menu_i + 1) % len(MENU)
            self.fb.sound("tick")
            self.show_menu()
        elif kind == "long":
            item = MENU[self.menu_i]
            if item in GAMES:
                self._choose(item)
            elif item == "settings":
                self.mode = "settings"
                self._show_setting()
            elif item == "latency":
                self.latency_test()
                self.show_menu()
            elif item == "calibrate":
                self.calibrate()

    def _game_card(self, ident):
        key = None
        for k, g in GAMES.items():
            if g[0] == ident:
                key = k
        if key is None:
            self._say("unknown_card")
            self.fb.sound("error")
            return
        if self.mode == "play":
            if self.pending_abort:
                self.abort("aborted by players")
            else:
                self.pending_abort = True
                self.timer("abort", 5000)
                self._say("abort_confirm")
                self.fb.sound("prompt")
            return
        if self.mode == "join" and key == self.choice:
            self._try_start()
            return
        self._choose(key)

    def _choose(self, key):
        self.choice = key
        self.fb.sound("prompt")
        if len(GAMES[key][4]) > 1:
            self.mode = "variant"
            self.variant_i = 0
            self._show_variant()
        else:
            self.variant = None
            self._start_join()

    def _show_variant(self):
        self._say("variant", game=text.fmt(text.TEXT, self.lang, "m_" + self.choice, {}),
                  v=GAMES[self.choice][4][self.variant_i])

    def _variant_gesture(self, p, kind):
        if p != 1:
            return
        variants = GAMES[self.choice][4]
        if kind == "click":
            self.variant_i = (self.variant_i + 1) % len(variants)
            self.fb.sound("tick")
            self._show_variant()
        elif kind == "long":
            self.variant = variants[self.variant_i]
            self._start_join()

    def _start_join(self, players=None):
        self.mode = "join"
        self.joined = players or []
        self.fb.led(0, "off")
        for pl in self.joined:
            self.fb.led(pl.id, pl.colour)
        self._show_join()

    def _show_join(self):
        young = GAMES[self.choice][5]
        self._say("join", game=text.fmt(text.TEXT, self.lang, "m_" + self.choice, {}),
                  hold=text.fmt(text.TEXT, self.lang, "join_young", {}) if young else "", n=len(self.joined))

    def _player(self, p):
        for pl in self.joined:
            if pl.id == p:
                return pl
        return None

    def _join_press(self, p):
        if self._player(p) is None:
            if len(self.joined) >= GAMES[self.choice][3]:
                return
            pl = Player(p)
            self.joined.append(pl)
            self.fb.led(p, pl.colour)
            self.fb.sound("join")
            self._show_join()
        if GAMES[self.choice][5]:
            self.timer("young%d" % p, self.settings.get("young_hold_ms"))

    def _join_young(self, p):
        pl = self._player(p)
        if pl is not None and self.mode == "join" and self.capture.is_down(p - 1):
            pl.young = True
            self.fb.led(p, pl.colour, "blink")
            self.fb.sound("ok")

    def _join_gesture(self, p, kind):
        if kind == "double" and self._player(p) is not None:
            self._try_start()

    def _try_start(self):
        lo, hi = GAMES[self.choice][2], GAMES[self.choice][3]
        if not lo <= len(self.joined) <= hi:
            self._say("need_players", lo=lo, hi=hi)
            self.fb.sound("error")
            return
        self.start_game()

    # --- a game -------------------------------------------------------------------------------------------------
    def start_game(self):
        key = self.choice
        mod, cls = load_game(key)
        short = cls.GAME
        try:
            catalog = load_catalog(mod, short)
        except (ValueError, KeyError, TypeError) as e:  # a user's catalog that does not fit the game
            self._say("bad_catalog", why=str(e)[:60])
            self.fb.sound("error")
            print("CATALOG", short, e)
            return
        players = sorted(self.joined, key=lambda pl: pl.id)
        for pl in players:
            pl.young = pl.young and GAMES[key][5]
        self.seed += 1
        settings = dict(self.settings.values)
        wall = self.hw.wall_clock()
        self.log = gamelog.start_game(
            self.store, self.hw.ticks_ms, short, self.variant, [pl.as_log() for pl in players],
            self.hw.board.get("name"), _hex(self.hw.unique_id()), maus.VERSION, settings,
            wall=gamelog.wall_iso(wall) if wall else None, ticks=self.hw.ticks_ms(), listener=self._event_line)
        if self.log.dropped:
            self._say("log_room", n=len(self.log.dropped))
        self.timers = {}
        self._warned_full = False
        self.game = cls(_TableView(self), players, settings, catalog, self.variant, self.seed)
        self.players = players
        self.mode = "play"
        self.pending_abort = False
        self.gest.reset()
        self.fb.led(0, "off")
        for pl in players:
            self.fb.led(pl.id, pl.colour)
        self.fb.sound("start")
        self.game.start()

    def _end_game(self):
        g = self.game
        s = g.summary()
        if self.log is not None:
            self.log.end(s.get("scores", {}), s.get("winners", []), s.get("breakdown", {}), s.get("reason", ""))
            self.log.close()
            self.log = None
        self.mode = "end"
        self.race = False
        self.gest.reset()  # the press that ended the game must not start the next one
        scores = s.get("scores", {})
        lines = []
        for pid in sorted(scores, key=lambda k: int(k)):
            mark = "*" if int(pid) in s.get("winners", []) else " "
            lines.append("%sP%s: %s" % (mark, pid, scores[pid]))
        self._say("end", scores="\n".join(lines))
        self.fb.led(0, "off")
        for w in s.get("winners", []):
            self.fb.led(w, "white", "blink")
        self.fb.sound("win")
        self.last_summary = s

    def abort(self, reason):
        if self.log is not None:
            self.log.abort(reason)
            self.log.close()
            self.log = None
        self.race = False
        self.game = None
        self.timers = {}
        self._say("aborted")
        self.fb.sound("error")
        self.mode = "menu"
        self.show_menu()

    def _end_gesture(self, p, kind):
        if p != 1:
            return
        if kind == "click":
            self.start_game()  # same players again
        elif kind == "long":
            self.game = None
            self.show_menu()

    # --- settings on the unit -----------------------------------------------------------------------------------
    def _show_setting(self):
        key = SETTINGS_MENU[self.settings_i]
        self._say("settings", key=key, value=self.settings.get(key))

    def _settings_gesture(self, p, kind):
        key = SETTINGS_MENU[self.settings_i]
        if p == 1 and kind == "click":
            self.settings_i = (self.settings_i + 1) % len(SETTINGS_MENU)
        elif p == 2 and kind == "click":
            self._bump(key)
        elif kind == "long":
            self.lang = self.settings.get("lang")
            self._apply_timing()
            self.show_menu()
            return
        self._show_setting()

    def _bump(self, key):
        from maus.settings import SCHEMA

        spec = SCHEMA[key]
        v = self.settings.get(key)
        if type(spec[0]) is bool:
            nv = not v
        elif type(spec[0]) is int:
            nv = v + SETTING_STEPS.get(key, 1)
            if nv > spec[2]:
                nv = spec[1]
        else:
            ch = spec[1]
            nv = ch[(ch.index(v) + 1) % len(ch)]
        self.settings.set(key, nv)

    # --- hooks for the RFID pad, the detector and self-tests (wired in by attach_* below) -------------------
    def calibrate(self):
        """Guided piezo calibration: a few quiet seconds, then gentle taps; saves calib.json."""
        from maus import piezo

        if self.detector is None:
            self._say("latency_none")
            return None
        hw = self.hw
        cal = piezo.Calibration()
        cal.start(hw.ticks_us())
        self._say("calibrate")
        self.fb.update(hw.ticks_ms())
        phase = cal.phase
        n = 0
        while phase < cal.DONE:
            phase = cal.feed(hw.adc.read_u16(), hw.ticks_us())
            n += 1
            if phase == cal.TAP and n > 0:
                n = -1 << 30  # once: ask for taps
                self._say("calibrate_tap")
                self.fb.update(hw.ticks_ms())
                self.fb.sound("prompt")
            if n & 1023 == 0:
                hw.wdt_feed()
                self._meter(cal.meter())
        if phase == cal.DONE:
            base, floor = cal.result()
            self.detector.calibrated(base, floor)
            try:
                write_atomic(CALIB_FILE, json.dumps({"base": base, "floor": floor}))
            except OSError:
                pass
            self._say("calibrate_done", base=base, floor=floor)
            self.fb.sound("ok")
        else:
            self._say("calibrate_fail")
            self.fb.sound("error")
        self.fb.update(hw.ticks_ms())
        return phase == cal.DONE

    def _meter(self, level):
        # The live vibration meter on the LEDs: level 0..16 (8 = at the threshold) lights players' LEDs from the left.
        lit = level * self.n // 16
        for i in range(1, self.n + 1):
            self.fb.led(i, "green" if i <= lit else "off")
        self.fb.update(self.hw.ticks_ms())

    def latency_test(self, n=200):
        from maus import selftest

        res = selftest.latency(self.hw, self, n)
        if res is None:
            self._say("latency_none")
        else:
            self._say("latency_done", **res)
        return res

    # --- the main loop --------------------------------------------------------------------------------------------
    def step(self):
        hw = self.hw
        hw.spend(LOOP_US)
        self.capture.service()
        now = hw.ticks_ms()
        self.gest.poll(now)
        if self.timers:
            due = None
            for name, t in self.timers.items():
                if ticks_diff(now, t) >= 0 and (due is None or ticks_diff(t, self.timers[due]) < 0):
                    due = name
            if due is not None:
                del self.timers[due]
                self._fire_timer(due)
        if self.race:
            hw.wdt_feed()
            if self.poll_capture:
                self.capture.poll(2000)
                hw.spend(0)
            else:
                hw.idle(1)
            return
        if self.rfid is not None:
            for ev in self.rfid.poll(now):
                uid = ev[2].lower() if ev[2] else ev[2]
                if ev[0] == "tap":
                    self._on_tap(ev[1] or None, uid, hw.ticks_us())
                else:
                    self._on_remove(ev[1], uid)
        self.fb.update(now)
        hw.wdt_feed()
        if self.detector is not None and self.detector.armed:
            self._watch()
            return
        if not self._healthy and ticks_diff(now, self._boot_ms) >= HEALTHY_MS:
            self._healthy = True
            _crash_count(hw, 0)
        wait = self._wait_ms(now)
        if wait > 0 and ticks_diff(now, self._gc_at) > 500:
            gc.collect()  # idle time: collect now, not during a race
            self._gc_at = now
        if self.host is not None:
            wait = self.host.poll(wait)  # the host's requests, never inside a race (returned above)
        hw.idle(wait)

    def _wait_ms(self, now):
        if self.capture.pending or self.capture.busy():
            return 1
        wait = RFID_POLL_MS if self.rfid is not None else 100
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
        self.show_menu()
        while not self.stop:
            self.step()
            if until is not None and until():
                break


class _TableView:
    # The Table a game sees: the unit's methods under the contract's names (maus.game.Table).
    def __init__(self, unit):
        self.u = unit
        self.now_ms = unit.now_ms
        self.log = unit.log_record
        self.say = unit.say
        self.led = unit.led
        self.sound = unit.sound
        self.timer = unit.timer
        self.cancel = unit.cancel
        self.race_open = unit.race_open
        self.race_close = unit.race_close
        self.detector = unit.detector_arm
        self.finish = unit.finish


def _hex(b):
    return "".join("%02x" % x for x in b)


def _crash_count(hw, n=None):
    data = hw.rtc_load()
    cur = data[0] if data and len(data) >= 2 and data[1] == 0xA5 else 0
    if n is not None:
        hw.rtc_save(bytes((n, 0xA5)) + (data[2:] if data else b""))  # later bytes: the watchdog's (hw.esp32)
    return cur


def _board_problems(board):
    # The board file against the ESP32 pin rules; the validator is unloaded again to spare the heap.
    return ["board: " + e for e in maus.call_unloaded("maus.board", "validate", board)]


def write_status(status):
    try:
        write_atomic("status.json", json.dumps(status))
    except OSError:
        pass


def main(hw=None, **kw):
    from maus.hw import load_board, open_hardware

    if hw is None:
        hw = open_hardware(load_board(), **kw)
    crashes = _crash_count(hw)
    if crashes >= CRASH_LIMIT:
        return safe_mode(hw, crashes)
    _crash_count(hw, crashes + 1)
    unit = None
    try:
        unit = Unit(hw)
        unit.status["problems"] = list(hw.problems) + _board_problems(hw.board)
        from maus import selftest

        selftest.boot(unit)
        write_status(unit.status)
        print("MAUSBOX READY", maus.VERSION)
        hw.wdt_start(WDT_MS)
        from maus.hostsvc import HostService

        unit.host = HostService(unit)  # the host's link (docs/protocol.md), polled by the main loop
        unit.run(until=getattr(hw, "finished_and_idle", None) and (lambda: hw.finished_and_idle(unit)))
    except KeyboardInterrupt:  # Ctrl-C over USB is not a crash, even during the boot
        hw.wdt_release()  # the REPL has the unit now: its watchdog is kept fed
        if unit is not None and unit.log is not None:
            unit.abort("interrupted (Ctrl-C)")
        _crash_count(hw, 0)
        raise
    if unit.log is not None:
        unit.abort("scenario ended")
    _crash_count(hw, 0)
    return unit


def safe_mode(hw, crashes):
    fb = Feedback(hw, _SafeSettings())
    fb.text(text.fmt(text.TEXT, "en", "safe_mode", {"n": crashes}))
    fb.led(0, "red", "on")
    fb.update(hw.ticks_ms())
    print("MAUSBOX SAFE MODE: %d crashes in a row; games are disabled, the REPL is free." % crashes)
    print("Fix the cause, then: import maus.unit; maus.unit.clear_safe_mode()")
    write_status({"version": maus.VERSION, "board": hw.board.get("name"), "safe_mode": True, "crashes": crashes})
    return None


def clear_safe_mode():
    from maus.hw import load_board, open_hardware

    _crash_count(open_hardware(load_board()), 0)


class _SafeSettings:
    def get(self, key):
        return {"volume": 1, "brightness": 16}.get(key)
