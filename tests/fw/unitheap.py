# For test_unit_heap_*.py: the virtual unit boots, or plays a whole game, in the heap a board's budget
# leaves it. Each such file says HEAP_BUDGET = "game" (or "boot"): the harness caps it at that budget with
# its 15 % margin plus the virtual unit's simulator share (host/mausbox/heapbudget.py budget_cap), so a
# firmware that outgrows the budget fails here with a MemoryError. The unit is laid out as `mausbox deploy`
# lays it out (board.json with its board.ok); each game is its largest set-up (the most players the game
# allows). The peaks themselves are `make bench` figures (bench/bench_heap.py). Under CPython there is no
# such heap and no framebuf: nothing to check there.
import gc
import json
import os
import sys

ON_MPY = sys.implementation.name == "micropython"


def _run(name, logs=0, ballast=0, host=None):
    """Boot the virtual unit on scenario `name` (tests/scenarios, or None: a quiet minute at the menu) and
    let it run it; -> (the unit, the game_end records of its logs, which must be `logs` files). ballast:
    bytes held while the unit runs, as a firmware that took that much more would hold them."""
    repo = os.getenv("MAUSBOX_REPO")
    here = os.getcwd()
    # Taken first, in blocks of 1,000 bytes, and held through the run (as a firmware's own objects would be);
    # at the board's heap also what a board holds that the virtual unit does not load (heapbudget.BOARD_ONLY,
    # tests/fw/test_board_only.py: nothing, since the virtual unit runs the board's maus.hw.esp32)
    ballast += int(os.getenv("MAUSBOX_BOARD_ONLY") or 0)
    held = [bytearray(1000) for _ in range(-(-ballast // 1000))]  # noqa: F841
    work = "/tmp/mausbox-unitheap-" + "".join("%02x" % b for b in os.urandom(4))
    os.mkdir(work)
    os.chdir(work)
    try:
        _write_scenario(repo, name, host)  # nothing of it stays in the heap: the unit reads its file
        _deploy_board(repo + "/boards/sim.json")
        with open("board.json") as f:
            board = json.load(f)
        gc.collect()
        from maus.hw import open_hardware

        hw = open_hardware(board, scenario="scenario.jsonl")  # as the virtual unit builds it (the layout too)
        if host is not None and hasattr(host, "arm"):
            host.arm(hw)  # a host that asks as the line allows (sweeping)
        import maus.unit

        unit = maus.unit.main(hw=hw)  # a MemoryError anywhere in boot or game fails the test
        held = None  # the board's share goes with the game: reading its log back is the test's, not a board's
        gc.collect()
        names = [n for n in os.listdir("logs") if n.endswith(".jsonl")]
        assert len(names) == logs, names
        ends = []
        for n in names:
            with open("logs/" + n) as f:
                for line in f:
                    if '"type":"game_end"' in line:
                        ends.append(line)
        return unit, ends
    finally:
        held = None  # noqa: F841 - the ballast goes before the next run
        os.chdir(here)
        _rmtree(work)
        import maus

        for k in list(sys.modules):  # the next run boots a fresh firmware, as after a reset
            if k.startswith("maus."):
                maus.unload(k)
            elif getattr(sys.modules[k], "__name__", "").startswith("maus.sim."):
                del sys.modules[k]  # the emulated machine, time, ... (maus.sim.hw), with the world they held
        gc.collect()


def _deploy_board(src):
    # board.json and the board.ok `mausbox deploy` writes beside it (it checks the board on the host; the
    # sim board is checked by test_board.py), so the unit skips the check at boot as a deployed one does.
    import binascii

    import maus
    from maus.unit.boot import _checker_crc, board_stamp

    with open(src, "rb") as f:
        data = f.read()
    with open("board.json", "wb") as f:
        f.write(data)
    with open("board.ok", "wb") as f:
        f.write(board_stamp(binascii.crc32(data), _checker_crc()))
    maus.unload("maus.unit.boot")
    maus.unload("maus.unit")


def _write_scenario(repo, name, host=None):
    # scenario.jsonl for the simulated hardware: the actions by time (stable: same-time actions keep
    # their order), as `mausbox sim` writes it. host(end_ms): the host's requests to add, as actions.
    acts = []
    if name is None:
        acts.append({"at_ms": 60000, "noise": 0})
    else:
        with open(repo + "/tests/scenarios/" + name + ".jsonl") as f:
            for line in f:
                line = line.strip()
                if line and line[0] != "#":
                    acts.append(json.loads(line))
    if host is not None:
        acts.extend(host(max(a["at_ms"] for a in acts)))
    import maus

    mark = maus.loaded()
    from maus.sim.rf_field import card_text

    for a in acts:  # what each card holds, worked out here before the game (mausbox.sim.run.parse_scenario)
        if "tap" in a:
            a["card"] = card_text(a["tap"])
    maus.unload_since(mark)
    acts.sort(key=lambda a: a["at_ms"])
    with open("scenario.jsonl", "w") as f:
        for a in acts:
            f.write(json.dumps(a) + "\n")


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
    """The whole game of scenario `name`: it reaches its end screen with the scores it expects."""
    if not ON_MPY:
        return
    unit, ends = _run(name, logs=1)
    assert unit is not None and unit.mode == "end", unit and unit.mode  # the game reached its end screen
    assert len(ends) == 1, "no game_end in the log"
    s = unit.last_summary
    want = _expected(name)
    assert {str(k): v for k, v in s["scores"].items()} == want["scores"], (s["scores"], want["scores"])


def check_boot(ballast=0):
    """Power-on to the idle menu (self-test, status, the menu on the display), nothing pressed. ballast:
    bytes more the unit holds from power-on (tests/fw/test_unit_heap_bites.py)."""
    if not ON_MPY:
        return
    unit, _ = _run(None, ballast=ballast)
    assert unit is not None and unit.mode == "menu", unit and unit.mode
    assert unit.status["problems"] == [], unit.status["problems"]


def polling(game, every_ms=500, pull_every=4):
    """A host on the line all through a game: `status` every every_ms, and every pull_every-th time a pull's
    requests instead (the listing, and a read of the log being written)."""

    def host(end_ms):
        acts = [{"at_ms": 200, "host": {"op": "hello", "host": "test", "proto": 1}}]
        k = 0
        for t in range(500, end_ms - 1000, every_ms):
            k += 1
            if k % pull_every:
                acts.append({"at_ms": t, "host": {"op": "status"}})
            else:
                acts.append({"at_ms": t, "host": {"op": "logs"}})
                acts.append({"at_ms": t + 50, "host": {"op": "read", "name": "00001-%s.jsonl" % game}})
        return acts

    return host


def pulling(game, offset_ms):
    """A host pulling all through a game: the listing and a read of the log being written every 500 ms, from
    500 + offset_ms on (runs with offsets 0, 25, 50, ... put a pull at every moment of the game, its heaviest
    among them: bench/bench_pull_peak.py)."""

    def host(end_ms):
        acts = [{"at_ms": 200, "host": {"op": "hello", "host": "test", "proto": 1}}]
        for t in range(500 + offset_ms, end_ms - 1000, 500):
            acts.append({"at_ms": t, "host": {"op": "logs"}})
            acts.append({"at_ms": t + 50, "host": {"op": "read", "name": "00001-%s.jsonl" % game}})
        return acts

    return host


class sweeping:
    """A host pulling as fast as the line lets it, all through a game: from 500 + phase_ms ms to 1 s before the
    scenario's last action (as pulling()), every every_ms whenever the line is free (the last pull answered or given
    up, as a poller asks), the listing and a read of the log being written (pulling()'s two requests; the read goes
    once the listing is answered). So the line is never quiet for more than every_ms: a pull is on the wire, waits
    to be read or is being answered at every moment of the game, the moments pulling() puts one at over 20 runs,
    25 ms apart, in one run (bench/bench_pull_peak.py runs those 20). The ticks go on the world one at a time (not
    a scenario line each). A class: a MicroPython function takes no attributes."""

    def __init__(self, game, phase_ms=0, every_ms=25):
        self.first = (500 + phase_ms) * 1000
        self.logs = {"op": "logs"}
        self.read = {"op": "read", "name": "00001-%s.jsonl" % game}
        self.step = every_ms * 1000
        self.until = 0
        self.asked = 0  # pulls asked
        self.skipped = 0  # ticks the line was still busy at
        self.hw = None

    def __call__(self, end_ms):
        self.until = (end_ms - 1000) * 1000
        return [{"at_ms": 200, "host": {"op": "hello", "host": "test", "proto": 1}}]

    def arm(self, hw):
        self.hw = hw
        hw.world.at(self.first, self._tick, self.first)

    def _tick(self, t):
        u = self.hw.uart
        if u._queue or u._wire or u._asked >= 0:
            self.skipped += 1
        else:
            u.request(self.logs)
            u.request(self.read)
            self.asked += 1
        t += self.step
        if t < self.until:
            self.hw.world.at(t, self._tick, t)


def pull_run(name, game, offset_ms, host=None, ballast=0):
    """One game of scenario `name` with pulling(game, offset_ms) (or `host`) on the line; -> "ok", "busy" (a request was
    answered "nomem": no room for its answer just then; the host asks again), "slow" (every request
    answered, one or more after the line's quick wait of 3 s: a race window holds the host's requests until it
    closes, and the host waits up to 10 s: mausbox.link.bounds.IDLE), or what went wrong ("memory": a
    MemoryError out of the firmware, "unanswered", "scores", "end"). ballast: bytes held as _run holds them (the
    margin the run has: bench/bench_pull_peak.py)."""
    try:
        unit, ends = _run(name, logs=1, ballast=ballast, host=host or pulling(game, offset_ms))
    except MemoryError:
        return "memory"
    if unit is None or unit.mode != "end" or len(ends) != 1:
        return "end"
    if {str(k): v for k, v in unit.last_summary["scores"].items()} != _expected(name)["scores"]:
        return "scores"
    u = unit.hw.uart
    if u.answers != u.sent or u.dropped or not set(u.results) <= {"ok", "game", "nofile", "nomem"}:
        return "unanswered"
    if u.results.get("nomem"):
        return "busy"
    return "slow" if u.timeouts else "ok"


def check_polled(name, game):
    """The whole game of scenario `name` with a host polling all through it (polling()), in the same heap as
    check(): the game ends as without the host, and every request is answered; -> the line's counts."""
    if not ON_MPY:
        return None
    unit, ends = _run(name, logs=1, host=polling(game))
    assert unit is not None and unit.mode == "end", unit and unit.mode
    assert len(ends) == 1, "no game_end in the log"
    want = _expected(name)
    assert {str(k): v for k, v in unit.last_summary["scores"].items()} == want["scores"]
    uart = unit.hw.uart
    line = (uart.sent, uart.answers, uart.results, uart.timeouts, uart.dropped)
    # Every request answered: hello and status say what they are asked; in the game the pull's listing and
    # read are told to wait for its end ("game"); before it, the log to read is not there yet ("nofile").
    assert uart.answers == uart.sent and not uart.timeouts and not uart.dropped, line
    assert set(uart.results) <= {"ok", "game", "nofile"} and uart.results.get("game", 0) >= 4, line
    return uart
