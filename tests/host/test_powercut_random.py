"""Power cuts at random points of longer games (512-byte blocks, every second cut tears its write) and
during boot recovery itself, on the real MicroPython unix port (see test_powercut.py).
"""

from powercutkit import campaign


def test_random_cuts_in_longer_games():
    # 300 here keeps `make test` fast; `make bench` runs the full 1,000 (powercut.random_1000_cuts).
    s = campaign("random", "256", "800", "300")
    assert s["cuts"] == 300
    assert s["lost"] == 0 and s["mount_failures"] == 0 and s["crashes"] == 0 and s["bad"] == 0


def test_power_cuts_during_boot_recovery():
    # At 12 points of a game's own power cut (every 30th write/erase), every write/erase of the recovery that
    # follows is cut too; the next boot must still recover, losing nothing that had been flushed. `make bench`
    # cuts at every 7th (bench_logs.py powercut.cuts_during_recovery).
    s = campaign("recovery", "96", "60", "30")
    assert s["runs"] > 100 and s["cuts"] == s["runs"]
    assert s["lost"] == 0 and s["mount_failures"] == 0 and s["crashes"] == 0 and s["bad"] == 0
