# UART(1) and UART(2) of the virtual unit's `machine` (maus.sim.vuparts' live world), loaded at the first use of one.
# Not deployed to real units (firmware/manifest.py).
import micropython
from micropython import const

from maus.sim import machine as _machine
from maus.sim.vuparts import clock, wiring

TYPE_CHECKING = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if TYPE_CHECKING:
    from typing import Any  # noqa: F401 - for the type comments

console = None  # type: Any  # vumachine's UART(0, rate): the console's line (set by the bridge)

# --- UART(1) and UART(2) -------------------------------------------------------------------------------------
# ports/esp32/machine_uart.c (v1.28.0): one object per UART (MP_STATE_PORT(machine_uart_objs)), its defaults on a fresh
# init (8N1, txbuf and rxbuf 256, timeouts 0; UART1 rx 9 tx 10, UART2 rx 16 tx 17), its constants, print format and
# flush timeout. The line: a byte is 1 + bits + parity + stop bits at the rate the ESP32's divider makes (ESP-IDF
# uart_ll_set_baudrate/get_baudrate for the ESP32: an 80 MHz APB clock, a divider with a 4-bit fraction). A write
# returns once the bytes are in the 128-byte FIFO (SOC_UART_FIFO_LEN) and the driver's txbuf, blocking while they do
# not fit (uart_write_bytes); flush waits until the last bit is out (uart_wait_tx_done). Bytes arrive, each after its
# own frame time, at every UART whose RX is the sender's TX pin (one GPIO: the GPIO matrix routes a pad to both).
# Not modelled: bits on the pin's level, parity and framing errors, flow control, IRQ_RXIDLE's timer.
_UART_NUM = const(3)  # SOC_UART_NUM on the ESP32
_FIFO = const(128)  # SOC_UART_FIFO_LEN
_APB_HZ = const(80000000)  # UART_SCLK_DEFAULT on the ESP32: the APB clock
_uarts = [None] * _UART_NUM  # type: list[Any]


def _real_baud(baud):
    div = (_APB_HZ << 4) // baud
    return (_APB_HZ << 4) // div if div else baud


class _Irq:
    def __init__(self, u):
        self._u = u

    def flags(self):
        f = self._u._flags
        self._u._flags = 0
        return f

    def trigger(self, t=None):
        return self._u._trigger


