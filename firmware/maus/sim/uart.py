# The console UART of a scenario run (virtual time): a host on the USB line, as the board's firmware sees it.
# Scenario actions {"host": {request}} frame a request (docs/protocol.md) and queue it; as mausbox does, one
# goes on the wire once the one before is answered. Its bytes reach the unit's receive buffer one per
# character time, and a buffer the unit leaves full drops what comes, as the ESP32's does. What the unit writes is read back as frames: the final answers are counted by
# their result (ok, or the error's code), so a test sees every request answered and nothing else.
import binascii
import json

from micropython import const

_RX_BUF = const(260)  # ports/esp32/mphalport.c: stdin_ringbuf_array[260] (a ring: 259 bytes usable)
_CHAR_US = const(87)  # one byte at 115,200 baud: a start bit, 8 data bits, a stop bit
_HDR = const(25)  # "#MB1R ssss llll cccccccc "
_WAIT_US = const(3000000)  # the host's wait for a quick answer (mausbox.link.bounds: a few seconds)
_KEEP = const(400)  # an answer's payload kept to read its result (status, hello); longer ones: counted only
_TX_FIFO = const(128)  # the ESP32 UART's transmit FIFO (SOC_UART_FIFO_LEN); the REPL UART has no driver buffer
_TICK_US = const(10000)  # a FreeRTOS tick (CONFIG_FREERTOS_HZ=100)


