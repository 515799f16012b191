# Runs one firmware test module under MicroPython; the pytest plugin in tests/conftest.py reads the output.
import gc
import sys

name = sys.argv[1]
try:
    mod = __import__(name)
except BaseException as e:  # noqa: BLE001 - an import that fails (a MemoryError too) is the file's result
    print("@@IMPORT-FAILED " + name)
    sys.print_exception(e, sys.stdout)
    raise SystemExit(3) from None
tests = sorted(k for k in dir(mod) if k.startswith("test_"))
for t in tests:
    print("@@TEST " + t)
    gc.collect()
    try:
        getattr(mod, t)()
        print("@@PASS " + t)
    except Exception as e:  # noqa: BLE001 - every failure is reported, the next test still runs
        sys.print_exception(e, sys.stdout)
        print("@@FAIL " + t)
