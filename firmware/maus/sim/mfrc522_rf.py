# The timer and the RF side of the emulated MFRC522 (a mixin of mfrc522_emu.MFRC522Emu):
# transmitting the FIFO, the answers arriving after their frame delay, TAuto timer expiry.
# Times are ns of virtual time; frames take their ISO 14443 bit times at 106 kbit/s.
from micropython import const

from maus.sim.rf_field import Field

# Registers, commands and bits (datasheet names; same values as in mfrc522_emu).
_CommandReg = const(0x01)
_ComIrqReg = const(0x04)
_ErrorReg = const(0x06)
_ControlReg = const(0x0C)
_BitFramingReg = const(0x0D)
_CollReg = const(0x0E)
_TxControlReg = const(0x14)
_TModeReg = const(0x2A)
_TPrescalerReg = const(0x2B)
_TReloadRegH = const(0x2C)
_TReloadRegL = const(0x2D)
_CMD_TRANSMIT = const(0x04)
_TX_IRQ = const(0x40)
_IDLE_IRQ = const(0x10)
_RX_IRQ = const(0x20)
_ERR_IRQ = const(0x02)
_TIMER_IRQ = const(0x01)
_BUFFER_OVFL = const(0x10)
_COLL_ERR = const(0x08)
_VALUES_AFTER_COLL = const(0x80)
_COLL_POS_NOT_VALID = const(0x20)
_T_AUTO = const(0x80)
_FIFO_SIZE = const(64)
_FC_KHZ = const(13560)  # carrier frequency
_ETU_FC = const(128)  # one bit at 106 kbit/s = 128/fc = 9.44 us


def _fc_ns(fc):
    # Carrier cycles to ns (fc * 10**6 // 13560), in two steps so the product stays a small int on a
    # 32-bit port (73.746 ns a cycle; exact to 1 ns for anything shorter than ~14 s).
    return fc * 73 + fc * 746 // 1000


def _frame_fc(bits):
    # Air time of a standard frame of `bits` data bits: SOF, a parity bit per byte, EOF.
    return (1 + bits + bits // 8 + 1) * _ETU_FC


class RFUnit:
    def __init__(self):
        self.regs = bytearray(64)
        self.fifo = bytearray(_FIFO_SIZE)
        self.fifo_n = 0
        self.fifo_r = 0
        self.tx = bytearray(_FIFO_SIZE)
        self.field = Field()
        self.powered = True
        self.now = 0  # ns of virtual time
        self.rf_fc = 0  # carrier cycles spent on frames and frame delays
        self.frames = 0  # frames sent
        self._tx_end = -1
        self._rx_at = -1
        self._rx_end = -1
        self._timer_at = -1
        self._timer_start = -1
        self._rx_n = 0
        self._rx_last = 0
        self._rx_err = 0
        self._rx_coll = 0

    def _field_on(self):
        return self.powered and self.regs[_TxControlReg] & 0x03 != 0

    def _idle(self):
        r = self.regs
        r[_CommandReg] &= 0xF0
        r[_ComIrqReg] |= _IDLE_IRQ

    def _busy(self):
        return self._tx_end >= 0 or self._rx_end >= 0 or self._timer_at >= 0

    # --- timer ------------------------------------------------------------------------------------
    def _timer_period_ns(self):
        r = self.regs
        pre = (r[_TModeReg] & 0x0F) << 8 | r[_TPrescalerReg]
        reload = r[_TReloadRegH] << 8 | r[_TReloadRegL]
        return _fc_ns((2 * pre + 1) * (reload + 1))

    def _start_timer(self, t):
        self._timer_start = t
        self._timer_at = t + self._timer_period_ns()

    def _timer_count(self):
        if self._timer_at < 0:
            return 0
        r = self.regs
        pre = (r[_TModeReg] & 0x0F) << 8 | r[_TPrescalerReg]
        left = self._timer_at - self.now
        return max(0, left * 100 // 7375 // (2 * pre + 1))  # ns to carrier cycles, as a small int

    # --- RF ---------------------------------------------------------------------------------------
    def _transmit(self):
        # Send the FIFO contents; every tag in the field hears the frame and may answer.
        r = self.regs
        bf = r[_BitFramingReg]
        last = bf & 0x07
        align = bf >> 4 & 0x07
        n = self.fifo_n - self.fifo_r
        tx = self.tx
        for i in range(n):
            tx[i] = self.fifo[self.fifo_r + i]
        self.fifo_n = self.fifo_r = 0
        r[_BitFramingReg] = bf & 0x7F
        bits = n * 8 if last == 0 else (n - 1) * 8 + last
        if n == 0:
            bits = 0
        t_end = self.now + _fc_ns(_frame_fc(bits))
        self.rf_fc = (self.rf_fc + _frame_fc(bits)) & 0x3FFFFFFF  # a counter that wraps as ticks do
        self.frames += 1
        self._tx_end = t_end
        cmd = r[_CommandReg] & 0x0F
        if cmd == _CMD_TRANSMIT:
            self._rx_end = -1
            if self._field_on():
                self.field.exchange(tx, bits, 0, 0)  # HLTA and the like: nobody answers
            return
        if r[_TModeReg] & _T_AUTO:
            self._start_timer(t_end)
        if not self._field_on():
            return
        nrx = self.field.exchange(tx, bits, align, r[_CollReg] & _VALUES_AFTER_COLL)
        if nrx == 0:
            return
        coll = self.field.coll
        delay = self.field.delay_fc
        total = align + nrx
        self._rx_n = (total + 7) // 8
        self._rx_last = total & 7
        self._rx_err = _COLL_ERR if coll >= 0 else 0
        pos = align + coll + 1
        if coll < 0 or pos > 32:
            self._rx_coll = _COLL_POS_NOT_VALID | (r[_CollReg] & _VALUES_AFTER_COLL)
        else:
            self._rx_coll = (pos & 0x1F) | (r[_CollReg] & _VALUES_AFTER_COLL)
        self._rx_at = t_end + _fc_ns(delay)
        self._rx_end = self._rx_at + _fc_ns(_frame_fc(nrx))
        self.rf_fc = (self.rf_fc + delay + _frame_fc(nrx)) & 0x3FFFFFFF

    def _update(self):
        # Apply what has happened on the air by now.
        now = self.now
        r = self.regs
        if self._tx_end >= 0 and now >= self._tx_end:
            self._tx_end = -1
            r[_ComIrqReg] |= _TX_IRQ
            if r[_CommandReg] & 0x0F == _CMD_TRANSMIT:
                self._idle()
        if self._rx_at >= 0 and self._timer_at >= 0 and self._rx_at < self._timer_at:
            self._timer_at = -1  # TAuto: the timer stops when an answer starts
        if self._timer_at >= 0 and now >= self._timer_at:
            self._timer_at = -1
            r[_ComIrqReg] |= _TIMER_IRQ
        if self._rx_end >= 0 and now >= self._rx_end:
            self._rx_end = self._rx_at = -1
            n = self._rx_n
            room = _FIFO_SIZE - self.fifo_n
            if n > room:
                n = room
                r[_ErrorReg] |= _BUFFER_OVFL
            for i in range(n):
                self.fifo[self.fifo_n + i] = self.field.rx[i]
            self.fifo_n += n
            r[_ControlReg] = (r[_ControlReg] & 0xF8) | self._rx_last
            r[_ErrorReg] = (r[_ErrorReg] & _BUFFER_OVFL) | self._rx_err
            r[_CollReg] = self._rx_coll
            r[_ComIrqReg] |= _RX_IRQ
            if self._rx_err:
                r[_ComIrqReg] |= _ERR_IRQ
