# mypy: ignore-errors
# The virtual unit's interpreter, as mausbox.sim.serial starts it (argv: those of replserver.py). replserver's module
# code runs to its end at the import, so that its setup code is freed; then its REPL runs. MAUSBOX_SIM_MPY: a folder
# with replserver.mpy, compiled by the bridge: loaded without the parser's temporaries, which compiling the source
# here would leave the unit's heap in pieces with.
import os
import sys

_d = os.getenv("MAUSBOX_SIM_MPY")
if _d:
    sys.path.insert(0, _d)
try:
    import replserver  # it sets sys.path to the unit's own
except ValueError as e:  # an .mpy this interpreter does not load (another MicroPython): the source
    if not _d or ".mpy" not in str(e):
        raise
    sys.path.remove(_d)
    import replserver

sys.modules.pop("replserver", None)  # not a module of the unit's
del _d
replserver._main()
