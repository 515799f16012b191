# The virtual unit's watchdog in virtual time: the ESP32's machine.WDT semantics, and the keeper the firmware
# hands it to when the app stops (maus/sim/hw.py). MicroPython only (the simulated display needs framebuf):
# tests/host/test_watchdog.py runs it under the capped 32-bit interpreter, with the real-time checks.
from fwtest import raises
from maus.sim import hw as sim

BOARD = {"name": "t", "family": "sim", "buttons": [4, 5], "parts": {}}


def _hw():
    sim._wdt = sim._Watchdog()  # a fresh chip for each test (one per process on the unit)
    return sim.Hardware(BOARD, scenario=None)


def _idle(hw, ms, feed=False):
    # by virtual time, not by calls: with the ESP32 timing model one idle() sleeps 10 ms at most
    end = hw.world.now + ms * 1000
    while hw.world.now < end:
        hw.idle(100)
        if feed:
            hw.wdt_feed()


def check_a_fed_watchdog_never_bites():
    hw = _hw()
    hw.wdt_start(8000)
    _idle(hw, 60000, feed=True)
    assert sim._wdt.bites == 0


def check_a_hung_main_loop_is_reset_within_its_timeout():
    hw = _hw()
    hw.wdt_start(8000)
    t0 = hw.world.now
    e = raises(sim.WatchdogReset, _idle, hw, 20000)  # the loop goes on idling but never feeds
    bit_after = hw.world.now - t0
    assert 8000000 < bit_after <= 8100000 < 10000000, bit_after
    assert isinstance(e, SystemExit) and sim._wdt.bites == 1
    assert sim._wdt.ms == 0  # the reset stopped it: a fresh boot starts without one


def check_it_cannot_be_slowed_or_stopped():
    hw = _hw()
    hw.wdt_start(8000)
    hw.wdt_start(30000)  # a longer timeout is refused: the first one stays
    assert sim._wdt.ms == 8000
    hw.wdt_start(4000)  # a shorter one is allowed
    raises(sim.WatchdogReset, _idle, hw, 6000)


def check_the_keeper_feeds_once_the_app_lets_go():
    hw = _hw()
    hw.wdt_start(8000)
    _idle(hw, 3000, feed=True)
    hw.wdt_release()  # the app stopped (Ctrl-C): the REPL has the unit
    _idle(hw, 30000)
    assert sim._wdt.bites == 0
    hw.wdt_start(8000)  # the app starts again and takes the watchdog over: no keeper any more
    raises(sim.WatchdogReset, _idle, hw, 9000)


if __name__ == "__main__":
    for name in sorted(k for k in dir() if k.startswith("check_")):
        globals()[name]()
        print("ok", name)
