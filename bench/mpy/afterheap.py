# A whole scenario on the virtual unit in the heap it is given (bench/heapkit.py capped()), then the heap's
# state after the game: the unit is kept (as on a board, it is still running its end screen).
import gc

import maus.unit
import micropython

unit = maus.unit.main()
gc.collect()
micropython.mem_info()
