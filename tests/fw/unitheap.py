# For test_unit_heap_*.py: a whole game on the virtual unit, in the board's heap. The harness caps such a
# file at the stock ESP32-WROOM-32's GC heap plus the measured share of the simulated parts the unit carries
# (host/mausbox/heapbudget.py UNIT_PARTS), so a MemoryError here is one the board would have. Each game is
# its largest set-up (the most players the game allows). The peaks themselves are `make bench` figures
# (bench/bench_heap.py). Under CPython there is no such heap and no framebuf: nothing to check there.
import gc
import json
import os
import sys

ON_MPY = sys.implementation.name == "micropython"


def _play(name):
    repo = os.getenv("MAUSBOX_REPO")
    here = os.getcwd()
    work = "/tmp/mausbox-unitheap-" + "".join("%02x" % b for b in os.urandom(4))
    os.mkdir(work)
    os.chdir(work)
    try:
        acts = []
        with open(repo + "/tests/scenarios/" + name + ".jsonl") as f:
            for line in f:
                line = line.strip()
                if line and line[0] != "#":
                    acts.append(json.loads(line))
        acts.sort(key=lambda a: a["at_ms"])  # stable: same-time actions keep file order
        with open("scenario.jsonl", "w") as f:
            for a in acts:
                f.write(json.dumps(a) + "\n")
        with open(repo + "/boards/sim.json") as f:
            board = json.load(f)
        del acts
        gc.collect()
        from maus.hw import sim

        hw = sim.Hardware(board, scenario="scenario.jsonl")
        import maus.unit

        unit = maus.unit.main(hw=hw)  # a MemoryError anywhere in boot or game fails the test
        assert unit is not None and unit.mode == "end", unit.mode  # the game reached its end screen
        names = [n for n in os.listdir("logs") if n.endswith(".jsonl")]
        assert len(names) == 1, names
        ended = False
        with open("logs/" + names[0]) as f:
            for line in f:
                ended = ended or '"type":"game_end"' in line
        assert ended, "no game_end in the log"
        return unit.last_summary
    finally:
        os.chdir(here)
        _rmtree(work)
        import maus

        for k in list(sys.modules):  # the next game boots a fresh firmware, as after a reset
            if k.startswith("maus."):
                maus.unload(k)
        gc.collect()


def _rmtree(d):
    for n in os.listdir(d):
        p = d + "/" + n
        if os.stat(p)[0] & 0x4000:
            _rmtree(p)
        else:
            os.remove(p)
    os.rmdir(d)


def _expected(name):
    with open(os.getenv("MAUSBOX_REPO") + "/tests/scenarios/" + name + ".expect.json") as f:
        return json.load(f)


def check(name):
    if not ON_MPY:
        return
    s = _play(name)
    want = _expected(name)
    assert {str(k): v for k, v in s["scores"].items()} == want["scores"], (s["scores"], want["scores"])

