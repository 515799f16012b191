# The board's share of the live GC heap while the virtual unit plays a scenario (run by bench/heapkit.py).
#
# Runs the firmware as deployed (maus/ as .mpy in the current folder, main()'s own boot) on the simulated
# hardware. The live heap (gc.mem_alloc() after gc.collect()) is sampled every time the firmware charges
# virtual time (each main-loop pass, every bus transfer, display frame and ADC read: finer than a loop
# pass) and at every scenario action. Collecting only when the allocated total passes the peak so far
# keeps this exact (garbage included, the total is an upper bound of the live heap) and fast.
#
# Board share = live - what this tool itself holds - the simulated parts' share:
#   sim share  = what building the simulated Hardware added (its modules, the register emulator, the RF
#                field, the piezo model, virtual time, the open scenario) minus what a board holds too
#                (the display's framebuffer, the LED buffer), plus each simulated tag while it lies on
#                the pad (measured as it is put there);
#   board-only = what the ESP32 Hardware holds that the sim does not, added back: maus.hw.esp32's
#                bytecode (measured here with stand-in machine/neopixel modules, their own cost taken
#                out) and micropython-lib's ssd1306 driver (SSD1306_BYTES, measured once, see below).
# Phases: "boot" is power-on to the scenario's first input (boot, self-test, the idle menu), "game"
# the rest (choosing, joining, the whole game, the end screen).
#
# Prints `HEAPWATCH key value` lines.
import gc
import sys

# micropython-lib ssd1306 (v0.1.0, the version mip installs for MicroPython 1.2x): its .mpy loaded
# from the filesystem plus an SSD1306_I2C object, minus the 1024-byte framebuffer (counted below with
# the sim's), measured on the 32-bit unix port. The sim's display is a framebuffer without that driver.
SSD1306_BYTES = 1856

_peak = {"boot": 0, "game": 0}
_state = {"phase": "boot", "base": 0, "sim": 0, "first_us": -1, "samples": 0, "collects": 0, "tag_max": 0, "next_diag": 0}
_tags = {}
_keep = []
_DIAG = len(sys.argv) > 2
_at_peak = {}
_trace = []


def _live():
    gc.collect()
    return gc.mem_alloc()


def _sample():
    st = _state
    st["samples"] += 1
    if st["phase"] == "boot" and st["first_us"] >= 0 and _world.now >= st["first_us"]:
        st["phase"] = "game"
    extra = st["base"] + st["sim"]
    for v in _tags.values():
        extra += v
    ph = st["phase"]
    if _DIAG and _world.now >= st["next_diag"]:
        st["next_diag"] = _world.now + 1000000
        gc.collect()
        _trace.append((_world.now // 1000, gc.mem_alloc() - extra))
    if gc.mem_alloc() - extra <= _peak[ph]:
        return
    st["collects"] += 1
    gc.collect()
    b = gc.mem_alloc() - extra
    if b > _peak[ph]:
        _peak[ph] = b
        if _DIAG:
            _at_peak[ph] = [k for k in sys.modules]


def _board_only():
    # maus.hw.esp32's bytecode, imported against stand-ins for the ESP32's machine and neopixel modules.
    class _Stub:
        def __init__(self, *a, **k):
            pass

        def __getattr__(self, name):
            return _Stub

    a = _live()
    m = _Stub()
    for n in ("ADC", "I2C", "PWM", "SPI", "Pin", "RTC", "WDT"):
        setattr(m, n, _Stub)
    sys.modules["machine"] = m
    import micropython as real_mp

    mp = _Stub()
    mp.const = real_mp.const
    mp.viper = lambda f: f
    mp.alloc_emergency_exception_buf = lambda n: _keep.append(bytearray(n))  # a board allocates it
    sys.modules["micropython"] = mp
    b = _live()
    import maus.hw.esp32  # noqa: F401

    c = _live()
    del sys.modules["maus.hw.esp32"]
    del sys.modules["machine"]
    del sys.modules["micropython"]
    import maus.hw

    if hasattr(maus.hw, "esp32"):
        delattr(maus.hw, "esp32")
    cost = c - b
    import maus

    for k in list(sys.modules):  # back to a clean start: the firmware imports these itself
        if k.startswith("maus"):
            del sys.modules[k]
    del maus
    # What stays (the qstrs its .mpy interned; a board keeps them too) is already in the live heap.
    return cost - (_live() - a)


def main():
    global _world
    st = _state
    bare = int(sys.argv[1]) if len(sys.argv) > 1 else 0  # the bare interpreter's live heap (a board's too)
    st["base"] = _live() - bare  # this tool
    esp32_bytes = _board_only()
    import maus.hw as hwmod

    board = hwmod.load_board()
    a = _live()
    hw = hwmod.open_hardware(board)
    b = _live()
    _world = hw.world
    held_too = 0
    if hw.display is not None:
        held_too += len(hw.display.buffer)
    if hw.leds is not None:
        held_too += 3 * len(hw.leds)
    st["sim"] = (b - a) - held_too - esp32_bytes - SSD1306_BYTES
    # the first input's time: the scenario's first scheduled action
    st["first_us"] = hw.world.next_action()

    orig_spend = hw.spend
    orig_wspend = hw.world.spend
    orig_idle = hw.idle
    orig_tap = hw.tap
    orig_remove = hw.remove

    def spend(us):
        _sample()
        orig_spend(us)

    def wspend(us):
        _sample()
        orig_wspend(us)

    def idle(ms):
        _sample()
        orig_idle(ms)

    def tap(ident):
        if ident in _tags or ident in hw._tags:
            return orig_tap(ident)
        x = _live()
        orig_tap(ident)
        n = _live() - x
        _tags[ident] = n
        if n > _state["tag_max"]:
            _state["tag_max"] = n
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

    import maus.unit

    _sample()
    maus.unit.main(hw=hw)
    gc.collect()
    print("HEAPWATCH boot", _peak["boot"])
    print("HEAPWATCH game", _peak["game"])
    print("HEAPWATCH sim", st["sim"])
    print("HEAPWATCH esp32_hw", esp32_bytes)
    print("HEAPWATCH tag_max", st["tag_max"])
    print("HEAPWATCH samples", st["samples"], st["collects"])
    for t, b in _trace:
        print("HEAPWATCH t", t, b)
    for ph, mods in _at_peak.items():
        print("HEAPWATCH modules_at_peak", ph, " ".join(sorted(mods)))
    f = gc.mem_free()
    print("HEAPWATCH free_after", f)
    try:
        import micropython

        micropython.mem_info()
    except Exception:  # noqa: BLE001
        pass


_world = None
main()
