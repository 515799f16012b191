# A phase switch (maus.unit.core Unit._switch), loaded for it and let go again (its code need not stay in RAM while a
# game plays): the phase before let go with every module it loaded, the next one loaded (Unit._switch enters it once
# this module has gone).
import gc

from maus import loaded, moment, unload_since


def shift(u, name, arg):
    """-> the next phase's module (u.phase), for Unit._switch to enter."""
    if name == "join" and u.host is not None and u.host.svc is not None:
        u.host._mod.rest(u.host)  # a game is chosen: an idle host service goes now (maus.host.service rest)
    if u._mark is not None:
        unload_since(u._mark)  # (this module too: it is not in the mark, and goes when it returns)
    gc.collect()  # the phase before is garbage now: its RAM is free before the next one loads
    if name == "join" and arg not in u.named:  # a game chosen for the first time since the boot
        with moment():
            import maus.unit.names

            maus.unit.names.chosen(u, arg)
    u._mark = loaded()
    ph = u.phase = __import__("maus.unit." + name, None, None, ("enter",))
    return ph
