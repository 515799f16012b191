# Unit settings: what a running unit reads (Settings.get) stays in RAM; the schema, its checks and the
# file handling (maus.settings.file) are loaded only to load, change or reset the settings, and let go again
# (docs/build.md section 7). SCHEMA, defaults, check, parse, dump and remove_all are maus.settings.file's,
# reachable here too (loading it) for the host and the tests.
from maus import moment

FILE = "settings.json"
BAK = "settings.bak"


def __getattr__(name):
    import maus.settings.file

    return getattr(maus.settings.file, name)


class Settings:
    def __init__(self, root="", on_change=None):
        # on_change(key, old, new) is called for every change (the runtime logs it).
        if root and not root.endswith("/"):
            root += "/"
        self.path = root + FILE
        self.bak = root + BAK
        self.on_change = on_change
        self.values = None  # dict: key -> value, every key of the schema
        self.source = "defaults"
        self.message = ""
        self.load()

    def load(self):
        # -> message saying where the settings came from (also in self.source, self.message).
        with moment():
            import maus.settings.file

            return maus.settings.file.load(self)

    def __getitem__(self, key):
        return self.values[key]

    def get(self, key):
        return self.values[key]

    def set(self, key, value):
        # Validate, save atomically, report the change; -> False if it was set already. ValueError with the
        # reason if invalid; OSError from a full flash propagates (the caller reports it).
        with moment():
            import maus.settings.file

            return maus.settings.file.set_one(self, key, value)

    def update(self, changes):
        # Several keys at once, all validated before any is saved.
        with moment():
            import maus.settings.file

            maus.settings.file.update(self, changes)

    def save(self, values):
        # Current good file -> .bak, then the new one: each step atomic (temp + rename).
        with moment():
            import maus.settings.file

            maus.settings.file.save(self, values)

    def reset(self):
        with moment():
            import maus.settings.file

            maus.settings.file.reset(self)