class UART:
    INV_TX = const(32)  # ESP-IDF uart_signal_inv_t: UART_SIGNAL_TXD_INV
    INV_RX = const(4)  # UART_SIGNAL_RXD_INV
    INV_RTS = const(64)  # UART_SIGNAL_RTS_INV
    INV_CTS = const(8)  # UART_SIGNAL_CTS_INV
    RTS = const(1)  # UART_HW_FLOWCTRL_RTS
    CTS = const(2)  # UART_HW_FLOWCTRL_CTS
    IRQ_RX = const(1)  # 1 << UART_DATA
    IRQ_RXIDLE = const(0x1000)
    IRQ_BREAK = const(2)  # 1 << UART_BREAK
    _id = 0
    _on = False

    def __new__(cls, id, *args, **kw):
        if type(id) is not int or not 0 <= id < _UART_NUM:
            raise ValueError("UART(%s) does not exist" % (id,))
        if id == 0:
            return console(0, *args, **kw)  # the REPL's UART: the console's line (raises, as on a board)
        self = _uarts[id]
        if self is None:
            self = object.__new__(cls)
            self._id = id
            self._on = False
        return self

    def __init__(self, id, *args, **kw):
        self.init(*args, **kw)
        _uarts[id] = self

    def init(self, baudrate=0, bits=0, parity=None, stop=0, *, tx=None, rx=None, rts=None, cts=None, txbuf=-1,
             rxbuf=-1, timeout=-1, timeout_char=-1, invert=-1, flow=-1):
        w = wiring(_machine)
        self._w = clock()
        if not self._on:  # a fresh init: the object's defaults (the driver is not installed)
            self.bits, self.parity, self.stop, self.rts, self.cts = 8, None, 1, -1, -1
            self.txbuf = self.rxbuf = 256
            self.timeout = self.timeout_char = self.invert = self.flow = 0
            self.tx, self.rx = (10, 9) if self._id == 1 else (17, 16)
            self.baudrate = 115200
            self._trigger = self._flags = 0
            self._handler = None
            self._rx = bytearray()
            self._wire = []  # [bytes, µs its first byte's frame starts, frame ns] on its way to this UART's RX
            self._txe = 0  # when the line has sent what was written
            self._on = True
        else:
            self.flush()  # machine_uart.c: uart_wait_tx_done before changing settings
        if baudrate > 0:
            self.baudrate = _real_baud(baudrate)
        if bits:
            if bits not in (5, 6, 7, 8):
                raise ValueError("invalid data bits")
            self.bits = bits
        if parity is not None:
            self.parity = parity & 1
        if stop:
            if stop not in (1, 2):
                raise ValueError("invalid stop bits")
            self.stop = stop
        for name, v in (("tx", tx), ("rx", rx), ("rts", rts), ("cts", cts)):
            if v is not None:
                setattr(self, name, v if type(v) is int else _machine._pin_num(v))
        if txbuf >= 0:
            self.txbuf = txbuf
        if rxbuf >= 0:
            self.rxbuf = max(rxbuf, 256) if rxbuf else 256  # the IDF's minimum (machine_uart.c: "IDF minimum")
        if timeout >= 0:
            self.timeout = timeout
        if timeout_char >= 0:
            self.timeout_char = timeout_char
        if invert >= 0:
            if invert & ~(UART.INV_TX | UART.INV_RX | UART.INV_RTS | UART.INV_CTS):
                raise ValueError("invalid inversion mask")
            self.invert = invert
        if flow >= 0:
            if flow & ~3:
                raise ValueError("invalid flow control mask")
            self.flow = flow
        # a frame in ns (ints: a float holds a µs time of an hour's run only to 256 µs)
        self._frame_ns = (1 + self.bits + (0 if self.parity is None else 1) + self.stop) * 1000000000 // self.baudrate
        nd = w.node(self.tx)
        nd.out = 0 if self.invert & UART.INV_TX else 1  # the idle line
        nd.update()
        self._rx = bytearray()  # uart_flush_input: what came before is discarded

    def deinit(self):
        self._on = False
        _uarts[self._id] = None

    def __repr__(self):
        s = ("UART(%u, baudrate=%u, bits=%u, parity=%s, stop=%u, tx=%d, rx=%d, rts=%d, cts=%d, txbuf=%u, rxbuf=%u, "
             "timeout=%u, timeout_char=%u, irq=%d" % (
                 self._id, self.baudrate, self.bits, ("None", "1", "0")[0 if self.parity is None else 2 - self.parity],
                 self.stop, self.tx, self.rx, self.rts, self.cts, self.txbuf, self.rxbuf, self.timeout,
                 self.timeout_char, self._trigger))
        if self.invert:
            s += ", invert=" + "|".join(n for n, b in (("INV_TX", 32), ("INV_RX", 4), ("INV_RTS", 64), ("INV_CTS", 8))
                                        if self.invert & b)
        if self.flow:
            s += ", flow=" + "|".join(n for n, b in (("RTS", 1), ("CTS", 2)) if self.flow & b)
        return s + ")"

    # --- sending --------------------------------------------------------------------------------------------
    def _pending(self, now):
        # bytes written and not yet out on the line
        left = self._txe - now
        return (left * 1000 + self._frame_ns - 1) // self._frame_ns if left > 0 else 0

    def write(self, buf):
        if isinstance(buf, str):
            buf = buf.encode()
        data = bytes(buf)
        n = len(data)
        w = self._w
        room = _FIFO + self.txbuf
        now = w.now
        over = self._pending(now) + n - room
        if over > 0:  # uart_write_bytes blocks until the rest fits
            w.spend(over * self._frame_ns // 1000)
            now = w.now
        start = self._txe if self._txe > now else now
        self._txe = start + n * self._frame_ns // 1000
        for u in _uarts:
            if u is not None and u._on and u.rx == self.tx:
                u._wire.append([data, start, self._frame_ns])
        return n

    def flush(self):
        w = self._w
        end = self._txe
        limit = (3 + self.txbuf) * 13000 * 2 // self.baudrate  # machine_uart.c MP_STREAM_FLUSH, in ms
        now = w.now
        if end - now > limit * 1000:
            w.sleep_until(now + limit * 1000)
            raise OSError(110)  # MP_ETIMEDOUT
        if end > now:
            w.sleep_until(end)

    def txdone(self):
        return self._w.now >= self._txe

    def sendbreak(self):
        self.flush()
        self._w.spend(self._frame_ns * 26 // 10000)  # a break: the line held low for more than a frame

    # --- receiving ------------------------------------------------------------------------------------------
    def _arrive(self):
        now = self._w.now
        rx = self._rx
        while self._wire:
            data, t0, fr = self._wire[0]
            k = (now - t0) * 1000 // fr if now > t0 else 0  # frames of it complete by now
            if k <= 0:
                break
            take = data[:k]
            room = self.rxbuf - len(rx)
            rx.extend(take[:room] if room < len(take) else take)  # a full ring buffer drops what comes
            if k < len(data):
                self._wire[0] = [data[k:], t0 + k * fr // 1000, fr]
                break
            self._wire.pop(0)
        if rx and self._trigger & UART.IRQ_RX and self._handler is not None:
            self._flags |= UART.IRQ_RX
            try:
                micropython.schedule(self._handler, self)
            except RuntimeError:
                pass

    def any(self):
        self._arrive()
        return len(self._rx)

    def _wait_for(self, n, first):
        # machine_uart.c read: up to timeout ms for the first byte, then timeout_char ms between bytes
        w = self._w
        ms = self.timeout if first else self.timeout_char
        end = w.now + ms * 1000
        while True:
            self._arrive()
            if len(self._rx) >= n or w.now >= end:
                return
            w.sleep_until(min(end, w.now + 1000))

    def read(self, n=-1):
        self._arrive()
        if not self._rx and self.timeout:
            self._wait_for(1, True)
        if not self._rx:
            return None
        if n < 0:
            n = len(self._rx)
        if len(self._rx) < n and self.timeout_char:
            self._wait_for(n, False)
        out = bytes(self._rx[:n])
        self._rx = self._rx[n:]
        return out

    def readinto(self, buf, n=-1):
        got = self.read(len(buf) if n < 0 else min(n, len(buf)))
        if got is None:
            return None
        buf[:len(got)] = got
        return len(got)

    def readline(self):
        self._arrive()
        i = self._rx.find(b"\n")
        return self.read(i + 1 if i >= 0 else -1)

    def irq(self, handler=None, trigger=0, hard=False):
        if hard:
            raise ValueError("hard IRQ is not supported")
        if handler is not None or trigger:
            if trigger & ~(UART.IRQ_RX | UART.IRQ_RXIDLE | UART.IRQ_BREAK):
                raise ValueError("trigger not allowed")
            self._handler = handler
            self._trigger = trigger
        return _Irq(self)

