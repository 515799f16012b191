# The ESP32 port's `esp32` module on the unix port, as far as the firmware uses it: the RMT (the latency
# self-test's pulse on the jumper pin, maus.hw.esp32 Hardware.pulse) and the partition API (the running
# image's partition, for `mausbox` status). Backed by maus.sim.wiring. Not deployed to real units.
from micropython import const

_w = None
HEAP_DATA = const(4)
HEAP_EXEC = const(1)
WAKEUP_ALL_LOW = False
WAKEUP_ANY_HIGH = True


def attach(wiring):
    global _w
    _w = wiring


class RMT:
    """The remote-control peripheral as a pulse generator: write_pulses((d0, d1, ...), level) drives the
    pin at `level` for d0 ticks, then the other level for d1, ... then back to idle_level."""

    def __init__(self, channel=None, *, pin=None, resolution_hz=10000000, clock_div=None, idle_level=False,
                 tx_carrier=None, num_symbols=64):
        if pin is None:
            raise TypeError("pin required")
        self._pin = pin
        self._ns = 1000000000 // resolution_hz if clock_div is None else clock_div * 25
        self._idle = 1 if idle_level else 0
        self._busy_until = -1
        pin.value(self._idle)

    def write_pulses(self, duration, data=True):
        w = _w.world
        t = w.now
        level = 1 if data else 0
        drive = self._pin.value
        for d in duration:
            w.at(t, drive, level)
            t += d * self._ns // 1000
            level ^= 1
        w.at(t, drive, self._idle)
        self._busy_until = t

    def wait_done(self, *, timeout=0):
        return _w.world.now >= self._busy_until

    def loop(self, enable):
        pass

    def deinit(self):
        pass


class Partition:
    BOOT = const(0)
    RUNNING = const(1)
    TYPE_APP = const(0)
    TYPE_DATA = const(1)
    # ESP32_GENERIC's partitions-4MiB.csv: (type, subtype, offset, size, label, encrypted)
    _TABLE = ((0, 0, 0x10000, 0x1F0000, "factory", False), (1, 0x81, 0x200000, 0x200000, "vfs", False),
              (1, 2, 0x9000, 0x6000, "nvs", False), (1, 1, 0xF000, 0x1000, "phy_init", False))

    def __init__(self, id, block_size=4096):
        if id in (Partition.BOOT, Partition.RUNNING):
            self._info = Partition._TABLE[0]
        else:
            for p in Partition._TABLE:
                if p[4] == id:
                    self._info = p
                    break
            else:
                raise ValueError("partition not found")
        self._bs = block_size

    @staticmethod
    def find(type=TYPE_APP, subtype=-1, label=None, block_size=4096):
        return [Partition(p[4], block_size) for p in Partition._TABLE
                if p[0] == type and (subtype < 0 or p[1] == subtype) and (label is None or p[4] == label)]

    def info(self):
        return self._info

    def get_next_update(self):
        raise OSError(-261)  # ESP_ERR_NOT_FOUND: the 4 MB image has no OTA partitions

    @staticmethod
    def mark_app_valid_cancel_rollback():
        pass


def wake_on_ext0(pin, level):
    pass


def idf_heap_info(capabilities):
    return [(111936, 0, 0, 0)]
