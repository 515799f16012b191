# Cards on the catch pad: presence (one tap, one remove per card), identity reading, card writing.
#
# The runtime calls Presence.poll(now_ms) from its main loop between races; during a race window
# it calls pause() so the reader stays off the CPU and the bus. A poll with no card, or with cards
# that are already known, allocates nothing. Every poll first reads the reader's configuration back
# (MFRC522.check): a reader chip that reset itself is set up again before it scans.
#
# Reading a new card's identity (its type with maus.drivers.tagtype, its NDEF text with maus.drivers.ndef, then
# maus.cards.ident to parse it, one after the other: never two of them in RAM at once) is loaded when a card
# arrives and let go again: it runs once per card, so it need not stay in RAM (docs/build.md section 7).
from maus import moment, unload
from maus.ticks import ticks_add, ticks_diff
from micropython import const

TAP = "tap"
REMOVE = "remove"

_MAX = const(4)  # cards tracked at once (the driver finds at most 4 per scan)
_FREE = const(0)  # slot states
_PENDING = const(1)  # seen, identity not read yet
_PRESENT = const(2)  # tap reported
_ULEN = const(_MAX)  # offsets in Presence._st, after the slot states
_TYPE = const(2 * _MAX)  # tagtype.T_* of each card
_MISS = const(3 * _MAX)
_TRIES = const(4 * _MAX)
_SEEN = const(5 * _MAX)
_UIDS = const(6 * _MAX)  # then the UIDs, 10 bytes a slot
_AREA = const(64)  # TLV bytes read at most for an identity (pages 4..19)
_NONE = const(())
_T_UNKNOWN = const(0)  # tagtype.T_UNKNOWN
_T_TYPE2_LAST = const(6)  # tagtype.TYPE2 are the types 1..6
_TAGTYPE = const("maus.drivers.tagtype")  # (const: no entries in this module's globals)
_NDEF = const("maus.drivers.ndef")


def uid_hex(uid, n=-1):
    """Upper-case hex of a UID (the enrolment key, maus.cards.enrol)."""
    if n < 0:
        n = len(uid)
    s = ""
    for i in range(n):  # (a loop: a generator would be a function of its own in RAM)
        s += "%02X" % uid[i]
    return s


