# ESP32 and ESP32-S3 boards: the only module that imports `machine`.
import time

import machine
import micropython
from micropython import const

micropython.alloc_emergency_exception_buf(100)

TYPE_CHECKING = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if TYPE_CHECKING:  # maus.hw.esp32_setup sets the parts
    from array import array
    from typing import Callable

    from machine import ADC, PWM, SPI, Pin
    from neopixel import NeoPixel

    from maus.drivers.ssd1306 import SSD1306_I2C

# The watchdog keeper's hardware timer (0..3 on the ESP32; nothing else here uses 3). Never 2: on MicroPython
# v1.28 machine.Timer(2) resets timer group 0, which drives the us counter (ticks_us) and the watchdog: every
# reaction time would jump and the watchdog would no longer guard the unit. tests/host/test_timer_trap.py fails if any firmware
# file takes timer 2.
_KEEPER_TIMER = 3
_RTC_WDT = 2  # RTC memory byte: the watchdog's timeout in s while one runs (bytes 0-1: the crash counter)
_LOOK_US = const(1000)  # idle() with a host session on: the sim's time between looks at the console (spend)


class Hardware:
    # Made by maus.hw.esp32_setup.build (bare annotations: the compiler keeps nothing of them)
    adc: "ADC | None"  # the piezo's input (analog mode)
    buttons: "list[Pin]"  # by player id - 1
    buzzer: "PWM | None"
    display: "SSD1306_I2C | None"
    jumper: "Pin | None"  # the latency self-test's output
    leds: "NeoPixel | None"
    levels: "Callable[[], int] | None"  # the buttons held down, a bit each (ESP32 family: a register loop)
    # the poll capture's register loop: scan(armed, max_us, out) -> the buttons seen low (out[k]: button k's us)
    scan: "Callable[[int, int, array[int]], int] | None"
    piezo_pin: "Pin | None"  # the piezo comparator's output (digital mode)
    problems: "list[str]"
    rfid_cs: "Pin | None"
    rfid_rst: "Pin | None"
    spi: "SPI | None"  # the reader's bus
    ticks_ms: "Callable[[], int]"
    ticks_us: "Callable[[], int]"
    # The REPL UART's transmit FIFO (SOC_UART_FIFO_LEN): the console write (ports/esp32/uart.c uart_stdout_tx_strn)
    # stays in C, soft IRQs held off, until the rest of what it was given fits in it. (USB consoles: maus.host.frame console)
    tx_fifo = 128

    def __init__(self, board, **kw):
        # The parts are made by maus.hw.esp32_setup, loaded for that once a boot and let go (docs/build.md
        # section 7), with the register loops' module (maus.hw.esp32_loops: viper code, which the ESP32 commits
        # to IRAM at each load).
        self.board = board
        self._wdt = None
        self._rmt = None
        import maus
        from maus.hw.esp32_setup import build

        build(self, board)

        maus.unload("maus.hw.esp32_setup")
        maus.unload("maus.hw.esp32_loops")  # (the loops keep what of it they need: its globals)

    def window(self, is_open):
        pass

    def pulse(self, delay_us, low_us):
        """The latency self-test's edge: the RMT drives the jumper low delay_us from now, for low_us, while
        the CPU runs the race loop (docs/capture.md). The RMT's own start delay is measured by the test."""
        if self._rmt is None:
            import esp32

            self._rmt = esp32.RMT(pin=self.jumper, resolution_hz=1000000, idle_level=True)
        self._rmt.write_pulses((delay_us, low_us), True)  # high for delay_us, low for low_us, then idle high

    def idle(self, ms, console=None):
        # console: a host session's console poller (maus.unit.core HostWake.waker): the wait ends once it has
        # bytes. The REPL UART's receive interrupt only fills the stdin ring (ports/esp32/uart.c) and does not
        # wake a task waiting in poll, which would sleep a whole FreeRTOS tick (10 ms), so it is looked at each
        # ms: a request is read within 1 ms, as a main-loop pass each ms did, in a tenth of the passes. Between
        # looks the wait spins in bytecode (pin handlers run at its branches within µs), not in time.sleep_ms(1):
        # that is mp_hal_delay_us, which runs no handler in its last 155 µs, and a press in 15 % of a host
        # session's idle time got its first edge up to ~160 µs late (issue 27: the season's capture p99 with a
        # host polling). A delay that short is a busy loop on the port too. spend: the sim's time.
        # Without a host session the wait spins too, for the same reason: time.sleep_ms(ms) up to a FreeRTOS tick is
        # all mp_hal_delay_us (ports/esp32/mphalport.c mp_hal_delay_ms), so each of the main loop's idles had the
        # blind 155 µs at its end, and ~1.3 % of the presses outside the armed piezo got their first edge 100-175 µs
        # late, with or without a host polling: the season's capture p99 (issue 27). It was a busy loop in C, it is
        # one in bytecode (the sim's time spent in one call).
        if ms <= 0:
            machine.idle()
            return
        us = (ms if ms < 10 else 10) * 1000
        u0 = time.ticks_us()
        while True:
            if console is not None:
                for _ in console.ipoll(0):
                    return
            d = time.ticks_diff(time.ticks_us(), u0)
            if d >= us:
                return
            machine.idle()  # (other tasks at the main task's priority)
            d = us - d
            self.spend(d if console is None or d < _LOOK_US else _LOOK_US)

    def spend(self, us):
        pass

    def unique_id(self):
        return machine.unique_id()

    def rtc_load(self):
        try:
            return machine.RTC().memory()
        except Exception:
            return b""

    def rtc_save(self, data):
        try:
            machine.RTC().memory(data)
        except Exception:
            pass

    def wdt_start(self, ms):
        self._wdt = machine.WDT(timeout=ms)
        _keeper(self._wdt, ms, False)
        _rtc_mark(ms)

    def wdt_feed(self):
        if self._wdt is not None:
            self._wdt.feed()

    def wdt_release(self):
        global _keep
        _keep = True

    def set_clock(self, rtc):
        machine.RTC().datetime(rtc)

    def wall_clock(self):
        # None until the clock was set (the RTC starts in 2000 after power-up)
        t = time.localtime()
        return t if t[0] >= 2024 else None

    def reset(self):
        machine.reset()


