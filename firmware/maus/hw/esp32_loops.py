# The poll capture's register loops for an ESP32 board (maus.hw.esp32_setup.build makes them once a boot). Viper: on
# the ESP32 their machine code goes to IRAM and stays there until a soft reset (ports/esp32/main.c
# esp_native_code_commit), so this module is loaded once a boot. A module of its own because a function keeps its
# module's globals, and with them every function of the module, for as long as it lives: the loops live for the
# whole boot (hw.levels, hw.scan), and here they keep ~0.5 KB where, made in esp32_setup, they kept all of its
# ~1.7 KB (measured on the 32-bit unix port; bench/mpy/heapwatch.py counts what they keep as the board's).
import micropython
from micropython import const

_GPIO_IN = 0x3FF4403C  # GPIO_IN_REG, GPIO 0-31 (ESP32)
_GPIO_IN1 = 0x3FF44040  # GPIO_IN1_REG, GPIO 32-39
# Timer group 0's LAC timer, the counter esp_timer (so ticks_us) runs on: ESP-IDF esp_timer_impl_lac.c,
# LACT_TICKS_PER_US = 2; registers in soc/timer_group_reg.h (ESP32 TRM, "Timer Group"): a write to
# TIMG_LACTUPDATE_REG (+0x80) latches the count into TIMG_LACTLO_REG (+0x78). Word indexes below. The
# peripheral has no done bit: ESP-IDF (esp_timer_impl_get_counter_reg) reads LACTLO until it changes, at
# most the divider's count of times (40 at the 80 MHz APB clock); so does the loop below.
_TIMG0 = 0x3FF5F000
_LACT_LO = const(30)
_LACT_UPDATE = const(32)
_LATCH_POLLS = const(40)


def make_levels(board):
    # One read of each GPIO input register, folded into a player bitmask without allocating.
    pins = bytearray(board["buttons"])
    count = len(pins)

    @micropython.viper
    def levels() -> int:
        a = ptr32(_GPIO_IN)[0]  # noqa: F821 - viper builtin
        b = ptr32(_GPIO_IN1)[0]  # noqa: F821
        p = ptr8(pins)  # noqa: F821
        out = 0
        for k in range(int(count)):
            n = p[k]
            if n < 32:
                if not (a >> n) & 1:
                    out |= 1 << k
            elif not (b >> (n - 32)) & 1:
                out |= 1 << k
        return out

    return levels


def make_scan(board):
    # The poll capture (maus.capture.irq.Capture.poll): sample both input registers and the µs counter
    # in a native loop, ~1 µs a pass, until a button in `armed` reads low or max_us pass; out[k] =
    # µs from the call to the pass that saw button k. The scheduler waits meanwhile (native code
    # checks no pending handlers), so nothing but this loop times an edge in the window.
    pins = bytearray(board["buttons"])
    count = len(pins)

    @micropython.viper
    def scan(armed: int, max_us: int, out) -> int:
        g0 = ptr32(_GPIO_IN)  # noqa: F821 - viper builtin
        g1 = ptr32(_GPIO_IN1)  # noqa: F821
        tm = ptr32(_TIMG0)  # noqa: F821
        p = ptr8(pins)  # noqa: F821
        o = ptr32(out)  # noqa: F821
        n = int(count)
        c = tm[_LACT_LO]
        tm[_LACT_UPDATE] = 1
        c0 = tm[_LACT_LO]
        w = 0
        while c0 == c and w < _LATCH_POLLS:  # the latch has not taken the count yet
            c0 = tm[_LACT_LO]
            w += 1
        c = c0
        limit = max_us * 2
        while True:
            a = g0[0]
            b = g1[0]
            tm[_LACT_UPDATE] = 1
            v = tm[_LACT_LO]
            w = 0
            while v == c and w < _LATCH_POLLS:
                v = tm[_LACT_LO]
                w += 1
            c = v
            el = v - c0  # LAC ticks (2 a µs) since the call; wraps after 35 min
            low = 0
            for k in range(n):
                q = p[k]
                if q < 32:
                    if not (a >> q) & 1:
                        low |= 1 << k
                elif not (b >> (q - 32)) & 1:
                    low |= 1 << k
            low &= armed
            if low:
                for k in range(n):
                    if (low >> k) & 1:
                        o[k] = el >> 1
                return low
            if el >= limit:
                return 0

    return scan
