# The timer and the RF side of the emulated MFRC522 (a mixin of mfrc522_emu.MFRC522Emu):
# transmitting the FIFO, the answer arriving bit by bit after its frame delay, the timer.
# Times are ns of virtual time (small ints: see MFRC522Emu._rebase); frames take their ISO 14443 bit
# times at 106 kbit/s.
from micropython import const

from maus.sim.rf_field import Field

# Registers, commands and bits (datasheet names; same values as in mfrc522_emu).
_CommandReg = const(0x01)
_ComIrqReg = const(0x04)
_WaterLevelReg = const(0x0B)
_ErrorReg = const(0x06)
_ControlReg = const(0x0C)
_BitFramingReg = const(0x0D)
_CollReg = const(0x0E)
_RxModeReg = const(0x13)
_TxControlReg = const(0x14)
_RxThresholdReg = const(0x18)
_DemodReg = const(0x19)
_RFCfgReg = const(0x26)
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
_HI_ALERT_IRQ = const(0x08)
_LO_ALERT_IRQ = const(0x04)
_BUFFER_OVFL = const(0x10)
_COLL_ERR = const(0x08)
_PARITY_ERR = const(0x02)
_PROTOCOL_ERR = const(0x01)
_VALUES_AFTER_COLL = const(0x80)
_COLL_POS_NOT_VALID = const(0x20)
_T_AUTO = const(0x80)
_T_AUTO_RESTART = const(0x10)
_RX_MULTIPLE = const(0x04)
_T_PRESCAL_EVEN = const(0x10)
_FIFO_SIZE = const(64)  # datasheet 8.3
_ETU_FC = const(128)  # one bit at 106 kbit/s = 128/fc = 9.44 us (ISO 14443-2 8.1)
_ETU_NS = const(9439)
_TIMER_STOP_BITS = const(5)  # TAuto: the timer stops after the 5th received bit (datasheet table 106)
_TIMER_MAX_FC = const(7000000)  # ~516 ms: longer periods (a corrupted TPrescaler) are cut to keep ns small ints


