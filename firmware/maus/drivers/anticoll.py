# Finding every tag on the pad (ISO 14443-3 anticollision loop) on top of iso14443a.PCD.
#
# A binary tree walk of ANTICOLLISION frames at each cascade level finds every UID CLn (the tags
# stay READY), then SELECT, the caller's callback, HLTA; tags left behind are woken again with WUPA
# and selected by their known UID. A card whose answer a stronger card masked (no collision to see)
# is found by a REQA after the walk, or selected directly by a UID the caller already knows.
# Nothing here allocates.
from micropython import const

from maus.drivers.iso14443a import COLLISION, ERROR, NO_TAG, OK, PCD

_REQA = const(0x26)
_WUPA = const(0x52)
_CT = const(0x88)  # cascade tag
_MAX_CARDS = const(4)
_SETTLE = const(3)  # scans after a broken exchange that start with HLTA (Presence's miss_limit)
_SWEEP_US = const(400)  # REQA after the walk: an ATQA starts 86 us after the frame (ISO 14443-3 6.2.1.1)


class Scanner(PCD):
    # Its state (made with the chip driver's, mfrc522_setup.make): _settle (scans that start with HLTA),
    # _answered (the last WUPA was), _levels (of the card on_card sees), _found/_found_n (this scan's UIDs).
    _settle: int
    _answered: bool
    _levels: int
    _found: bytearray
    _found_n: bytearray

    def _walk(self, level):
        # Find every UID CLn answering at this level by a binary tree walk with ANTICOLLISION
        # frames only (tags stay READY). Fills self._vals; returns how many were found.
        cl = self._cl
        ws = self._wstack
        depth = 0
        found = 0
        known = 0
        for i in range(5):
            cl[i] = 0
        steps = 0
        while found < _MAX_CARDS and steps < 40 * _MAX_CARDS:
            steps += 1
            st = self._anticoll(level, known)
            if st == COLLISION:
                bit = self.coll_bit
                if depth < _MAX_CARDS:  # remember the 0 branch for later
                    o = depth * 6
                    for i in range(5):
                        ws[o + i] = cl[i]
                    ws[o + (bit >> 3)] &= ~(1 << (bit & 7)) & 0xFF
                    ws[o + 5] = bit + 1
                    depth += 1
                cl[bit >> 3] |= 1 << (bit & 7)  # follow the 1 branch now
                known = bit + 1
                continue
            if st == OK:
                o = found * 5
                for i in range(5):
                    self._vals[o + i] = cl[i]
                found += 1
            elif st == ERROR:
                self.errors += 1
            if depth == 0:
                break
            depth -= 1
            o = depth * 6
            for i in range(5):
                cl[i] = ws[o + i]
            known = ws[o + 5]
        return found

    def scan(self, on_card):
        """Find every tag on the pad (up to 4), selecting each in turn.

        on_card(uid, uid_len, sak) is called while the tag is selected (it may READ/WRITE), then the
        tag is halted. Halted tags answer the next scan's WUPA. Returns the number of tags found.
        """
        try:
            return self._scan(on_card)
        except Exception:  # noqa: BLE001 - a bus fault ends the scan
            self.errors += 1
            return 0

    def _scan(self, on_card):
        if self._settle:
            # A recent scan stopped half way or lost an answer: tags it left READY or ACTIVE
            # would take this WUPA for an error and fall back to IDLE/HALT in silence (NTAG21x
            # 8.4). Any frame does that; HLTA does it without waiting for an answer.
            self._settle -= 1
            self._halt()
        e0 = self.errors
        st = self._request(_WUPA)
        if st != OK:
            if st != NO_TAG or self._answered:
                self._settle = _SETTLE
            self._answered = False
            return 0
        self._answered = True
        q = self._queue
        qn = 1
        q[0] = 0  # the empty path: start at cascade level 1
        fresh = True
        swept = False
        found = 0
        path = self._path
        cl = self._cl
        while found < _MAX_CARDS:
            if qn == 0:
                # Every path done. A card a stronger one masked heard the others' SELECTs and went
                # back to IDLE; REQA wakes only IDLE tags (the ones found are HALT): walk once more.
                if swept or found == 0 or self._request(_REQA, _SWEEP_US) != OK:
                    break
                swept = True
                qn = 1
                q[0] = 0
                fresh = True
            qn -= 1
            o = qn * 16
            levels = q[o]  # CLn values on the path; all but the last are cascade levels
            for i in range(15):
                path[i] = q[o + 1 + i]
            if not fresh:
                # Tags left behind went back to HALT or IDLE: wake them and select the path again.
                if self._request(_WUPA) != OK or not self._replay(levels - 1):
                    self._settle = _SETTLE
                    continue
            fresh = False
            sel = levels - 1  # the level whose CLn is on the path but not yet selected
            while True:
                if sel < 0:
                    if levels >= 3:
                        break
                    nv = self._walk(levels)
                    if nv == 0:
                        break
                    for k in range(1, nv):  # other branches: revisit later from a fresh WUPA
                        if qn < _MAX_CARDS:
                            o = qn * 16
                            q[o] = levels + 1
                            for i in range(levels * 5):
                                q[o + 1 + i] = path[i]
                            for i in range(5):
                                q[o + 1 + levels * 5 + i] = self._vals[k * 5 + i]
                            qn += 1
                    for i in range(5):
                        path[levels * 5 + i] = self._vals[i]
                    sel = levels
                    levels += 1
                for i in range(5):
                    cl[i] = path[sel * 5 + i]
                sak = self._select(sel)
                if sak < 0:
                    self.errors += 1
                    break
                if sak & 0x04:  # cascade bit: the UID goes on at the next level
                    if cl[0] != _CT:
                        self.errors += 1
                        break
                    sel = -1
                    continue
                # Complete: the UID is the CLn bytes without the cascade tags.
                u = self.uid
                n = 0
                for lv in range(levels):
                    s = lv * 5 + (1 if lv < levels - 1 else 0)
                    for i in range(s, lv * 5 + 4):
                        u[n] = path[i]
                        n += 1
                self.uid_len = n
                self.sak = sak
                self._levels = levels
                if not self._seen_before(found, u, n):  # (a card on_card sent back to IDLE, met again)
                    self._remember(found, u, n)
                    found += 1
                    try:
                        on_card(u, n, sak)
                    except Exception:  # noqa: BLE001 - the caller's fault must not stop the scan
                        self.errors += 1
                self._halt()
                break
        if self.errors != e0:
            self._settle = _SETTLE
        return found

    def _remember(self, k, u, n):
        o = k * 10
        for i in range(n):
            self._found[o + i] = u[i]
        self._found_n[k] = n

    def _seen_before(self, found, u, n):
        for k in range(found):
            if self._found_n[k] != n:
                continue
            o = k * 10
            for i in range(n):
                if self._found[o + i] != u[i]:
                    break
            else:
                return True
        return False

    def _replay(self, levels):
        # SELECT the first `levels` cascade levels of self._path again.
        cl = self._cl
        for lv in range(levels):
            for i in range(5):
                cl[i] = self._path[lv * 5 + i]
            sak = self._select(lv)
            if sak < 0 or not sak & 0x04:
                return False
        return True

    def select_known(self, uid, n, on_card, off=0):
        """Wake the pad and SELECT the tag with the UID uid[off:off+n] (4, 7 or 10 bytes) without
        anticollision: a tag that a stronger one masks in every walk still answers its own SELECT.
        on_card(uid, n, sak) runs while it is selected, then it is halted. 1 if it answered, else 0."""
        try:
            levels = 1 if n == 4 else 2 if n == 7 else 3 if n == 10 else 0
            if levels == 0:
                return 0
            path = self._path
            src = off
            for lv in range(levels):
                o = lv * 5
                if lv < levels - 1:
                    path[o] = _CT
                    for i in range(3):
                        path[o + 1 + i] = uid[src + i]
                    src += 3
                else:
                    for i in range(4):
                        path[o + i] = uid[src + i]
                path[o + 4] = path[o] ^ path[o + 1] ^ path[o + 2] ^ path[o + 3]
            if self._request(_WUPA) != OK or not self._reselect_path(levels):
                return 0
            u = self.uid
            for i in range(n):
                u[i] = uid[off + i]
            self.uid_len = n
            self._levels = levels
            try:
                on_card(u, n, self.sak)
            except Exception:  # noqa: BLE001
                self.errors += 1
            self._halt()
            return 1
        except Exception:  # noqa: BLE001
            self.errors += 1
            return 0

    def _reselect_path(self, levels):
        # SELECT every level of self._path (the tags are READY after a REQA/WUPA); sets self.sak.
        if not self._replay(levels - 1):
            return False
        cl = self._cl
        for i in range(5):
            cl[i] = self._path[(levels - 1) * 5 + i]
        sak = self._select(levels - 1)
        if sak < 0 or sak & 0x04:
            return False
        self.sak = sak
        return True
