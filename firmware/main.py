# The unit's app: boot self-test, menu, games, the host service (maus/unit.py).
import maus.unit

maus.unit.main()
