# Power-on to the idle menu in the heap the boot budget leaves (one process, as a board boots; tests/fw/unitheap.py).
from unitheap import check_boot

HEAP_BUDGET = "boot"  # capped at the boot budget (tests/conftest.py, host/mausbox/heapbudget.py budget_cap)


def test_the_unit_boots_to_its_menu_in_the_boot_budget():
    check_boot()
