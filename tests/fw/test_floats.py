# The 32-bit build's floats are the ESP32 image's: single precision (MICROPY_FLOAT_IMPL_FLOAT), so firmware
# arithmetic that would round differently on a board rounds so here too (host/mausbox/mpbuild.py).
import sys


def test_floats_are_single_precision_as_on_the_esp32():
    if sys.implementation.name != "micropython":
        return
    # py/formatfloat.c of 1.28 with MICROPY_FLOAT_IMPL_FLOAT (ESP32_GENERIC sets no format of its own): the
    # shortest repr that reads back as the same single float (MicroPython before 1.26 printed 0.3333333)
    a, b = 1, 3  # worked out at run time, as `1/3` typed at the REPL
    assert repr(a / b) == "0.33333334", (repr(a / b), repr(1 / 3))
    assert repr(2 / 3) == "0.6666667" and repr(0.1) == "0.1"
    assert 1e38 * 10 == float("inf")
    assert 16777216.0 + 1 == 16777216.0  # 24 bits of mantissa
