# Virtual time and the ESP32's soft-IRQ scheduler, for the virtual unit and the tests.
#
# Time only moves when the firmware spends it (a bus transfer, a display refresh, a main-loop pass)
# or sleeps. External actions (a button edge, a card on the pad, a knock) happen at their own time
# while the firmware is busy; their pin IRQs are queued like the ESP32 port queues soft IRQs (8
# entries, the rest silently dropped) and the handlers run when the firmware next reaches a bytecode
# boundary and read the clock then, as on the board.
#
# World(model=Esp32Timing()) adds the ESP32's timing (docs/capture.md, "The ESP32 timing model"):
# handlers are dispatched at the next VM branch after the ISR, one at a time, each costing its run
# time; spend() is a C call that holds every handler off; run() is bytecode; sleep_until() is
# time.sleep_ms() with its blind tail. Without a model, the old ideal timing (handlers run at once).
import gc

from micropython import const

_MASK = const(0x3FFFFFFF)
QUEUE_LEN = const(8)  # MICROPY_SCHEDULER_DEPTH in ports/esp32/mpconfigport.h
_REBASE_AT = const(0x20000000)  # now >= 2**29: shift the clock down, so now stays a small int
_REBASE_US = const(268000000)  # the shift: whole ms (ticks_ms stays in step), < 2**28


