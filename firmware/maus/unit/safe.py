# Safe mode: after CRASH_LIMIT crashes in a row the unit starts no game; the REPL stays free.
import maus
from maus import text
from maus.unit.feedback import Feedback


def safe_mode(hw, crashes, boot=None):
    problem = None
    if hw is None:
        try:
            from maus.hw import load_board, open_hardware

            hw = open_hardware(load_board())
        except Exception as e:  # noqa: BLE001 - a corrupt board.json is one of the crashes
            print("safe mode: no hardware:", e)
            problem = "board: %s" % (e.args[0] if e.args else type(e).__name__)
    if hw is not None:
        fb = Feedback(hw, _SafeSettings())
        fb.text(text.fmt(text.TEXT, "en", "safe_mode", {"n": crashes}))
        fb.led(0, "red", "on")
        fb.update(hw.ticks_ms())
    print("MAUSBOX SAFE MODE: %d crashes in a row; games are disabled, the REPL is free." % crashes)
    print("Fix the cause, then: import maus.unit; maus.unit.clear_safe_mode()")
    from maus.unit.boot import boot_id, write_status

    write_status({"version": maus.VERSION, "board": hw.board.get("name") if hw is not None else None,
                  "safe_mode": True, "crashes": crashes, "boot": boot or (boot_id(hw) if hw is not None else None),
                  "problems": [problem] if problem else []})
    return None


class _SafeSettings:
    def get(self, key):
        return {"volume": 1, "brightness": 16}.get(key)


def clear_safe_mode():
    from maus.hw import load_board, open_hardware
    from maus.unit.shared import crash_count

    crash_count(open_hardware(load_board()), 0)