class Uart:
    def __init__(self, world):
        self.world = world
        self.rx = bytearray(_RX_BUF)
        self._get = 0
        self._n = 0  # bytes in the receive buffer
        self._wire = []  # [bytes, arrival of its first byte in virtual µs, bytes of it delivered]
        self._queue = []  # requests not yet sent
        self._asked = -1  # virtual µs the request on the line was sent; -1: none waits for its answer
        self.timeouts = 0  # requests given up on: no answer within _WAIT_US
        self.sent = 0  # requests put on the wire
        self.dropped = 0  # bytes lost to a full receive buffer
        self.results = {}  # "ok" / an error code -> final answers with it
        self.answers = 0
        self.unread = 0  # final answers the host's side had no memory to read (counted in answers only)
        self.parts = 0  # P and D frames
        self._seq = 0
        self._hdr = bytearray(_HDR)
        self._hn = 0
        self._want = 0  # payload bytes of the frame being read
        self._body = bytearray(_KEEP)
        self._bn = 0
        self._kind = 0
        self._txe = 0  # virtual µs by which the transmit FIFO has sent what it holds
        self.tx_blocked_us = 0  # time the unit's writes held it in C, waiting for room in the FIFO
        if hasattr(world, "on_rebase"):
            # the world's clock moves back every ~4.5 minutes: left in the old clock, a request on the wire
            # stopped arriving (and the wait for its answer stopped counting) for the shift's 268 s
            world.on_rebase.append(self._rebased)

    def _rebased(self, shift):
        if self._asked >= 0:
            self._asked = max(0, self._asked - shift)  # (-1 says none waits)
        for w in self._wire:
            w[1] -= shift
        self._txe -= shift

    # --- the host's side ----------------------------------------------------------------------------------
    def request(self, req):
        """Frame the request (a dict with "op") and put it on the wire behind what is on it now."""
        self._seq = (self._seq + 1) & 0xFFFF
        payload = json.dumps(req).encode()
        head = b"1Q %04x %04x" % (self._seq, len(payload))
        crc = binascii.crc32(payload, binascii.crc32(head))
        data = b"#MB" + head + b" %04x%04x " % (crc >> 16, crc & 0xFFFF) + payload + b"\n"
        self._queue.append(data)
        self.sent += 1

    def _arrive(self):
        now = self.world.now
        # As mausbox does: one request at a time, the next once the answer is in (or given up after _WAIT_US)
        if self._asked >= 0 and now - self._asked > _WAIT_US:
            self.timeouts += 1
            self._asked = -1
        if self._asked < 0 and self._queue:
            self._wire.append([self._queue.pop(0), now, 0])
            self._asked = now
        rx = self.rx
        while self._wire:
            w = self._wire[0]
            data = w[0]
            due = (now - w[1]) // _CHAR_US + 1  # bytes of it on the line by now
            if due > len(data):
                due = len(data)
            while w[2] < due:
                if self._n < _RX_BUF - 1:
                    rx[(self._get + self._n) % _RX_BUF] = data[w[2]]
                    self._n += 1
                else:
                    self.dropped += 1
                w[2] += 1
            if w[2] < len(data):
                return
            self._wire.pop(0)

    # --- the unit's side (HostWake's inp, out and ready) ----------------------------------------------------
    def ready(self):
        self._arrive()
        return self._n > 0

    def readinto(self, b):
        self._arrive()
        k = 0
        while k < len(b) and self._n:
            b[k] = self.rx[self._get]
            self._get = (self._get + 1) % _RX_BUF
            self._n -= 1
            k += 1
        return k if k else None

    def write(self, b):
        self.tx(len(b))
        for c in b:
            self._byte(c)
        return len(b)

    def tx(self, n):
        """The time the unit's write of n bytes takes in C: the ESP32 port's console write (mp_hal_stdout_tx_strn ->
        uart_stdout_tx_strn, ports/esp32/uart.c) fills the 128-byte transmit FIFO and, while the rest does not fit,
        sleeps a FreeRTOS tick (ulTaskNotifyTake(pdFALSE, 1)) and fills it again; it returns once all is in the
        FIFO. No soft IRQ handler runs meanwhile (they run at the VM's next branch). A pin ISR's notification wakes
        that sleep early (mp_hal_wake_main_task_from_isr), which ends the call sooner only if the rest fits by
        then: not modelled (the call ends at a tick)."""
        w = self.world
        now = w.now
        end = self._txe
        if end < now:
            end = now
        t = now
        while True:
            room = _TX_FIFO - (end - t + _CHAR_US - 1) // _CHAR_US
            if n <= room:
                break
            n -= room
            end += room * _CHAR_US
            t = (t // _TICK_US + 1) * _TICK_US  # the next tick
            if end < t:
                end = t
        self._txe = end + n * _CHAR_US
        if t > now:
            self.tx_blocked_us += t - now
            w.spend(t - now)

    def _byte(self, c):
        hn = self._hn
        if hn < _HDR:
            if hn < 3 and c != b"#MB"[hn]:
                self._hn = 1 if c == 0x23 else 0
                if self._hn:
                    self._hdr[0] = c
                return
            self._hdr[hn] = c
            self._hn = hn + 1
            if self._hn == _HDR:
                self._kind = self._hdr[4]
                self._want = int(bytes(self._hdr[11:15]), 16)
                self._bn = 0
            return
        if self._want:
            if self._bn < _KEEP:
                self._body[self._bn] = c
            self._bn += 1
            self._want -= 1
            return
        self._hn = 0  # the newline that ends it
        if self._kind == 0x52:  # "R"
            self.answers += 1
            self._asked = -1
            # An error answer is short and says "error"; a long one (status) may put "ok" past what is kept.
            # The host reads it, not the unit: out of memory here (the firmware's heap at a game's peak) it is
            # counted apart and never raised into the unit's write (a board's UART write allocates nothing).
            try:
                body = bytes(self._body[:min(self._bn, _KEEP)])
                i = body.find(b'"error": "')
                key = "ok"
                if i >= 0:
                    j = body.find(b'"', i + 10)
                    key = body[i + 10:j].decode() if j > 0 else "unreadable"
                body = None
                self.results[key] = self.results.get(key, 0) + 1
            except MemoryError:
                self.unread += 1
        elif self._kind in (0x50, 0x44):  # "P", "D"
            self.parts += 1
            if self._asked >= 0:  # the host's wait counts from the last part of its answer (docs/protocol.md)
                self._asked = self.world.now
