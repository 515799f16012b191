# The board's share of the live GC heap while the virtual unit plays a scenario (run by bench/heapkit.py).
#
# Runs the firmware as deployed (maus/ as .mpy in the current folder, main()'s own boot) on the simulated
# hardware. The live heap (gc.mem_alloc() after gc.collect()) is sampled every time the firmware charges
# virtual time (each main-loop pass, every bus transfer and display frame, every 8th ADC read: finer
# than a loop pass), at every scenario action and at the end of every import. Collecting only when the allocated total (garbage
# included, so never below the live heap) passes the peak so far keeps it exact to RESOLUTION, and fast.
#
# Board share = live - what this tool holds - the simulated parts' share + what only a board holds:
#   sim share  = what building the simulated Hardware added (its modules, the register emulator, the RF
#                field, the piezo model, virtual time, the open scenario) less what a board holds too
#                (the display's framebuffer, the LED buffer), plus each simulated tag while it lies on
#                the pad (measured as it is put there);
#   board-only = maus.hw.esp32's bytecode (measured here against stand-ins for machine and micropython)
#                and the display driver maus.drivers.ssd1306 with one display less its framebuffer (measured
#                here on a stand-in bus): the simulated Hardware loads and makes them as a board does.
# qstr pools: the unix port's pools double from a few entries, the ESP32's from twice its frozen pool, so
# the tool pays a large pool up front (base) and prints every interned name at each mark; bench/heapkit.py
# works out which of them the board would intern (board_names: not the simulator's own, not the ESP32's
# ROM names) and adds the pool tables the board's own pools would take for them.
# Phases: "boot" is power-on to the scenario's first input (boot, self-test, the idle menu), "game"
# the rest (choosing, joining, the whole game, the end screen).
#
# Prints `HEAPWATCH key value` lines, and MicroPython's qstr_info(1)/mem_info lines after `HEAPWATCH qstrs X`
# and `HEAPWATCH mem` markers. With MAUSBOX_HEAPWATCH_MODS set, also a `HEAPMODS phase bytes t=<ms> modules`
# line at each new peak: the firmware modules loaded at that moment (what to cut first). With
# MAUSBOX_HEAPPROBE_MS=T, at the first sample of the game phase at or after T ms of virtual time it takes
# the unit apart piece by piece (the game's attributes, the unit's, then each firmware module) printing
# `HEAPPROBE what bytes` for what each removal freed, and stops: an attribution of the heap at that moment
# (a piece shared by several holders counts where its last holder goes). MAUSBOX_HEAPPROBE_BYTES=N does the
# same at the first game-phase peak of N bytes or more, after `HEAPPROBE at N t=<ms> modules`; what the
# unwound frames held (a parse in progress) is the drop from that N to the `live` line.
import builtins
import gc
import sys

import micropython

RESOLUTION = 128  # bytes: a peak is found to within this (collecting at every byte over it is slow)
QSTR_ROOM = 2048  # free qstr entries after the prefill: more than the sim and the firmware intern

_peak = {"boot": 0, "game": 0}
_st = {"mods": False, "phase": "boot", "base": 0, "sim": 0, "first_us": -1, "samples": 0, "collects": 0, "tag_max": 0,
       "adc": 0, "quiet": 0,
       "probe_b": 0}
_tags = {}  # identity -> bytes of a simulated tag on the pad
_keep = []
_world = None
_unit = []


def _live():
    gc.collect()
    return gc.mem_alloc()


def _qstrs(when):
    print("HEAPWATCH qstrs", when)
    micropython.qstr_info(1)  # and every interned name, one a line


