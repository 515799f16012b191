# mypy: ignore-errors
# The virtual unit's interpreter, as mausbox.sim.serial starts it (argv: those of replserver.py). replserver's module
# code runs to its end at the import, so that its setup code is freed; then its REPL runs.
import sys

import replserver

sys.modules.pop("replserver", None)  # not a module of the unit's
replserver._main()
