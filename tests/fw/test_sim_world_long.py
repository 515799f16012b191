# The simulator's world after hours of virtual time (a season of games in one process): what it does at each step
# allocates nothing, as on the board. Its sum of the µs spent in C calls (busy_us, which nothing read) passed 2**30
# late in a season and became a long int: each bus transfer or flash write then allocated one, a race window
# filled the heap with them and collected (bench_season: 16 collections in races of game 89's M is for Mouse C).
import gc


def test_c_calls_allocate_nothing_however_long_the_world_has_run():
    if not hasattr(gc, "mem_alloc"):
        return  # MicroPython's heap (this runs there)
    from maus.sim.world import World

    w = World(0)
    for _ in range(3):  # 1.6e9 µs of C calls (27 minutes)
        w.spend(1 << 29)
        w.now = 0  # (the clock itself is kept small by the virtual unit's rebase)
    gc.collect()
    a = gc.mem_alloc()
    for _ in range(200):
        w.spend(50)
    assert gc.mem_alloc() - a == 0, gc.mem_alloc() - a
