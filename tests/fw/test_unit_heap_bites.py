# The boot budget's cap bites: the same boot as test_unit_heap_boot.py, in the same heap, with 20 KB more
# held from power-on (a firmware that took that much more at boot) runs out of memory (tests/fw/unitheap.py).
import sys

from fwtest import raises
from unitheap import check_boot

HEAP_BUDGET = "boot"  # capped at the boot budget, as test_unit_heap_boot.py (tests/conftest.py)

EXTRA = 20000  # bytes: far over the boot budget's 15 % margin (heapbudget.MARGIN) above today's peak


def test_twenty_kilobytes_more_at_boot_run_out_of_memory():
    if sys.implementation.name != "micropython":
        return  # no capped heap under CPython
    e = raises(MemoryError, check_boot, EXTRA)
    assert "allocating 1000 bytes" not in str(e), e  # the firmware ran out, not the ballast's allocation


def test_and_the_same_boot_without_them_fits():
    check_boot(0)  # the check itself is sound: the failure above is the extra 20 KB's
