# The host service's rarer requests (maus.host.service _RARE: settings, the clock, the card writer's steps,
# enrolment) and the service on the REPL's console (serve: safe mode, a stopped app). maus.host.service loads
# this module for one request and lets it go again, so a game carries none of it (docs/build.md section 7).
# Each op_ takes the HostService and the request, and answers as HostService's own ops do.

from maus import moment
from maus.host.frame import BAUD_WAIT_MS, BOOT_BAUD, why
from maus.host.frame import console as _console
from maus.host.frame import wall as _wall
from micropython import const

_CARD_LEASE_MS = const(30000)  # the pad is the host's this long after the last card request
_LIST_BYTES = const(900)  # enrolment text per frame, as maus.host.service's listing


def op_bringup(svc, req):
    """The bring-up check (maus.checks.bringup) on the running app: each prompt and each part's result is a P frame
    (the person may take a while: every frame is progress), the summary the answer."""
    c = svc.ctx
    if getattr(c, "fb", None) is None or getattr(c, "mode", "repl") != "menu":
        svc._error(svc.seq, "busy", "the bring-up check runs from the menu: finish the game (or start the app) first")
        return None

    seq = svc.seq

    def say(msg):
        svc.send(0x50, seq, msg.encode())  # "P"

    with moment():
        import maus.checks.bringup

        out = maus.checks.bringup.run(c, say)
    c.switch("menu")
    return out


def op_baud(svc, req):
    """The console's rate for the rest of this host session (docs/protocol.md, `baud`): answered at the rate in use,
    then the UART switches and a valid frame must come at the new rate within BAUD_WAIT_MS, or the unit goes back
    to BOOT_BAUD by itself. A native USB console has no rate to agree on; the REPL's service keeps its rate (its
    session ends in the raw REPL, which the host reads at the boot rate)."""
    rate = req["rate"]
    if type(rate) is not int or not 9600 <= rate <= 5000000:  # the ESP32's UART: up to 5 Mbaud (UART_BITRATE_MAX)
        raise ValueError("rate must be a whole number of baud, 9600..5000000")
    hw = svc.ctx.hw if svc.app else None
    if hw is None:
        svc._error(svc.seq, "busy", "the console keeps %d baud here (no app runs)" % svc.baud)
        return None
    if _console(hw) == "usb" or rate == svc.baud:
        return {"baud": svc.baud, "switch": False}
    svc.reply(svc.seq, {"baud": rate, "switch": True, "wait_ms": BAUD_WAIT_MS})
    svc.console(rate)
    if rate != BOOT_BAUD:
        svc.baud_at = svc._now()
    return None


def op_settings(svc, req):
    s = svc.ctx.settings
    return {"values": s.values, "source": s.source, "message": s.message}


def op_set(svc, req):
    try:
        changed = svc.ctx.settings.set(req["key"], req["value"])
    except ValueError as e:
        svc._error(svc.seq, "value", why(e))
        return None
    _settings_changed(svc)
    return {"changed": changed}


def op_reset_settings(svc, req):
    svc.ctx.settings.reset()
    _settings_changed(svc)
    return {}


def _settings_changed(svc):
    fn = getattr(svc.ctx, "settings_changed", None)
    if fn is not None:
        fn()


def op_clock(svc, req):
    # req["rtc"]: (year, month, day, weekday, hour, minute, second, subsecond), machine.RTC order
    t = req.get("rtc")
    hw = svc.ctx.hw
    if t is not None:
        if not isinstance(t, list) or len(t) != 8 or not all(type(x) is int for x in t):
            raise ValueError("rtc must be 8 whole numbers")
        hw.set_clock(tuple(t))
    return {"wall": _wall(hw)}


# The card writer's steps: one attempt per request, the host repeats until a card is there. The pad
# is the host's meanwhile (the unit's own card reading pauses), never during a game.
def _pad(svc):
    c = svc.ctx
    if c.mode == "play":
        svc._error(svc.seq, "busy", "a game is in progress: finish or abort it first")
        return None
    reader = c.reader
    if reader is None:
        svc._error(svc.seq, "busy", "this unit has no RFID reader")
        return None
    if c.rfid is not None:
        c.rfid.pause()
    svc.card_until = (svc._now() + _CARD_LEASE_MS) & 0x3FFFFFFF
    return reader


def op_card_write(svc, req):
    from maus.cards import writer as cardwriter

    r = _pad(svc)
    if r is None:
        return None
    x = cardwriter.write_identity(r, req["id"], bool(req.get("force")))
    return {"code": x[0], "result": cardwriter.WRITE_RESULTS[x[0]], "uid": x[1], "found": x[2]}


def op_card_read(svc, req):
    from maus.cards import writer as cardwriter

    r = _pad(svc)
    if r is None:
        return None
    return {"cards": cardwriter.read_cards(r)}


def op_enrol(svc, req):
    e = _enrolment(svc)
    try:
        return {"id": e.add(req["uid"], req["id"])}
    except ValueError as err:
        svc._error(svc.seq, "value", why(err))
        return None


def op_enrolled(svc, req):
    return _enrolled(svc, svc.seq, _enrolment(svc))


def _enrolled(svc, seq, e):
    n = 0
    buf = svc.buf
    for uid in e.map:
        line = b"%s %s\n" % (uid.encode(), e.map[uid].encode())
        if n + len(line) > _LIST_BYTES:
            svc.send(0x50, seq, buf, n)
            n = 0
            yield 1
        buf[n:n + len(line)] = line
        n += len(line)
    if n:
        svc.send(0x50, seq, buf, n)
    svc.reply(seq, {"n": len(e.map), "error": e.error, "skipped": e.skipped})


def _enrolment(svc):
    c = svc.ctx
    if c.enrolment is None:  # the unit had no enrolment file: the first enrolment makes one
        from maus.cards.enrol import Enrolment

        c.enrolment = Enrolment()
        if c.rfid is not None:
            c.rfid.enrolment = c.enrolment  # the pad knows the tag from now on
    return c.enrolment


def op_card_done(svc, req):
    svc._card_release()
    return {}