# The watchdog keeper. machine.WDT cannot be stopped and survives a soft reset; the REPL does not run
# main.py after a raw-REPL soft reset (mpremote does one), so without help every host session would end
# in a watchdog reset. A machine.Timer callback runs in MicroPython's scheduler, which also runs while the
# REPL waits for input (ports/esp32/mphalport.c: mp_hal_stdin_rx_chr -> MICROPY_EVENT_POLL_HOOK); it feeds
# only once the app has let go (Ctrl-C), so an app that hangs is still reset.
_timer = None
_dog = None
_keep = False


def _feed(_t):
    if _keep:
        _dog.feed()


def _keeper(dog, ms, keep):
    global _timer, _dog, _keep
    _dog = dog
    _keep = keep
    if _timer is None:
        _timer = machine.Timer(_KEEPER_TIMER)
    _timer.init(mode=machine.Timer.PERIODIC, period=max(100, ms // 4), callback=_feed)


def _rtc_mark(ms):
    # RTC memory outlives a soft reset (and a watchdog reset: then boot.py restarts one, harmlessly fed).
    try:
        rtc = machine.RTC()
        m = bytearray(rtc.memory())
        while len(m) <= _RTC_WDT:
            m.append(0)
        m[_RTC_WDT] = min(255, max(1, ms // 1000))
        rtc.memory(m)
    except Exception:  # noqa: BLE001 - a board without RTC memory keeps the old behaviour
        pass


def keep_watchdog():
    try:
        m = machine.RTC().memory()
    except Exception:  # noqa: BLE001
        return False
    if len(m) <= _RTC_WDT or not m[_RTC_WDT]:
        return False
    ms = m[_RTC_WDT] * 1000
    _keeper(machine.WDT(timeout=ms), ms, True)
    return True
