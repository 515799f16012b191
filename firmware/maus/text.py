# Prompt tables: the unit shell's words and each game's, one file a language (maus/texts/<name>.<lang>.json).
#
# The files stay on flash: a prompt is read from its file when it is shown (one key a line, so a lookup
# reads lines until it finds its own and nothing else stays in the heap; docs/build.md). They are plain
# JSON objects for the tools and the tests, which may read a whole table (keys(), items()).
import json

LANGS = ("de", "en")
_HERE = __file__.replace("\\", "/").rsplit("/", 1)[0] if "/" in __file__.replace("\\", "/") else "maus"


class Texts:
    """A prompt table by language: TEXT[lang][key] -> format string, read from flash when asked for."""

    def __init__(self, name):
        self.name = name

    def __contains__(self, lang):
        return lang in LANGS

    def __iter__(self):
        return iter(LANGS)

    def __getitem__(self, lang):
        if lang not in LANGS:
            raise KeyError(lang)
        return Lang(self.name, lang)

    def get(self, lang, default=None):
        return Lang(self.name, lang) if lang in LANGS else default


class Lang:
    """One language of a table: each lookup reads the file up to its key's line."""

    __slots__ = ("path",)

    def __init__(self, name, lang):
        self.path = "%s/texts/%s.%s.json" % (_HERE, name, lang)

    def get(self, key, default=None):
        want = '"%s": ' % key
        try:
            with open(self.path) as f:
                for line in f:
                    if line.startswith(want):
                        return json.loads(line[len(want):].rstrip().rstrip(","))
        except (OSError, ValueError):
            pass
        return default

    def __getitem__(self, key):
        s = self.get(key)
        if s is None:
            raise KeyError(key)
        return s

    def __contains__(self, key):
        return self.get(key) is not None

    def table(self):
        """The whole table as a dict (tools and tests; the unit reads key by key)."""
        with open(self.path) as f:
            return json.load(f)

    def keys(self):
        return self.table().keys()

    def items(self):
        return self.table().items()

    def __iter__(self):
        return iter(self.table())


TEXT = Texts("unit")


def fmt(table, lang, key, kw):
    """Look a key up in a TEXT table (falling back to English, then the key) and fill it in."""
    t = table.get(lang) or {}
    s = t.get(key)
    if s is None:
        s = table.get("en", {}).get(key, key)
    try:
        return s.format(**kw)
    except (KeyError, IndexError, ValueError):
        return s
