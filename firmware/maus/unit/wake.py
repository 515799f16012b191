# The host link while no game is on (maus.unit.core HostWake.serve): the console watched for a frame's first byte
# ("#", docs/protocol.md), the host service (maus.host.service) loaded then and served, and let go again when the
# host has gone quiet. Loaded by HostWake while no game is on and let go as a game starts (HostWake.lull), so a game
# does not carry it; in a game the desk answers (maus.unit.desk).
from micropython import const

from maus import loaded, unload_since
from maus.ticks import ticks_diff

LINGER_MS = const(10000)  # a host session's requests come seconds apart at most: stay loaded that long
_IN_PER_POLL = const(160)  # as the host service: typing at the console cannot stall the loop
_DEAD_MS = const(1000)


def serve(w, now):
    """HostWake.serve while no game is on: read the console until a frame starts; while a session is on, the service
    serves. When the host has gone quiet for LINGER_MS (no request, no stream, no event subscription, no card lease)
    the service and the modules its import loaded are let go again. -> as HostWake.serve."""
    svc = w.svc
    if svc is None:
        if not _look(w):
            return None
        svc = _wake(w)
        if svc is None:
            return None
    r = svc.serve(now)
    t = w.ctx.hw.ticks_ms()
    if svc.requests != w._seen or svc.job is not None or svc.events_until or svc.card_until >= 0:
        w._seen = svc.requests
        w._quiet_from = t
    elif ticks_diff(t, w._quiet_from) >= LINGER_MS:
        w._mod.asleep(w)  # the host has gone quiet: the service goes
        return None
    return r


def _look(w):
    # True once a "#" came (given to the service as its first byte); everything before it is dropped.
    if w.dead_until >= 0:
        if ticks_diff(w.ctx.hw.ticks_ms(), w.dead_until) < 0:
            return False
        w.dead_until = -1
    one = w._one
    for _ in range(_IN_PER_POLL):
        if not w.ready():
            w.quiet()
            return False
        n = w.inp.readinto(one)
        if n is None:
            w.quiet()
            return False
        if not n:
            w.dead_until = (w.ctx.hw.ticks_ms() + _DEAD_MS) & 0x3FFFFFFF
            return False
        c = one[0]
        if w.intr(c):
            continue
        if c == 0x23:
            return True
    return False


def _wake(w):
    mark = loaded()
    try:
        import maus.host.service as mod
    except MemoryError:  # no room for the service now (a fragmented heap): the host asks again
        unload_since(mark)
        return None
    return mod.woken(w, mark)

