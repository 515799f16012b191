# Wrapping tick arithmetic, identical on every port.
# The ESP32's ticks_us() wraps at 2**30; the unix port wraps much later, so simulated and test
# clocks mask to 2**30 and all code uses these helpers: the wrap is exercised everywhere.
from micropython import const

PERIOD = const(0x40000000)  # 2**30
_MASK = const(0x3FFFFFFF)
_HALF = const(0x20000000)  # ticks_diff is valid within +-2**29


def ticks_diff(a, b):
    # Signed a - b, correct across one wrap.
    return ((a - b + _HALF) & _MASK) - _HALF


def ticks_add(t, delta):
    return (t + delta) & _MASK


def wrap(t):
    return t & _MASK