def _fc_ns(fc):
    # Carrier cycles to ns (fc * 10**6 // 13560 = 73.746 ns a cycle), in steps that stay small ints on
    # a 32-bit port for fc up to _TIMER_MAX_FC.
    return fc * 73 + (fc // 1000) * 746 + (fc % 1000) * 746 // 1000


def _frame_fc(bits):
    # Air time of a standard PCD frame of `bits` data bits: SOF, a parity bit per byte, EOF.
    return (1 + bits + bits // 8 + 1) * _ETU_FC


class RFUnit:
    def __init__(self):
        self.regs = bytearray(64)
        self.fifo = bytearray(_FIFO_SIZE)  # a ring: fifo_n bytes from fifo_r
        self.fifo_n = 0
        self.fifo_r = 0
        self.tx = bytearray(_FIFO_SIZE)
        self.field = Field()
        self.powered = True
        self.now = 0  # ns of virtual time
        self.rf_fc = 0  # carrier cycles spent on frames and frame delays
        self.frames = 0  # frames sent
        self._pd = False  # soft power-down (the chip's CommandReg PowerDown), or waking from it
        self._coll_parity = 0  # the chip variant (MFRC522Emu sets them)
        self._collpos_rxalign = 1
        self._rf_reset()

    def _rf_reset(self):
        self._tx_end = -1  # a frame is on the air until then
        self._rx_at = -1  # an answer's SOF starts then (-1: none coming)
        self._rx_end = -1  # and its EOF ends then
        self._rx_stop = -1  # TAuto: the timer stops then (5th bit received), -1 if it never does
        self._rx_n = 0  # bytes of the answer (RxAlign included)
        self._rx_done = 0  # of them already in the FIFO
        self._rx_last = 0
        self._rx_err = 0
        self._rx_coll = 0
        self._timer_at = -1  # the running timer reaches zero then

    # --- the FIFO (datasheet 8.3): a 64-byte ring ----------------------------------------------------
    def _fifo_push(self, v):
        self.fifo[(self.fifo_r + self.fifo_n) & 63] = v
        self.fifo_n += 1
        if _FIFO_SIZE - self.fifo_n <= self.regs[_WaterLevelReg]:
            self.regs[_ComIrqReg] |= _HI_ALERT_IRQ  # 9.3.1.5: HiAlertIRq stores the event

    def _fifo_pop(self):
        v = self.fifo[self.fifo_r]
        self.fifo_r = (self.fifo_r + 1) & 63
        self.fifo_n -= 1
        if self.fifo_n <= self.regs[_WaterLevelReg]:
            self.regs[_ComIrqReg] |= _LO_ALERT_IRQ
        return v

    def _field_on(self):
        return self.powered and not self._pd and self.regs[_TxControlReg] & 0x03 != 0

    def _idle(self):
        r = self.regs
        r[_CommandReg] &= 0xF0
        r[_ComIrqReg] |= _IDLE_IRQ

    # --- timer (datasheet 8.5, tables 106-113) -----------------------------------------------------
    def _timer_div(self):
        r = self.regs
        pre = (r[_TModeReg] & 0x0F) << 8 | r[_TPrescalerReg]
        return 2 * pre + (2 if r[_DemodReg] & _T_PRESCAL_EVEN else 1)  # ftimer = 13.56 MHz / div

    def _start_timer(self, t):
        r = self.regs
        fc = self._timer_div() * ((r[_TReloadRegH] << 8 | r[_TReloadRegL]) + 1)
        if fc > _TIMER_MAX_FC:
            fc = _TIMER_MAX_FC
        self._timer_at = t + _fc_ns(fc)

    def _timer_count(self):
        if self._timer_at < 0:
            return 0
        left = self._timer_at - self.now
        if left <= 0:
            return 0
        return min(0xFFFF, (left // 737) * 10 // self._timer_div())  # ns to carrier cycles to ticks

    # --- RF ---------------------------------------------------------------------------------------
    def _transmit(self):
        # Send the FIFO contents; every tag in the field hears the frame and may answer.
        r = self.regs
        bf = r[_BitFramingReg]
        last = bf & 0x07
        align = bf >> 4 & 0x07
        n = self.fifo_n
        tx = self.tx
        for i in range(n):
            tx[i] = self._fifo_pop()
        r[_BitFramingReg] = bf & 0x7F  # StartSend done
        bits = n * 8 if last == 0 else (n - 1) * 8 + last
        if n == 0:
            bits = 0
        t_end = self.now + _fc_ns(_frame_fc(bits))
        self.rf_fc = (self.rf_fc + _frame_fc(bits)) & 0x3FFFFFFF  # a counter that wraps as ticks do
        self.frames += 1
        self._tx_end = t_end
        self._rx_at = self._rx_end = self._rx_stop = -1
        if r[_TModeReg] & _T_AUTO:
            self._start_timer(t_end)  # TAuto: "at the end of the transmission in all communication modes"
        cmd = r[_CommandReg] & 0x0F
        if not self._field_on():
            return
        f = self.field
        f.min_amp = (r[_RxThresholdReg] >> 4) * 2
        f.coll_level = r[_RxThresholdReg] & 0x07
        f.gain = r[_RFCfgReg] >> 4 & 0x07
        if cmd == _CMD_TRANSMIT:
            f.exchange(tx, bits, 0, 0)  # HLTA and the like: the receiver is off, nobody is heard
            return
        nrx = f.exchange(tx, bits, align, r[_CollReg] & _VALUES_AFTER_COLL)
        if nrx == 0:
            return
        delay = f.delay_fc
        err = 0
        coll = f.coll
        if nrx < 0:  # a broken SOF: ProtocolErr, no data
            nrx = 0
            err = _PROTOCOL_ERR
        if coll >= 0:
            err |= _COLL_ERR
            if self._coll_parity:
                err |= _PARITY_ERR  # the chip variant that flags the collided byte's parity too
        if f.parity_err:
            err |= _PARITY_ERR
        total = align + nrx
        self._rx_n = (total + 7) // 8 if nrx else 0
        self._rx_done = 0
        self._rx_last = total & 7 if nrx else 0
        self._rx_err = err
        # CollPos counts data bits from 1 (32 reads as 0); whether the RxAlign offset is part of it
        # the datasheet leaves open (CollReg, 9.3.1.15): the chip variant says.
        pos = coll + 1 + (align if self._collpos_rxalign else 0)
        if coll < 0 or pos > 32:
            self._rx_coll = _COLL_POS_NOT_VALID | (r[_CollReg] & _VALUES_AFTER_COLL)
        else:
            self._rx_coll = (pos & 0x1F) | (r[_CollReg] & _VALUES_AFTER_COLL)
        self._rx_at = t_end + _fc_ns(delay)
        self._rx_end = self._rx_at + _fc_ns((f.periods + 1) * _ETU_FC)  # the EOF closes the frame
        if f.periods >= _TIMER_STOP_BITS and not r[_RxModeReg] & _RX_MULTIPLE:
            self._rx_stop = self._rx_at + _TIMER_STOP_BITS * _ETU_NS
        self.rf_fc = (self.rf_fc + delay + (f.periods + 1) * _ETU_FC) & 0x3FFFFFFF

    def _update(self):
        # Apply what has happened on the air (and in the timer) by now.
        now = self.now
        r = self.regs
        if self._tx_end >= 0 and now >= self._tx_end:
            self._tx_end = -1
            r[_ComIrqReg] |= _TX_IRQ
            if r[_CommandReg] & 0x0F == _CMD_TRANSMIT:
                self._idle()
        if self._timer_at >= 0:
            stop = self._rx_stop
            if stop >= 0 and stop < self._timer_at:
                if now >= stop:
                    self._timer_at = -1  # TAuto: stopped by the 5th received bit
                    self._rx_stop = -1
            elif now >= self._timer_at:
                r[_ComIrqReg] |= _TIMER_IRQ
                if r[_TModeReg] & _T_AUTO_RESTART:
                    self._start_timer(self._timer_at)
                    if self._timer_at <= now:
                        self._timer_at = now + 1000
                else:
                    self._timer_at = -1
        if self._rx_at >= 0 and now >= self._rx_at:
            if now >= self._rx_end:
                self._rx_bytes(self._rx_n)
                self._rx_at = self._rx_end = self._rx_stop = -1
                r[_ControlReg] = (r[_ControlReg] & 0xF8) | self._rx_last
                r[_ErrorReg] |= self._rx_err
                r[_CollReg] = self._rx_coll
                r[_ComIrqReg] |= _RX_IRQ
                if r[_ErrorReg]:
                    r[_ComIrqReg] |= _ERR_IRQ
            else:
                # The receiver fills the FIFO as the bytes come in (a byte and its parity bit: 9 bits).
                k = ((now - self._rx_at) // _ETU_NS - 1) // 9
                if k > self._rx_n:
                    k = self._rx_n
                self._rx_bytes(k)

    def _rx_bytes(self, k):
        rx = self.field.rx
        while self._rx_done < k:
            if self.fifo_n >= _FIFO_SIZE:
                self.regs[_ErrorReg] |= _BUFFER_OVFL
            else:
                self._fifo_push(rx[self._rx_done])
            self._rx_done += 1