class Presence:
    miss_limit = 3  # consecutive polls without a card before it counts as removed
    read_tries = 3  # polls that may fail to read a new card's identity before it is reported unread
    interval_ms = 50  # least time between two scans
    reinit_ms = 2000  # a reader that failed its self-test is set up again this often

    def __init__(self, reader, enrolment=None):
        self.reader = reader
        self.enrolment = enrolment  # a maus.cards.enrol.Enrolment, or None while the unit has none (no file)
        # per card slot: state, UID length, type, misses, tries, seen (_ULEN.._SEEN), then the UIDs (_UIDS)
        self._st = bytearray(16 * _MAX)
        self._buf = bytearray(_AREA)
        self._id = [None] * (2 * _MAX)  # per card slot: identity, then (at _MAX + slot) the UID hex
        self._on_card = self._card  # bound once: the scan callback allocates nothing
        self._ev = None
        self._next = 0
        self._due = True
        self.paused = False
        self.polls = 0
        self.faults = 0  # polls that ended in an exception (a bug or a bus fault), never raised
        self.reinits = 0  # times the reader had lost its set-up (reset itself) and was set up again

    def pause(self):
        self.paused = True

    def resume(self):
        self.paused = False
        self._due = True

    def poll(self, now_ms):
        """Scan the pad if due. Events: a list of (TAP or REMOVE, identity or None, uid hex), or ()."""
        if self.paused or (not self._due and ticks_diff(now_ms, self._next) < 0):
            return _NONE
        return self._poll(now_ms)

    # poll() is called every main-loop pass and is mostly not due: its frame stays within the 11 words the
    # VM keeps on the C stack (py/objfun.c VM_MAX_STATE_ON_STACK); the scan's larger one comes from the heap.
    def _poll(self, now_ms):
        self._due = False
        self._ev = None
        if not self.reader.ok:  # no chip answering (unplugged, wiring): try again later
            self._next = ticks_add(now_ms, self.reinit_ms)
            self.reader.ok = self._due = self.reader.init()
            return _NONE
        self._next = ticks_add(now_ms, self.interval_ms)
        self.polls += 1
        try:
            r = self.reader
            if not r.check():
                # The chip lost its set-up: it reset itself (a brown-out, a spike) or a bus error hit a
                # register. Set it up again now; if it does not come back, retry after reinit_ms.
                self.reinits += 1
                r.ok = r.init()
                if not r.ok:
                    self._next = ticks_add(now_ms, self.reinit_ms)
                    return _NONE
            st = self._st
            for i in range(_MAX):
                st[_SEEN + i] = 0
            errors = r.errors
            r.scan(self._on_card)
            for i in range(_MAX):
                if st[i] != _FREE and not st[_SEEN + i]:
                    # Not in this walk: a stronger card may mask it. Its own SELECT still reaches it.
                    r.select_known(st, st[_ULEN + i], self._on_card, _UIDS + i * 10)
            if r.errors != errors and not r.self_test():
                r.ok = False  # the chip stopped answering: set it up again after reinit_ms
            for i in range(_MAX):
                if st[i] != _FREE and not st[_SEEN + i]:
                    m = st[_MISS + i] + 1
                    if m < self.miss_limit:
                        st[_MISS + i] = m
                        continue
                    if st[i] == _PRESENT:
                        self._emit(REMOVE, i)
                    st[i] = _FREE
                    self._id[i] = None
                    self._id[_MAX + i] = None
        except Exception:  # noqa: BLE001 - a poll never raises
            self.faults += 1
        ev = self._ev
        return _NONE if ev is None else ev

    def present(self):
        """[(identity or None, uid hex)] of the cards on the pad now (tap reported, no remove yet)."""
        out = []
        for i in range(_MAX):
            if self._st[i] == _PRESENT:
                out.append((self._id[i], self._id[_MAX + i]))
        return out

    def _emit(self, kind, i):
        if self._ev is None:
            self._ev = []
        self._ev.append((kind, self._id[i], self._id[_MAX + i]))

    def _find(self, uid, n):
        st = self._st
        for i in range(_MAX):
            if st[i] == _FREE or st[_ULEN + i] != n:
                continue
            o = _UIDS + i * 10
            for k in range(n):
                if st[o + k] != uid[k]:
                    break
            else:
                return i
        return -1

    def _card(self, uid, n, sak):
        # Called by the driver's scan while the tag is selected.
        st = self._st
        i = self._find(uid, n)
        if i < 0:
            for j in range(_MAX):
                if st[j] == _FREE:
                    i = j
                    break
            else:
                return  # more cards than slots: the extra one is reported when a slot frees
            o = _UIDS + i * 10
            for k in range(n):
                st[o + k] = uid[k]
            st[_ULEN + i] = n
            st[i] = _PENDING
            st[_TRIES + i] = 0
            st[_TYPE + i] = _T_UNKNOWN
        st[_SEEN + i] = 1
        st[_MISS + i] = 0
        if st[i] == _PENDING:
            self._resolve(i, uid, n, sak)

    def _resolve(self, i, uid, n, sak):
        # Once per arrival: the tag type, the identity from its NDEF text, else from the enrolment map.
        st = self._st
        ident = None
        t = st[_TYPE + i]
        if t == _T_UNKNOWN:
            # tagtype and ndef import nothing that is not loaded: each is let go by its own name, with
            # no list of the loaded modules (a moment's) in RAM at the card read, the game's peak.
            try:
                import maus.drivers.tagtype

                t = st[_TYPE + i] = maus.drivers.tagtype.identify(self.reader, sak)
            finally:
                unload(_TAGTYPE)
        if t <= _T_TYPE2_LAST and (t != _T_UNKNOWN or sak == 0):  # Type 2, or SAK 00 and still unknown
            # (a Type 2 tag whose GET_VERSION and re-select both failed: a read failure, tried again)
            r = None
            if t != _T_UNKNOWN:
                try:
                    import maus.drivers.ndef

                    r = maus.drivers.ndef.tag_text(self.reader, self._buf)
                finally:
                    unload(_NDEF)
                if r:  # (maus.cards.tagid.read_identity in two steps: see there)
                    with moment():
                        import maus.cards.ident

                        r = maus.cards.ident.from_text(r) or ""
            if r is None:
                st[_TRIES + i] += 1
                if st[_TRIES + i] < self.read_tries:
                    return  # try again on the next poll
            else:
                ident = r or None
        h = uid_hex(uid, n)
        if ident is None and self.enrolment is not None:
            ident = self.enrolment.get(h)
        self._id[i] = ident
        self._id[_MAX + i] = h
        st[i] = _PRESENT
        self._emit(TAP, i)
