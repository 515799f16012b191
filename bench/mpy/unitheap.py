# Peak live heap of the unit while a scenario plays, split by race windows and the rest.
import gc
import sys

import maus.unit as U

peak = {"idle": 0, "race": 0, "boot": 0}
count = [0]
orig = U.Unit.step


def step(self):
    count[0] += 1
    if count[0] % 25 == 0:
        gc.collect()
        a = gc.mem_alloc()
        k = "race" if self.race else "idle"
        if a > peak[k]:
            peak[k] = a
    orig(self)


U.Unit.step = step
gc.collect()
peak["boot"] = gc.mem_alloc()
U.main()
print("HEAP", peak["boot"], peak["idle"], peak["race"], count[0])
sys.exit(0)
