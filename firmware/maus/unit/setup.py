# The settings phase: the unit's own settings menu (P1 next, P2 change, hold: back to the menu).
from maus import moment

SETTINGS_MENU = ("lang", "volume", "tie_window_us", "lockout", "sensitivity", "claim_window_ms", "hints")
SETTING_STEPS = {"volume": 1, "tie_window_us": 1000, "sensitivity": 1, "claim_window_ms": 1000}


def enter(u, arg=None):
    u.mode = "settings"
    _show(u)


def _show(u):
    key = SETTINGS_MENU[u.settings_i]
    u._say("settings", key=key, value=u.settings.get(key))


def gesture(u, p, kind):
    key = SETTINGS_MENU[u.settings_i]
    if p == 1 and kind == "click":
        u.settings_i = (u.settings_i + 1) % len(SETTINGS_MENU)
    elif p == 2 and kind == "click":
        _bump(u, key)
    elif kind == "long":
        u.lang = u.settings.get("lang")
        with moment():
            import maus.unit.build

            maus.unit.build.apply_timing(u)
        u.switch("menu")
        return
    _show(u)


def game_card(u, key):
    u.switch("menu", key)


def _bump(u, key):
    from maus.settings.values import SCHEMA

    spec = SCHEMA[key]
    v = u.settings.get(key)
    if type(spec[0]) is bool:
        nv = not v
    elif type(spec[0]) is int:
        nv = v + SETTING_STEPS.get(key, 1)
        if nv > spec[2]:
            nv = spec[1]
    else:
        ch = spec[1]
        nv = ch[(ch.index(v) + 1) % len(ch)]
    u.settings.set(key, nv)
