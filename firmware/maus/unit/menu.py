# The menu phase: the idle menu (games, settings, the self-tests). Choosing a game (a long press on it, or
# its game card) hands over to the join phase (maus.unit.join: its variant, joining).
#
# Loaded while the unit waits for a game and let go when another phase starts (maus.unit.core). The
# menu's self-tests (calibration, latency) are loaded only while they run.
from maus import moment, unit_name
from maus.unit.shared import GAMES

MENU = ("mausgeflippt", "mim", "mms", "settings", "calibrate", "latency", "bringup")


def enter(u, key=None):
    """The menu; or (a game key, or "join") on to the join phase (maus.unit.join.enter)."""
    if key is not None:
        u.switch("join", key)
        return
    u.mode = "menu"
    u.fb.led(0, "off")
    u.fb.led(1, "white", "blink")
    alert = u.status.get("alert")
    if alert:  # the boot self-test failed (a reader not found): said until player 1 clicks
        u.fb.text(alert)
        u.fb.sound("error")
        return
    # until a setting is saved (a new unit), the menu says which language it speaks (Settings: lang)
    name = unit_name(u.root)  # the unit's name (mausbox name set): a line of its own
    u._say("menu", item=u.word("m_" + MENU[u.menu_i]), name=name + "\n" if name else "",
           lang=u.word("lang_now") if u.settings.source == "defaults" else "")


def gesture(u, p, kind):
    if u.mode != "menu" or p != 1:
        return
    if u.status.get("alert"):
        u.status["alert"] = None  # seen: the menu
        enter(u)
        return
    if kind == "click":
        u.menu_i = (u.menu_i + 1) % len(MENU)
        u.fb.sound("tick")
        enter(u)
    elif kind == "long":
        item = MENU[u.menu_i]
        if item in GAMES:
            u.switch("join", item)
        elif item == "settings":
            u.switch("setup")
        elif item == "latency":
            latency_test(u)
            enter(u)
        elif item == "calibrate":
            calibrate(u)
        elif item == "bringup":
            with moment():
                import maus.checks.bringup

                maus.checks.bringup.run(u)  # its summary stays on the display until the next click


def game_card(u, key):
    u.switch("join", key)


# --- the menu's self-tests: loaded while they run ------------------------------------------------------
def calibrate(u):
    with moment():
        import maus.unit.tools

        return maus.unit.tools.calibrate(u)


def latency_test(u, n=200):
    with moment():
        import maus.unit.tools

        return maus.unit.tools.latency_test(u, n)
