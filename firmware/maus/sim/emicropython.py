# The ESP32 port's `micropython` on the unix port: the unix port's, plus what the ESP32 image has on top
# (the emergency exception buffer for handlers: the unix port allocates its exceptions normally). Installed
# as sys.modules["micropython"] by maus.sim.wiring. Not deployed to real units.
from micropython import *  # noqa: F403


def alloc_emergency_exception_buf(size):  # type: ignore[no-redef]  # the stubs have the ESP32's
    pass
