# The unit's set-up (maus.unit.core.Unit.__init__), loaded for it and let go again: it runs once a boot,
# so its code need not stay in RAM while the unit waits or plays (docs/build.md section 7). The modules it
# imports stay: the unit's parts are made from them.
from maus.capture.buttons import Gestures
from maus.capture.irq import Capture, RaceWindow
from maus.settings.values import Settings
from maus.unit.feedback import Feedback


def build(u, hw, root, seed, recovered):
    u.hw = hw
    u.seed = seed
    if root:
        u.root = root
    u.settings = Settings(root, on_change=u._setting_changed)
    u.lang = u.settings.get("lang")
    if recovered is None:  # main() recovers before the unit is built, while the heap is empty
        from maus import moment

        with moment():
            import maus.unit.boot

            recovered = maus.unit.boot.recover(root)
    u.recovered = recovered
    # logs boot recovery could not repair (flash full): retried when the next game's log is opened
    u.unrecovered = [r["name"] for r in recovered if "error" in r]
    u.fb = Feedback(hw, u.settings)
    u.fb.console = True  # prompts go to the serial console too
    n = len(hw.buttons)
    u.n = n
    u.capture = Capture(hw.buttons, hw.ticks_us, hw.levels, emit=u._cap_event)
    u.log = None
    u.window = RaceWindow(hw, u.capture, u)
    u.gest = Gestures(n, u._gesture)
    apply_timing(u)
    u.timers = {}
    u.race = False
    u.game = None
    u.mode = "menu"
    u.phase = None  # the module of the phase taking the input (maus.unit.menu, .join, .setup, .play)
    u._mark = None  # the modules loaded before that phase: what stays when it goes
    u._next = None  # a phase switch asked for by a handler, done when the handler returns
    u.menu_i = 0
    u.variant_i = 0
    u.choice = None  # selected game key
    u.variant = None
    u.joined = []  # Player list in join order
    u.settings_i = 0
    u.pending_abort = False
    u.stop = False
    u.reader = None
    u.rfid = None
    u.detector = None  # the piezo detector, while a game that needs it is on (maus.unit.play)
    u.host = None  # maus.unit.core.HostWake, set by main(): the host's requests over the console, served
    # by each main-loop pass outside races (serve(now_ms) -> None or the most ms the loop may idle)
    if hw.spi is not None:
        _start_rfid(u)
    import maus

    u.status = {"version": maus.VERSION, "board": hw.board.get("name"), "safe_mode": False}
    u._boot_ms = hw.ticks_ms()  # None once it ran _HEALTHY_MS (maus.unit.core): the crash counter cleared
    u._gc_at = 0


def apply_timing(u):
    # the shell's button timing from the settings (at the set-up; maus.unit.core and .setup load this for it)
    s = u.settings
    c = u.capture
    c.settle_us = s.get("settle_ms") * 1000
    c.debounce_us = s.get("debounce_ms") * 1000
    c.stuck_ms = s.get("stuck_ms")
    u.gest.double_ms = s.get("double_press_ms")
    u.gest.long_ms = s.get("long_press_ms")


def _start_rfid(u):
    from maus.cards import reader as rfid
    from maus.drivers.mfrc522 import MFRC522

    try:
        u.reader = MFRC522(u.hw.spi, u.hw.rfid_cs, u.hw.rfid_rst, getattr(u.hw, "sleep_us", None))
    except Exception as e:  # noqa: BLE001 - a missing reader is reported by the self-test
        u.hw.problems.append("rfid: %s" % e)
        return
    # The enrolment map only if the unit has one (few do): else neither maus.cards.enrol nor a map stays in RAM;
    # the first enrolment over the link makes it (maus.host.ops).
    from maus import unload
    from maus.cards import enrol

    em = enrol.existing()
    if em is None:
        unload("maus.cards.enrol")  # kept with a map: maus.cards.ident, at a card read, uses the same module then
    if em is not None and em.error:
        u.hw.problems.append(em.error)
    if em is not None:
        u.enrolment = em
    u.rfid = rfid.Presence(u.reader, em)
