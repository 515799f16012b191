# A classroom's unit: its name and its seats (who sits at which button), kept on flash beside the settings,
# and the host's requests for them (maus.host.service _CLASS: name, seats, copied). Loaded for a request, for the
# idle menu's name line and for a game's start (maus.log.start), and let go again (docs/build.md section 7).
import json

from micropython import const

NAME_FILE = "name.txt"
SEATS_FILE = "seats.json"
NAME_MAX = const(16)  # characters: one line of the 128-pixel OLED at 8 pixels a character (SSD1306)
SEAT_NAME_MAX = const(24)  # characters of a child's name in seats.json
SEATS = const(6)  # buttons 1..6


def check_name(name):
    """-> None if `name` may be a unit's name (1..16 printable characters, not only spaces), else why not."""
    if not isinstance(name, str):
        return "a name is text"
    if not name.strip():
        return "a name needs a letter or a digit"
    if len(name) > NAME_MAX:
        return "a name has at most %d characters (the display's line)" % NAME_MAX
    for c in name:
        if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0:
            return "a name has no control characters"
    return None


def read_name(root=""):
    """The unit's name, or None (none set, or a file that is not one)."""
    from maus import unit_name

    name = unit_name(root)  # NAME_FILE
    return None if name is None or check_name(name) else name


def write_name(root, name):
    """Store `name` (ValueError if it cannot be one); None or "" removes it."""
    import os

    from maus import write_atomic

    if not name:
        try:
            os.remove(root + NAME_FILE)
        except OSError:
            pass
        return
    why = check_name(name)
    if why:
        raise ValueError(why)
    write_atomic(root + NAME_FILE, name.encode())


def check_seats(seats):
    """-> None if `seats` is a seats map ({"1": "Anna", ...}: seat 1..6 -> a child's name), else why not."""
    if not isinstance(seats, dict):
        return "seats are a map of seat -> name"
    for k in seats:
        v = seats[k]
        if not isinstance(k, str) or len(k) != 1 or not "1" <= k <= "6":
            return "seat %r is not 1..%d" % (k, SEATS)
        if not isinstance(v, str) or not v.strip() or len(v) > SEAT_NAME_MAX:
            return "seat %s: a name of 1..%d characters" % (k, SEAT_NAME_MAX)
        for c in v:
            if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0:
                return "seat %s: no control characters" % k
    return None


def read_seats(root=""):
    """The seats map as stored, or None (none set, or a file that is not one)."""
    try:
        with open(root + SEATS_FILE) as f:
            seats = json.load(f)
    except (OSError, ValueError):
        return None
    return None if check_seats(seats) or not seats else seats


def write_seats(root, seats):
    import os

    from maus import write_atomic

    why = check_seats(seats)
    if why:
        raise ValueError(why)
    if not seats:
        try:
            os.remove(root + SEATS_FILE)
        except OSError:
            pass
        return
    write_atomic(root + SEATS_FILE, json.dumps(seats).encode())


def start_fields(root=""):
    """What a game's game_start adds for the classroom: {"name": .., "seats": {..}}, only what is set."""
    out = {}
    name = read_name(root)
    if name:
        out["name"] = name
    seats = read_seats(root)
    if seats:
        out["seats"] = seats
    return out


# --- the host's requests (maus.host.service _CLASS): each takes the HostService and the request --------------------
def _root(svc):
    return getattr(svc.ctx, "root", "") or ""


def op_name(svc, req):
    # {"name": "Tisch 3"} sets it, {"name": ""} removes it, no "name": the one set
    if "name" in req:
        try:
            write_name(_root(svc), req["name"])
        except ValueError as e:
            svc._error(svc.seq, "value", str(e))
            return None
        _menu_again(svc)
    return {"name": read_name(_root(svc))}


def op_seats(svc, req):
    # {"seats": {"1": "Anna", ...}} sets them for the games to come ({}: none), no "seats": the ones set
    if "seats" in req:
        try:
            write_seats(_root(svc), req["seats"])
        except ValueError as e:
            svc._error(svc.seq, "value", str(e))
            return None
    return {"seats": read_seats(_root(svc)) or {}}


def op_copied(svc, req):
    # A pull has copied every log: the unit says so and beeps, on its idle menu only (never in a game).
    c = svc.ctx
    fb = getattr(c, "fb", None)
    if fb is None or getattr(c, "mode", "repl") != "menu":
        return {"shown": False}
    n = req.get("n", 0)
    if type(n) is not int or n < 0:
        raise ValueError("n must be a whole number")
    c._say("copied", n=n)
    fb.sound("ok")
    return {"shown": True}


def _menu_again(svc):
    # the idle menu shows the name: drawn again at once (a game's screen is left alone)
    c = svc.ctx
    ph = getattr(c, "phase", None)
    if getattr(c, "mode", None) == "menu" and ph is not None and getattr(ph, "MENU", None) is not None:
        ph.enter(c)

