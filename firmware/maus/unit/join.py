# The join phase: the chosen game's variant (if it has more than one) and joining: each player presses
# their button (held: a young player, where the game allows them), a double press starts the game.
#
# Loaded from the menu when a game is chosen (maus.unit.menu) and let go when the game starts
# (maus.unit.core), so the idle menu does not carry it.
from maus.unit.shared import GAMES


def enter(u, key):
    """Choosing the game under `key` (a long press on it in the menu, or its game card); or ("join") back
    to joining with the players who joined, the game could not start."""
    if key == "join":
        u.mode = "join"
        return
    choose(u, key)


def gesture(u, p, kind):
    m = u.mode
    if m == "variant":
        _variant_gesture(u, p, kind)
    elif m == "join":
        if kind == "double" and _player(u, p) is not None:
            _try_start(u)


def game_card(u, key):
    if u.mode == "join" and key == u.choice:
        _try_start(u)
        return
    choose(u, key)


def choose(u, key):
    u.choice = key
    u.fb.sound("prompt")
    if len(GAMES[key][4]) > 1:
        u.mode = "variant"
        u.variant_i = 0
        _show_variant(u)
    else:
        u.variant = None
        _start_join(u)


def _show_variant(u):
    u._say("variant", game=u.word("m_" + u.choice), v=u.word("v_" + u.choice + GAMES[u.choice][4][u.variant_i]))


def _variant_gesture(u, p, kind):
    if p != 1:
        return
    variants = GAMES[u.choice][4]
    if kind == "click":
        u.variant_i = (u.variant_i + 1) % len(variants)
        u.fb.sound("tick")
        _show_variant(u)
    elif kind == "long":
        u.variant = variants[u.variant_i]
        _start_join(u)


def _start_join(u, players=None):
    u.mode = "join"
    u.joined = players or []
    u.fb.led(0, "off")
    for pl in u.joined:
        u.fb.led(pl.id, pl.colour)
    _show_join(u)


def _show_join(u):
    young = GAMES[u.choice][5]
    u._say("join", game=u.word("m_" + u.choice), hold=u.word("join_young") if young else "", n=len(u.joined))


def _player(u, p):
    for pl in u.joined:
        if pl.id == p:
            return pl
    return None


def join_press(u, p):
    if _player(u, p) is None:
        if len(u.joined) >= GAMES[u.choice][3]:
            return
        from maus.games.base import Player  # loaded at the first join, not while the menu waits

        pl = Player(p)
        u.joined.append(pl)
        u.fb.led(p, pl.colour)
        u.fb.sound("join")
        _show_join(u)
    if GAMES[u.choice][5]:
        u.timer("young%d" % p, u.settings.get("young_hold_ms"))


def join_young(u, p):
    pl = _player(u, p)
    if pl is not None and u.capture.is_down(p - 1):
        pl.young = True
        u.fb.led(p, pl.colour, "blink")
        u.fb.sound("ok")


def _try_start(u):
    lo, hi = GAMES[u.choice][2], GAMES[u.choice][3]
    if not lo <= len(u.joined) <= hi:
        u._say("need_players", lo=lo, hi=hi)
        u.fb.sound("error")
        return
    u.switch("play")