def _sample():
    st = _st
    st["samples"] += 1
    if st["phase"] == "boot" and 0 <= st["first_us"] <= _world.now:
        st["phase"] = "game"
        _qstrs("boot")
    extra = st["base"] + st["sim"]
    for v in _tags.values():
        extra += v
    ph = st["phase"]
    if ph == "game" and st.get("probe", -1) >= 0 and _world.now >= st["probe"] * 1000 and _unit:
        st["probe"] = -1
        raise _Probe  # unwinds the firmware's frames (they hold what is to be measured) up to main()
    if gc.mem_alloc() - extra <= _peak[ph] + RESOLUTION:
        return
    st["collects"] += 1
    gc.collect()
    b = gc.mem_alloc() - extra
    if b > _peak[ph]:
        _peak[ph] = b
        if ph == "game" and 0 < st["probe_b"] <= b and _unit:
            print("HEAPPROBE at", b, "t=%d" % (_world.now // 1000), " ".join(k for k in sys.modules if k.startswith("maus")))
            raise _Probe
        if _st.get("mods"):
            print("HEAPMODS", ph, b, "t=%d" % (_world.now // 1000), " ".join(k for k in sys.modules if k.startswith("maus")))




class _Probe(BaseException):
    pass


_import = builtins.__import__


_loaded = set()  # MAUSBOX_HEAPWATCH_LOADS: the (module, id) pairs said


def _sampled_import(*a):
    # Every firmware import sampled when it is done: a step with no bus transfer or loop pass in it
    # (maus.cards.ident parsing a card's text, a game's start) has its modules in RAM then, which the other
    # samples miss. Not what the simulator imports (a tag's contents made with maus.drivers.ndef_write as
    # it is put on the pad), nor what those imports import in turn: that is the simulator's share.
    g = a[1] if len(a) > 1 else None
    sim = g is not None and (g.get("__name__") or "").startswith(("maus.sim", "maus.sim.hw"))
    if sim:
        _st["quiet"] += 1
    loads = _st.get("loads") and not sim and _world is not None
    if loads:
        had = set(sys.modules)
    try:
        m = _import(*a)
    finally:
        if sim:
            _st["quiet"] -= 1
    if loads:
        for k in sys.modules:
            if k not in had and k.startswith("maus.") and not k.startswith("maus.sim"):
                key = "%s %x" % (k, id(sys.modules[k]))  # one line a load (an import in an import sees it too); text, so no pointer
                if key not in _loaded:
                    _loaded.add(key)
                    print("HEAPLOAD", k, "%x" % (id(sys.modules[k]) & 0xFFFFFFFF), "t=%d" % (_world.now // 1000),
                          _st["phase"])
                    if _st["loads"] > 1:  # the modules loaded now and the heap's block map (bench/heap_where.py --alive)
                        gc.collect()
                        print("HEAPLIVE", " ".join("%x" % (id(v) & 0xFFFFFFFF) for n, v in sys.modules.items()
                                                   if n.startswith("maus.")))
                        micropython.mem_info(1)
    if _world is not None and not _st["quiet"]:
        _sample()
    return m


def _take(what, holder, name):
    a = _live()
    try:
        if isinstance(holder, dict):
            del holder[name]
        else:
            setattr(holder, name, None)
    except (AttributeError, TypeError, KeyError):
        return
    print("HEAPPROBE", what, a - _live())


def _probe(u):
    st = _st
    print("HEAPPROBE live", _live() - st["base"] - st["sim"], "t=%d" % (_world.now // 1000))
    g = u.game
    if g is not None:
        for k in sorted(g.__dict__):
            _take("game." + k, g, k)
    for k in sorted(u.__dict__):
        if k != "hw":
            _take("unit." + k, u, k)
    _unit.clear()
    del u, g
    for k in sorted(sys.modules):
        if k.startswith("maus") and not k.startswith("maus.sim") and k not in ("maus.sim.hw", "maus", "maus.hw"):
            m = sys.modules[k]
            parent, _, leaf = k.rpartition(".")
            if parent in sys.modules:
                try:
                    delattr(sys.modules[parent], leaf)
                except AttributeError:
                    pass
            del m
            _take("module " + k, sys.modules, k)
    print("HEAPPROBE rest", _live() - st["base"] - st["sim"])
    sys.exit(0)


def _prefill_qstrs():
    # Intern throwaway names until the unix port has just taken a pool of QSTR_ROOM entries.
    i = 0
    while True:
        a = gc.mem_alloc()
        hasattr(_st, "_q%d" % i)  # interns the name
        i += 1
        if gc.mem_alloc() - a >= 7 * QSTR_ROOM:
            return


class _Stub:
    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        return _Stub


_LOOP_BOARD = {"buttons": [13, 14, 27, 33, 32, 35], "family": "esp32"}  # boards/sim.json's six buttons


class _Bus:
    # a stand-in I2C bus for the display driver's measure (_board_only)
    def writeto(self, addr, buf):
        pass

    def writevto(self, addr, bufs):
        pass


def _board_only():
    # What of building the simulated Hardware is the board's own (taken out of the simulator's share in main):
    # maus.hw.esp32's bytecode, imported against stand-ins for the ESP32's machine and micropython modules, and the
    # display driver maus.drivers.ssd1306 with one 128x64 display less its framebuffer (held_too in main), on a
    # stand-in bus. The packages are imported first: main has them before its window too. What stays (the names
    # the .mpy files interned, the emergency exception buffer; a board keeps them too) is in the live heap already.
    # (Until issue 28 the display driver was micropython-lib's, and a figure measured once for it, 2,992 bytes,
    # stood here: ~1.1 KB more than the project's own driver and display take.)
    import maus
    import maus.drivers
    import maus.hw

    p = _live()
    import maus.drivers.ssd1306 as drv

    d = drv.SSD1306_I2C(128, 64, _Bus())
    s = _live() - len(d.buffer)
    del d, drv
    m = _Stub()
    for n in ("ADC", "I2C", "PWM", "SPI", "Pin", "RTC", "WDT"):
        setattr(m, n, _Stub)
    sys.modules["machine"] = m
    mp = _Stub()
    mp.const = micropython.const
    mp.viper = lambda f: f
    mp.alloc_emergency_exception_buf = lambda n: _keep.append(bytearray(n))  # a board allocates it
    sys.modules["micropython"] = mp
    b = _live()
    import maus.hw.esp32  # noqa: F401

    c = _live()
    for k in ("maus.hw.esp32", "maus.drivers.ssd1306", "machine", "micropython"):
        del sys.modules[k]
    delattr(maus.hw, "esp32")
    delattr(maus.drivers, "ssd1306")
    del m, mp
    stays = _live() - p
    # The register loops a board's Hardware keeps for the whole boot, and what they keep of their module (its
    # globals and code; the virtual unit keeps them too: maus.sim.wiring standin) once the module is let go.
    import maus.hw.esp32_loops as lm

    loops = (lm.make_levels(_LOOP_BOARD), lm.make_scan(_LOOP_BOARD))
    del lm
    del sys.modules["maus.hw.esp32_loops"]
    delattr(maus.hw, "esp32_loops")
    held = _live()
    del loops
    kept = held - _live()
    for k in list(sys.modules):  # back to a clean start: the firmware imports these itself
        if k.startswith("maus"):
            del sys.modules[k]
    return (s - p) + (c - b) - stays + kept


def main():
    global _world
    st = _st
    bare = int(sys.argv[1]) if len(sys.argv) > 1 else 0  # the bare interpreter's live heap (a board's too)
    _prefill_qstrs()
    builtins.__import__ = _sampled_import  # before the base is taken: its table is the tool's
    _qstrs("start")
    st["base"] = _live() - bare  # this tool
    esp32_bytes = _board_only()
    _qstrs("esp32")
    import maus
    import maus.hw as hwmod

    maus.qstr_room = QSTR_ROOM  # the pools have room already: the simulated Hardware need not make it
    board = hwmod.load_board()
    # Firmware the simulated Hardware imports itself (the reader's default SPI clock): loaded first, so
    # it counts as the board's (the unit loads it anyway), not as the simulator's.
    import maus.drivers.mfrc522  # noqa: F401

    _qstrs("fw")
    a = _live()
    hw = hwmod.open_hardware(board)
    b = _live()
    _qstrs("sim")
    _world = hw.world
    held_too = 0  # what a board holds as well: the framebuffer, the LED buffer
    if hw.display is not None:
        held_too += len(hw.display.buffer)
    if hw.leds is not None:
        held_too += 3 * len(hw.leds)
    st["sim"] = (b - a) - held_too - esp32_bytes
    st["first_us"] = hw.world.next_action()  # the scenario's first input

    orig_spend = hw.spend
    orig_wspend = hw.world.spend
    orig_idle = hw.idle
    orig_tap = hw.tap
    orig_remove = hw.remove

    def spend(us):
        _sample()
        orig_spend(us)

    def wspend(us):
        st["adc"] += 1
        if st["adc"] & 7 == 0:
            _sample()
        orig_wspend(us)

    def idle(ms, console=None):  # (the console: a host session's poller, maus.unit.core's step)
        _sample()
        orig_idle(ms, console)

    def sim_tap(ident, text=None):
        # Without its text (a scenario's "card", worked out on the host: mausbox.sim.run.scenario_text) a tag's
        # contents are made with a firmware module (maus.cards.ident): on a board only a card read loads it, and
        # lets it go. Let go of what the simulator loaded, so a card read later loads it afresh (the board's
        # cost) and it is not counted after the tag goes.
        had = set(sys.modules)
        _st["quiet"] += 1  # its imports are not the firmware's moments
        try:
            orig_tap(ident, text)
        finally:
            _st["quiet"] -= 1
        for k in list(sys.modules):
            if k not in had and k.startswith("maus.") and not k.startswith("maus.sim"):
                maus.unload(k)

    def tap(ident, text=None):
        if ident in hw._tags:
            return sim_tap(ident, text)
        x = _live()
        sim_tap(ident, text)
        n = _live() - x
        _tags[ident] = n
        st["tag_max"] = max(st["tag_max"], n)
        _sample()

    def remove(ident):
        orig_remove(ident)
        _tags.pop(ident, None)
        _sample()

    hw.spend = spend
    hw.world.spend = wspend
    hw.idle = idle
    hw.tap = tap
    hw.remove = remove
    if hasattr(hw, "finished_and_idle"):
        orig_fin = hw.finished_and_idle

        def fin(unit):
            if not _unit:
                _unit.append(unit)
            return orig_fin(unit)

        hw.finished_and_idle = fin

    import os

    if os.getenv("MAUSBOX_HEAP_HOSTSVC"):
        # The host service of another branch (maus/host/service.py, compiled in by bench/heapkit.py): loaded and
        # made at power-on as the unit will, so its bytecode, buffers and names are in every phase's peak.
        from maus.host.service import HostService

        _keep.append(HostService(None))
    import maus.unit

    _st["mods"] = bool(os.getenv("MAUSBOX_HEAPWATCH_MODS"))
    _st["loads"] = int(os.getenv("MAUSBOX_HEAPWATCH_LOADS") or 0)  # 1: a `HEAPLOAD module addr t=<ms> phase` line a load
    _st["probe"] = int(os.getenv("MAUSBOX_HEAPPROBE_MS") or -1)
    _st["probe_b"] = int(os.getenv("MAUSBOX_HEAPPROBE_BYTES") or 0)
    _sample()
    try:
        maus.unit.main(hw=hw)
    except _Probe:
        _probe(_unit.pop())
    _sample()
    _qstrs("game")
    print("HEAPWATCH boot", _peak["boot"])
    print("HEAPWATCH game", _peak["game"])
    print("HEAPWATCH sim", st["sim"])
    print("HEAPWATCH esp32_hw", esp32_bytes)
    print("HEAPWATCH tag_max", st["tag_max"])
    print("HEAPWATCH samples", st["samples"], st["collects"])
    gc.collect()
    print("HEAPWATCH mem")
    micropython.mem_info()


main()