class Esp32Timing:
    """The ESP32 timing model: ONE table, every figure with its source (docs/capture.md repeats it).
    Times in µs on an ESP32-WROOM-32E at 240 MHz running MicroPython 1.28 (ESP-IDF 5.x)."""

    # GPIO edge -> CPU interrupt -> gpio_isr_service -> machine_pin_isr_handler: mp_sched_schedule() and
    # mp_hal_wake_main_task_from_isr() (ports/esp32/machine_pin.c): an estimate from published ESP-IDF
    # GPIO interrupt latencies at 240 MHz (1.5-3 µs through the GPIO ISR service).
    isr_us = 2
    # Pending handlers run only at a VM branch (py/vm.c, pending_exception_check after a jump), one
    # Python callback per check (py/scheduler.c, mp_sched_run_pending): uniform 0..branch_us after the
    # ISR while bytecode runs. ~20 bytecodes between branches at ~0.3 µs each (bytecode_x below).
    branch_us = 6
    # Inside mp_hal_delay_us the scheduler is checked every loop pass (esp_timer_get_time + compare).
    sleep_gap_us = 1
    # mp_hal_delay_us (ports/esp32/mphalport.c): pend_overhead = 150 and this_overhead = 5, so no
    # pending handler runs in the last 155 µs of a delay. sleep_ms(ms) with ms <= the FreeRTOS tick
    # (10 ms, CONFIG_FREERTOS_HZ=100, the ESP-IDF default the port keeps) is all mp_hal_delay_us.
    sleep_tail_us = 155
    # The capture handler on the board: scheduler call, the handler (its edge inlined), up to its ticks_us()
    # read (entry), and the whole call. The host's cost (`make bench`: capture.handler_cost, ~1.5 µs)
    # times bytecode_x, entry about a third of it.
    handler_entry_us = 12
    handler_us = 35
    # MicroPython bytecode on the ESP32 at 240 MHz against this x86-64 host: ~20x slower (upstream
    # tests/perf_bench figures for esp32 vs unix; the self-test's handler figure checks it on a board).
    bytecode_x = 20
    # The poll capture's viper loop (maus/hw/esp32.py scan): two GPIO_IN reads, a LAC timer latch and
    # read (APB register accesses ~0.1-0.2 µs each), a mask and a compare: one pass ~1 µs.
    poll_pass_us = 1
    # Flash (ESP32-WROOM-32E: 4 MB SPI NOR; XMC/GigaDevice/Winbond 32 Mbit datasheets): page program
    # tPP typ 0.6-0.7 ms (max 2.4-3 ms) per 256-byte page, 4 KB sector erase tSE typ 45-50 ms (max
    # 300-400 ms). While ESP-IDF writes or erases flash the cache is off and non-IRAM interrupts are
    # held off (ESP-IDF "SPI Flash API: concurrency constraints"); the port installs the GPIO ISR
    # service with flags 0, i.e. not in IRAM (machine_pin.c: gpio_install_isr_service(0)).
    flash_page_prog_us = 700
    flash_sector_erase_us = 45000
    flash_block = 4096  # littlefs block = one erase sector on the port's vfs partition
    # One littlefs sync (lfs_file_sync) programs the file's data pages and commits its metadata:
    # one more page program; the metadata pair is compacted (an erase) when its 4 KB fill up,
    # about every 40 commits of ~100 bytes.
    lfs_commits_per_compaction = 40
    # A GC pause: mark (live data) + sweep (the whole heap). py/gc.c's sweep walks every block's
    # allocation table entry; marking follows live objects. ~1 ms fixed + 20 µs per KB of heap +
    # 40 µs per KB live: ~5.7 ms for the 109 KB heap with 64 KB live, in line with the 3-10 ms reported
    # for ESP32_GENERIC (the self-test prints the board's own gc_us). Charged for the firmware's own
    # collections (hw.collect) and for one a race window would force (maus.hw.sim).
    gc_base_us = 1000
    gc_us_per_heap_kb = 20
    gc_us_per_live_kb = 40
    heap_kb = 109  # 111,936 bytes (host/mausbox/heapbudget.py BOARD_HEAP); PSRAM boards: megabytes
    # the unit's live heap in a game on the board, an estimate: the game's peak (`make bench`:
    # mausgeflippt.heap_live_peak_in_random_games, 40 KB) plus the shell, drivers and buffers
    live_kb = 64
    # Free heap the unit has at a reveal on the board, after the window's own collection: heap_kb less
    # live_kb is ~45 KB; 16 KB leaves room for fragmentation. A window that allocates more would collect
    # inside it (maus.hw.sim counts it; `make bench` prints the most a window allocated).
    window_room_kb = 16
    # I2C at 400 kHz: an SSD1306 128x64 frame is 1 KB + addressing, ~9 bits a byte: ~23 ms (the port's
    # machine.I2C blocks until the transfer ends). SPI at 10 MHz to the MFRC522: ~1 µs a byte plus
    # the call; an RFID poll is ~30 register accesses at ~50 µs each of MicroPython (maus/hw/sim.py).

    def __init__(self, seed=1):
        self._r = (seed % 65536) or 1

    def rand(self, hi):
        """0..hi (inclusive), a small LCG: small ints only (no allocation on a 32-bit port)."""
        self._r = (self._r * 75 + 74) % 65537
        return self._r % (hi + 1)

    def gc_pause_us(self):
        return self.gc_base_us + self.gc_us_per_heap_kb * self.heap_kb + self.gc_us_per_live_kb * self.live_kb


