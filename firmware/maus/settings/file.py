# Unit settings on flash: the schema, its checks, and the file handling behind maus.settings.values.Settings.
# One JSON file, validated against SCHEMA, written atomically with a last-good copy. Load order:
# settings.json, else settings.bak (last good), else defaults; `source`/`message` say which.
# A running unit keeps only the values in RAM (maus.settings.values); this module is loaded to load, change or
# reset them and let go again (docs/build.md section 7).
import json
import os

from maus import write_atomic

# key: (default, lo, hi) for ints, (default,) for bools, (default, (choices,)) for strings.
# Game helpers: add your keys here (one dict, one place).
SCHEMA = {
    "lang": ("de", ("de", "en")),
    "volume": (2, 0, 3),
    "brightness": (32, 1, 255),  # LED level
    "tie_window_us": (2000, 0, 50000),
    "lockout": (True,),  # a false start locks the button out for that reveal
    "debounce_ms": (30, 1, 200),
    "settle_ms": (3, 0, 50),
    "stuck_ms": (10000, 2000, 60000),  # a button low this long is stuck
    "young_hold_ms": (2000, 500, 5000),  # hold to join as a young player
    "claim_window_ms": (5000, 1000, 60000),
    "protection_timeout_ms": (3000, 500, 30000),
    "double_press_ms": (400, 100, 2000),
    "long_press_ms": (1000, 300, 5000),
    "prompt_timeout_s": (60, 5, 600),
    "sensitivity": (5, 1, 9),  # vibration detector level
    "hints": (False,),
    "hint_after_s": (20, 5, 600),
    "dice": ("electronic", ("electronic", "real")),
}  # type: dict[str, tuple]



def defaults():
    return {k: v[0] for k, v in SCHEMA.items()}


def check(key, value):
    # -> None if value is valid for key, else the reason.
    spec = SCHEMA.get(key)
    if spec is None:
        return "unknown setting"
    d = spec[0]
    if type(d) is bool:
        return None if type(value) is bool else "must be true or false"
    if type(d) is int:
        if type(value) is not int:
            return "must be a whole number"
        if not spec[1] <= value <= spec[2]:
            return "must be %d..%d" % (spec[1], spec[2])
        return None
    if not isinstance(value, str) or value not in spec[1]:
        return "must be one of " + "|".join(spec[1])
    return None


def parse(data):
    # bytes -> (values, None) or (None, reason). Missing keys get defaults, unknown keys are ignored.
    # Never raises.
    try:
        obj = json.loads(data)
    except Exception:  # noqa: BLE001 - any damage means "corrupt"
        return None, "not valid JSON"
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    out = defaults()
    for k in obj:
        if k in SCHEMA:
            why = check(k, obj[k])
            if why is not None:
                return None, "%s %s" % (k, why)
            out[k] = obj[k]
    return out, None


def dump(values):
    # Sorted keys, one per line: stable bytes, readable on the host.
    return ("{\n" + ",\n".join("  %s: %s" % (json.dumps(k), json.dumps(values[k]))
                               for k in sorted(values)) + "\n}\n").encode()


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read(4096)
    except OSError:
        return None


def load(st):
    """Fill a maus.settings.values.Settings from its files: -> message saying where the settings came from
    (also in st.source, st.message)."""
    data = _read(st.path)
    if data is None:
        vals, why = None, "missing"
    else:
        vals, why = parse(data)
    if vals is not None:
        st.values, st.source, st.message = vals, "file", "settings loaded"
        return st.message
    bdata = _read(st.bak)
    bvals, bwhy = parse(bdata) if bdata is not None else (None, "missing")
    if bvals is not None:
        st.values, st.source = bvals, "backup"
        st.message = "settings.json %s: using last good copy" % why
        _save_main(st)
    else:
        st.values, st.source = defaults(), "defaults"
        if data is None and bdata is None:
            st.message = "no settings yet: using defaults"
        else:
            st.message = "settings.json %s, last good copy %s: using defaults" % (why, bwhy)
    return st.message


def set_one(st, key, value):
    # Validate, save atomically, report the change. ValueError with the reason if invalid.
    # OSError from a full flash propagates: the caller (config command) reports it.
    why = check(key, value)
    if why is not None:
        raise ValueError("%s %s" % (key, why))
    old = st.values[key]
    if old == value and type(old) is type(value):
        return False
    new = dict(st.values)
    new[key] = value
    save(st, new)
    if st.on_change is not None:
        st.on_change(key, old, value)
    return True


def update(st, changes):
    # Several keys at once, all validated before any is saved.
    for k in changes:
        why = check(k, changes[k])
        if why is not None:
            raise ValueError("%s %s" % (k, why))
    new = dict(st.values)
    new.update(changes)
    old = st.values
    save(st, new)
    if st.on_change is not None:
        for k in sorted(changes):
            if old[k] != new[k] or type(old[k]) is not type(new[k]):
                st.on_change(k, old[k], new[k])


def save(st, values):
    # Current good file -> .bak, then the new one: each step atomic (temp + rename).
    cur = _read(st.path)
    if cur is not None and parse(cur)[0] is not None:
        write_atomic(st.bak, cur)
    write_atomic(st.path, dump(values))
    st.values = values
    st.source = "file"


def _save_main(st):
    # Repair settings.json from the values in use; a full flash only means a repair next boot.
    try:
        write_atomic(st.path, dump(st.values))
    except OSError:
        pass


def reset(st):
    update(st, defaults())


def remove_all(st):
    # Factory reset: drop both files (and a write's leftovers) of the Settings st.
    for p in (st.path, st.bak, st.path + ".tmp", st.bak + ".tmp"):
        try:
            os.remove(p)
        except OSError:
            pass
