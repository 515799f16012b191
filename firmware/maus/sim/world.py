# Virtual time and the ESP32's soft-IRQ scheduler, for the virtual unit and the tests.
#
# Time only moves when the firmware spends it (a bus transfer, a display refresh, a main-loop pass)
# or sleeps. External actions (a button edge, a card on the pad, a knock) happen at their own time
# while the firmware is busy; their pin IRQs are queued like the ESP32 port queues soft IRQs (8
# entries, the rest silently dropped) and the handlers run when the firmware next reaches a bytecode
# boundary — after the long call that delayed them — and read the clock then, as on the board.
from micropython import const

_MASK = const(0x3FFFFFFF)
QUEUE_LEN = const(8)


class World:
    def __init__(self, t0_us=0):
        self.now = t0_us  # virtual µs since boot, unbounded (ticks are masked to 2**30)
        self._actions = []  # sorted [t_us, seq, fn, arg]
        self._seq = 0
        self.queue = []  # pending soft IRQs: (handler, pin)
        self.dropped = 0
        self.irqs_run = 0
        self.busy_us = 0  # time spent in simulated C calls

    def ticks_us(self):
        return self.now & _MASK

    def ticks_ms(self):
        return (self.now // 1000) & _MASK

    # --- external actions -------------------------------------------------------------------------
    def at(self, t_us, fn, arg=None):
        """Run fn(arg) at virtual time t_us (the outside world acting: a finger, a card, a knock)."""
        self._seq += 1
        item = [t_us, self._seq, fn, arg]
        a = self._actions
        i = len(a)
        while i > 0 and (a[i - 1][0] > t_us or (a[i - 1][0] == t_us and a[i - 1][1] > item[1])):
            i -= 1
        a.insert(i, item)

    def next_action(self):
        return self._actions[0][0] if self._actions else -1

    def pending_actions(self):
        return len(self._actions)

    def _apply_until(self, t_us):
        a = self._actions
        while a and a[0][0] <= t_us:
            t, _, fn, arg = a.pop(0)
            if t > self.now:
                self.now = t
            fn(arg)

    # --- the soft-IRQ scheduler ---------------------------------------------------------------------
    def irq(self, handler, pin):
        if len(self.queue) >= QUEUE_LEN:
            self.dropped += 1
        else:
            self.queue.append((handler, pin))

    def run_irqs(self):
        q = self.queue
        while q:
            h, pin = q.pop(0)
            self.irqs_run += 1
            h(pin)

    # --- the firmware spends or waits for time ------------------------------------------------------
    def spend(self, us):
        """The firmware is inside a call for `us` µs: the world goes on meanwhile; queued handlers run after."""
        end = self.now + us
        a = self._actions
        if a and a[0][0] <= end:
            self._apply_until(end)
        self.now = end
        self.busy_us += us
        if self.queue:
            self.run_irqs()

    def sleep_until(self, t_us):
        """Idle until t_us, or earlier when an IRQ handler ran (it would wake the loop). Returns True if woken."""
        if self.queue:
            self.run_irqs()
            return True
        while True:
            nxt = self.next_action()
            if nxt < 0 or nxt > t_us:
                if t_us > self.now:
                    self.now = t_us
                return False
            self._apply_until(nxt)
            if self.queue:
                self.run_irqs()
                return True


class SimPin:
    """A GPIO with a pull-up, driven low by a button (or by the firmware when an output)."""

    IN = 1
    OUT = 3
    PULL_UP = 1
    IRQ_FALLING = 2
    IRQ_RISING = 1

    def __init__(self, world, num, level=1):
        self.world = world
        self.num = num
        self.level = level
        self.handler = None
        self.trigger = 0

    def value(self, v=None):
        if v is None:
            return self.level
        self.set_level(1 if v else 0)
        return None

    def __call__(self, v=None):
        return self.value(v)

    def on(self):
        self.set_level(1)

    def off(self):
        self.set_level(0)

    def irq(self, handler=None, trigger=3, hard=False):
        if hard:
            raise TypeError("hard IRQs are not supported")  # like the ESP32 port's Pin.irq
        self.handler = handler
        self.trigger = trigger if handler is not None else 0

    def set_level(self, level):
        if level == self.level:
            return
        self.level = level
        if self.handler is not None:
            edge = self.IRQ_FALLING if level == 0 else self.IRQ_RISING
            if self.trigger & edge:
                self.world.irq(self.handler, self)