class World:
    def __init__(self, t0_us=0, model=None, rebase=False):
        self.now = t0_us  # virtual µs (since boot, less the rebased shift)
        self.model = model
        self.rebase = rebase  # keep now below 2**29 (the virtual unit: runs for hours)
        self.shifted = 0  # µs taken off now by rebasing (a scenario's time = now + shifted)
        self.rebased = 0
        self.on_rebase = []  # callables(shift_us): holders of world times shift theirs
        self._off = 0  # ticks_us = (now + _off) mod 2**30
        self._room = _MASK  # now <= _room: ticks_us = now + _off, no wrap (all small ints)
        self._moff = 0
        self._mroom = _MASK
        self._actions = []  # sorted [t_us, seq, fn, arg]
        self._seq = 0
        # pending soft IRQs: a preallocated ring (handler, pin, time it may run)
        self._qh = [None] * QUEUE_LEN
        self._qp = [None] * QUEUE_LEN
        self._qt = [0] * QUEUE_LEN
        self._qi = 0
        self.qlen = 0
        self.dropped = 0
        self.irqs_run = 0
        self.window = False  # a race window is open (set by maus.capture.RaceWindow through the hardware)
        self.window_flash_writes = 0  # flash writes while a window was open (must stay 0)
        self.timer_events = 0  # of the pending actions, hardware timers' next expiries (machine.Timer): not the world's
        self.window_gcs = 0  # garbage collections while a window was open (must stay 0)
        self.quiet = False  # no console line for them (a benchmark that writes in windows on purpose)
        self.flash_writes = 0
        self.flash_bytes = 0
        self._flash_fill = 0  # bytes into the current data block
        self._commits = 0
        self.gcs = 0
        # 30 attributes: 29 would fill their table exactly (MicroPython grows one only when it is full), and
        # a method looked up on a full table (self.spend: the instance's table first) walks every slot.
        self._spare = None
        self._spare2 = None  # (was busy_us, a µs sum nobody read: a long int, allocated at each C call, once past 2**30)

    # --- the clock ----------------------------------------------------------------------------------
    def ticks_us(self):
        n = self.now
        if n <= self._room:
            return n + self._off
        return (n - self._room - 1) & _MASK

    def ticks_ms(self):
        n = self.now // 1000
        if n <= self._mroom:
            return n + self._moff
        return (n - self._mroom - 1) & _MASK

    def _rebase(self):
        # now -= R everywhere: the clock reads the same ticks, scheduled times keep their distance.
        r = _REBASE_US
        self.now -= r
        self.shifted += r
        self.rebased += 1
        lim = _MASK - r + 1
        self._off = self._off - lim if self._off >= lim else self._off + r
        self._room = _MASK - self._off
        rm = r // 1000
        lim = _MASK - rm + 1
        self._moff = self._moff - lim if self._moff >= lim else self._moff + rm
        self._mroom = _MASK - self._moff
        for a in self._actions:
            a[0] -= r
        for i in range(QUEUE_LEN):
            self._qt[i] -= r
        for fn in self.on_rebase:
            fn(r)

    def _check_rebase(self):
        # At the end of a call that moved time: a time the caller computed for the call stays right.
        while self.rebase and self.now >= _REBASE_AT:
            self._rebase()

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
        """The ISR: mp_sched_schedule() of the handler, or dropped when the queue is full."""
        if self.qlen >= QUEUE_LEN:
            self.dropped += 1
            return
        k = (self._qi + self.qlen) % QUEUE_LEN
        self._qh[k] = handler
        self._qp[k] = pin
        m = self.model
        self._qt[k] = self.now + (m.isr_us if m is not None else 0)
        self.qlen += 1

    def _pop(self):
        k = self._qi
        h = self._qh[k]
        p = self._qp[k]
        self._qh[k] = self._qp[k] = None
        self._qi = (k + 1) % QUEUE_LEN
        self.qlen -= 1
        return h, p

    def run_irqs(self):
        """Run every queued handler now (ideal timing; with a model each costs its time)."""
        m = self.model
        while self.qlen:
            if m is None:
                h, pin = self._pop()
                self.irqs_run += 1
                h(pin)
            else:
                self._dispatch(self.now + m.rand(m.branch_us))

    def _dispatch(self, t):
        # One handler from the head of the queue, started at t (>= its ISR time): it reads the clock
        # handler_entry_us in and holds the CPU for handler_us. Edges meanwhile queue behind it.
        m = self.model
        h, pin = self._pop()
        t += m.handler_entry_us
        self._apply_until(t)
        if t > self.now:
            self.now = t
        self.irqs_run += 1
        h(pin)
        t += m.handler_us - m.handler_entry_us
        self._apply_until(t)
        if t > self.now:
            self.now = t

    # --- the firmware spends or waits for time ------------------------------------------------------
    def spend(self, us):
        """The firmware is inside a C call for `us` µs (a bus transfer, a flash write): the world goes on
        meanwhile; queued handlers run after it, at the next bytecode branch."""
        end = self.now + us
        a = self._actions
        if a and a[0][0] <= end:
            self._apply_until(end)
        self.now = end
        if self.qlen:
            self.run_irqs()
        if self.now >= _REBASE_AT:  # (the test in _check_rebase: no call on the bus transfers' path)
            self._check_rebase()

    def run(self, us):
        """The firmware runs `us` µs of bytecode: with a model, handlers run at the next branch after
        their ISR, and the bytecode's own work is delayed by the time they take. Ideal: like spend()."""
        m = self.model
        if m is None:
            self.spend(us)
            return
        end = self.now + us
        while True:
            nxt = self._actions[0][0] if self._actions else -1
            if self.qlen:
                ready = self._qt[self._qi]
                if ready < self.now:
                    ready = self.now
                ready += m.rand(m.branch_us)
                if ready <= end and (nxt < 0 or ready <= nxt):
                    t0 = self.now if self.now > ready else ready
                    self._dispatch(t0)
                    end += self.now - t0  # the bytecode waited for the handler
                    continue
            if nxt < 0 or nxt > end:
                break
            self._apply_until(nxt)
        if end > self.now:
            self.now = end
        if self.now >= _REBASE_AT:
            self._check_rebase()

    def sleep_until(self, t_us):
        """Idle until t_us. Ideal: returns True as soon as an IRQ handler ran (it would wake the loop).
        With a model this is time.sleep_ms(): handlers run inside it, except in its blind tail (they
        run at the first branch after it returns), and it always sleeps to the end (returns False)."""
        m = self.model
        if m is None:
            if self.qlen:
                self.run_irqs()
                return True
            while True:
                nxt = self.next_action()
                if nxt < 0 or nxt > t_us:
                    if t_us > self.now:
                        self.now = t_us
                    return False
                self._apply_until(nxt)
                if self.qlen:
                    self.run_irqs()
                    return True
        a = self._actions
        if not self.qlen and (not a or a[0][0] > t_us):  # nothing happens meanwhile (the loop below, in short)
            if t_us > self.now:
                self.now = t_us
            if self.now >= _REBASE_AT:
                self._check_rebase()
            return False
        blind = t_us - m.sleep_tail_us
        while True:
            nxt = self._actions[0][0] if self._actions else -1
            if self.qlen:
                ready = self._qt[self._qi]
                if ready < self.now:
                    ready = self.now
                ready += m.rand(m.sleep_gap_us)
                if ready <= blind and (nxt < 0 or ready <= nxt):
                    self._dispatch(ready)
                    continue
            if nxt < 0 or nxt > t_us:
                break
            self._apply_until(nxt)
        if t_us > self.now:
            self.now = t_us
        self._check_rebase()
        return False

    # --- registers: what the poll capture reads (maus.hw.esp32 reads the chip's) ----------------------
    def gpio_in(self, pins):
        """GPIO_IN_REG as the pins make it: bit n = level of GPIO n."""
        v = 0
        for p in pins:
            if p.level:
                v |= 1 << p.num
        return v

    def levels(self, buttons):
        """Bitmask of buttons that are low (bit k = player k+1): what one register read folds to (each button
        on a GPIO of its own). Every main-loop pass reads it: no call to gpio_in, one walk down the list."""
        out = 0
        k = len(buttons)
        while k:
            k -= 1
            if not buttons[k].level:
                out |= 1 << k
        return out

    def scan(self, buttons, armed, max_us, out):
        """The poll capture's loop (maus.hw.esp32 scan, a viper loop there): sample the input register
        and the µs counter every poll_pass_us, holding the scheduler off, until a button in `armed` (a
        player bitmask) reads low or max_us pass. -> the bitmask seen low; out[k] = µs from the call to
        the sample that saw button k. Samples between the world's events are skipped: they read the same."""
        m = self.model
        step = m.poll_pass_us if m is not None else 1
        t0 = self.now
        end = t0 + max_us
        t = t0
        while True:
            low = self.levels(buttons) & armed
            if low:
                for k in range(len(buttons)):
                    if low >> k & 1:
                        out[k] = t - t0
                self.spend(t + step - self.now)  # the pass that saw it; then queued handlers run
                return low
            nxt = self.next_action()
            if nxt < 0 or nxt >= end:
                self.spend(end - self.now)
                return 0
            if nxt < t + step:
                nxt = t + step
            t = t0 + (nxt - t0 + step - 1) // step * step  # the first sample at or after the event
            if t > end:
                t = end
            self._apply_until(t)
            self.now = t

    # --- the flash ---------------------------------------------------------------------------------
    def flash_write(self, nbytes):
        """A littlefs write + sync of nbytes (one log record): the flash is programmed (and erased when
        a block fills) with GPIO interrupts held off: a C call of the modelled length."""
        self.flash_writes += 1
        self.flash_bytes += nbytes
        if self.window:
            self.window_flash_writes += 1
            if not self.quiet:
                print("SIM flash write in a race window: %d bytes" % nbytes)  # scenario tests look for it
        m = self.model
        if m is None:
            return
        us = m.flash_page_prog_us * ((nbytes + 255) // 256 + 1)  # data pages + the metadata commit
        self._flash_fill += nbytes
        if self._flash_fill >= m.flash_block:
            self._flash_fill -= m.flash_block
            us += m.flash_sector_erase_us
        self._commits += 1
        if self._commits >= m.lfs_commits_per_compaction:
            self._commits = 0
            us += m.flash_sector_erase_us
        self.spend(us)

    def collected(self):
        """A garbage collection ran (maus.hw.sim): it stops the world for the board's pause."""
        self.gcs += 1
        if self.window:
            self.window_gcs += 1
            if not self.quiet:
                print("SIM garbage collection in a race window")
        m = self.model
        if m is not None:
            self.spend(m.gc_pause_us())


class FlashFile:
    """A file on the simulated flash: its bytes reach the flash at flush time (littlefs commits on sync),
    each flush a World.flash_write (timed, and counted inside race windows)."""

    def __init__(self, f, world):
        self.f = f
        self.world = world
        self._n = 0

    def write(self, b):
        self._n += len(b)
        return self.f.write(b)

    def flush(self):
        self.f.flush()
        if self._n:
            self.world.flash_write(self._n)
            self._n = 0

    def close(self):
        self.flush()
        self.f.close()


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
        v = 1 if v else 0
        if self.handler is None:
            self.level = v  # set_level without an IRQ to raise: the RFID chip select, twice a bus transfer
        else:
            self.set_level(v)
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


# The virtual unit's pool for the firmware's names (maus.hw.sim.FW_QSTRS says why; maus.hw.open_hardware calls it).
def qstr_room(n):
    """Intern throwaway names until a pool with room for n more has just been allocated; once a process
    (the firmware package keeps the mark: another Hardware, or a tool that made room itself, skips it)."""
    import maus

    if getattr(maus, "qstr_room", 0) >= n:
        return
    gc.collect()
    gc.disable()  # a collection inside the loop would hide the pool's allocation
    # The heap in use: mem_current (a counter) where the port keeps one, else mem_alloc (a walk of the whole heap's
    # table, once a name: ~1,000 times). A name's own allocations stay under 200 bytes, the pool is 7 bytes a name.
    used = getattr(__import__("micropython"), "mem_current", gc.mem_alloc)
    try:
        i = 0
        a = used()
        while True:
            hasattr(qstr_room, "_sim_q%d" % i)  # interns the name
            i += 1
            b = used()
            if b - a >= 7 * n:  # a pool of >= n entries (7 bytes each) was allocated
                maus.qstr_room = n  # type: ignore[attr-defined]
                return
            a = b
    finally:
        gc.enable()
