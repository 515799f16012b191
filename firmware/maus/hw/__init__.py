# The thin hardware layer: one module per board family builds a Hardware from the board file.
#
# Hardware attributes (None when the part is not fitted):
#   board        the board dict (boards/<name>.json, deployed as /board.json)
#   buttons      Pin objects, player 1 first (active low)
#   levels       callable -> bitmask of buttons that are low now (bit k = player k+1), or None
#   ticks_us, ticks_ms   the clock (wraps at 2**30 on every family)
#   idle(ms)     wait up to ms for something to happen (an IRQ ends the wait early)
#   leds         NeoPixel-like: leds[i] = (r, g, b); leds.write()
#   buzzer       PWM-like: freq(hz), duty_u16(d)
#   display      FrameBuffer subclass with show() (SSD1306 API), or None
#   spi, rfid_cs, rfid_rst   for the MFRC522 driver
#   adc          ADC-like with read_u16() (analog piezo), or None
#   piezo_pin    Pin of a comparator module (digital piezo), or None
#   jumper       output Pin wired to player 1's button for the latency self-test, or None
#   unique_id()  bytes; rtc_load()/rtc_save(bytes) keep a few bytes across soft resets (crash counter)
#   wdt_start(ms), wdt_feed()   the watchdog (machine.WDT): once started it runs until a hard reset
#   wdt_release()   the app has stopped (Ctrl-C): a keeper feeds the watchdog while the REPL has the unit
#   set_clock(rtc)  the wall clock from the host, machine.RTC().datetime() order; wall_clock() reads it
#   spend(us)    sim only: charge virtual time for work the firmware did (no-op on a board)
#   tx_fifo      bytes of the console UART's transmit FIFO, which a console write waits in C to fill (0: a console
#                whose writes do not wait: USB, the virtual unit's pty); the host link paces its frames by it
import json


def load_board(path="board.json"):
    with open(path) as f:
        return json.load(f)


def open_hardware(board, **kw):
    fam = board.get("family")
    if fam == "sim":  # the virtual unit (maus.sim, never on a board)
        import gc

        # With a board's heap to spare (a scenario's 512 KB, not a heap capped at a budget, whose layout the
        # budgets are measured in), the simulator's modules and parts go to the heap's top and the firmware's
        # objects below them: a call whose frame is on the heap (gc_alloc's first fit, searched from the
        # lowest free block) then finds room without walking past the simulator's objects (about 100 KB).
        gc.collect()
        n = gc.mem_free() - 131072  # room up there for them, the qstr pool and their garbage while made
        try:
            low = bytearray(n) if n >= 111936 else None  # (a board's GC heap, heapbudget.BOARD_HEAP)
        except MemoryError:  # the free space is not in one piece: the layout as it comes
            low = None
        from maus.sim import hw as sim

        hw = sim.open_hardware(board, **kw)
        low = None  # noqa: F841 - the room below goes to the firmware
        gc.collect()
        return hw
    from maus.hw import esp32

    return esp32.Hardware(board, **kw)


def keep_watchdog():
    """For boot.py, which runs after every soft reset, also when the host enters the raw REPL (main.py does
    not run then): a watchdog the app started goes on running, so feed it while no app runs."""
    try:
        fam = load_board().get("family")
    except (OSError, ValueError):
        return False  # no board file: no app was ever deployed here, so no watchdog either
    if fam == "sim":
        from maus.sim import hw as sim

        return sim.keep_watchdog()
    from maus.hw import esp32

    return esp32.keep_watchdog()
