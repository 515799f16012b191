"""bench/memerror_site.py reads gdb's report of a failed allocation: its size, the C frames and the Python frames."""

import importlib.util

from conftest import ROOT

# gdb's output for the MemoryError that issue 27's last pull-at-peak failures were (abridged)
OUT = """EV {"seq":274,"t":64224,"type":"tap"}
MEMERROR-FAIL 261
#0  m_malloc_fail (num_bytes=261) at ../../py/runtime.c:1689
#1  0x5655fa5a in m_malloc (num_bytes=<optimized out>) at ../../py/malloc.c:88
#2  0x56571a12 in load_raw_code (reader=reader@entry=0xffffa324, context=0xf7c82e20) at ../../py/persistentcode.c:320
#3  0x56584894 in do_load (module_obj=module_obj@entry=0xf7c82e20, file=file@entry=0xffffa3c0) at ../../py/builtinimport.c:249
MEMERROR-TB maus.sim.rf_field:1 make_tag
MEMERROR-TB maus.sim.hw:1 tap
MEMERROR-TB tests/fw/unitheap.py:43 _run
PULLPEAK memory
MEMERROR-TB maus.unit.core:1 step
"""


def test_each_failed_allocation_is_read_with_its_frames():
    spec = importlib.util.spec_from_file_location("memerror_site", ROOT / "bench" / "memerror_site.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (size, c_frames, py), = mod.sites(OUT)
    assert size == 261
    assert c_frames[0].startswith("m_malloc_fail") and c_frames[2] == "load_raw_code (../../py/persistentcode.c:320)"
    assert c_frames[3].startswith("do_load")
    assert py == ["maus.sim.rf_field:1 make_tag", "maus.sim.hw:1 tap", "tests/fw/unitheap.py:43 _run"]
    assert mod.sites("no failure\n") == []
