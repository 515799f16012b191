# Mausbox firmware: the unit's MicroPython application.
# Pure modules (rules, scoring, logs, catalogs) never import `machine`; hardware lives in maus.hw.
VERSION = "0.1.0"


def call_unloaded(modname, fn, *args):
    """modname.fn(*args), then the module is unloaded again unless someone else already held it: for
    code needed once (validators, catalog builders), so its RAM comes back."""
    import sys

    held = modname in sys.modules
    mod = __import__(modname, None, None, (fn,))
    try:
        return getattr(mod, fn)(*args)
    finally:
        if not held:
            sys.modules.pop(modname, None)
            pkg, _, name = modname.rpartition(".")
            parent = sys.modules.get(pkg)
            if parent is not None and hasattr(parent, name):
                delattr(parent, name)
