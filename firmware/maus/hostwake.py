# The host link while no host talks: a few hundred bytes that watch the USB console for the start of a
# frame ("#", docs/protocol.md) and only then load the host service (maus.hostsvc, ~18 KB with its
# buffers and maus.logstore). When the host has gone quiet for LINGER_MS (no request, no stream, no event
# subscription, no card lease) the service and the modules its import loaded are let go again, so a game
# or the idle menu does not carry it (docs/build.md section 7). The request counters outlive it.
#
# Bytes before a "#" are not a frame: the service would drop them too (a console echo, typing).
import sys

from micropython import const

from maus.ticks import ticks_diff

LINGER_MS = const(10000)  # a host session's requests come seconds apart at most: stay loaded that long
_IN_PER_POLL = const(160)  # as the service: typing at the console cannot stall the loop
_DEAD_MS = const(1000)


class HostWake:
    def __init__(self, ctx, inp=None, out=None, ready=None):
        self.ctx = ctx
        self.inp = inp if inp is not None else sys.stdin.buffer
        self.out = out
        if ready is None:
            import select

            p = select.poll()
            p.register(sys.stdin, select.POLLIN)
            self._poller = p
            ready = self._stdin_ready
        self.ready = ready
        self._one = bytearray(1)
        self.svc = None  # the HostService while a host session is on (maus.hostsvc.woken, .asleep)
        self._mod = None  # its module
        self._mods = ()  # the modules loading it brought in: they go with it
        self._seen = 0  # its request count at the last look
        self._quiet_from = 0
        self.dead_until = -1  # stdin at its end: looked at again once a second
        self.requests = 0  # of the services let go (HostService.requests counts on from there)
        self.bad_frames = 0

    def serve(self, now=None):
        """Unit.pollers: read the console until a frame starts; while a session is on, the service serves."""
        svc = self.svc
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

    def event(self, parts):
        """A log record, as its pieces (maus.gamelog.pieces), for a subscribed monitor (HostService.event,
        which takes the line whole); False while no session is on."""
        svc = self.svc
        return svc is not None and svc.event(b"".join(parts))

    def _look(self):
        # True once a "#" came (given to the service as its first byte); everything before it is dropped.
        if self.dead_until >= 0:
            if ticks_diff(self.ctx.hw.ticks_ms(), self.dead_until) < 0:
                return False
            self.dead_until = -1
        one = self._one
        for _ in range(_IN_PER_POLL):
            if not self.ready():
                return False
            n = self.inp.readinto(one)
            if n is None:
                return False
            if not n:
                self.dead_until = (self.ctx.hw.ticks_ms() + _DEAD_MS) & 0x3FFFFFFF
                return False
            c = one[0]
            if c == 3:
                raise KeyboardInterrupt  # as the service does (a raw tty hands Ctrl-C over as a byte)
            if c == 0x23:
                return True
        return False

    def _wake(self):
        import maus

        mark = maus.loaded()
        try:
            import maus.hostsvc as mod
        except MemoryError:  # no room for the service now (a fragmented heap in a game): the host asks again
            maus.unload_since(mark)
            return None
        return mod.woken(self, mark)

    def _stdin_ready(self):
        for _ in self._poller.ipoll(0):
            return True
        return False
