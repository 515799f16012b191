# Prompt tables: the unit shell's words and each game's, one file a language (maus/texts/<name>.<lang>.json).
#
# The files stay on flash: a prompt is read from its file when it is shown (one key a line, so a lookup
# reads lines until it finds its own and nothing else stays in the heap; docs/build.md). They are plain
# JSON objects for the tools and the tests, which may read a whole table (keys(), items()).
import json

from maus import data_dir

LANGS = ("de", "en")
_HERE = data_dir()


class Texts:
    """A prompt table by language: TEXT[lang][key] -> format string, read from flash when asked for.
    Texts(name) is the table; its TEXT[lang] is a Texts too, for one language (lang set), whose lookups
    read the file up to their key's line."""

    def __init__(self, name, lang=None):
        self.name = name
        self.lang = lang

    def get(self, k, default=None):
        lang = self.lang
        if lang is None:  # the table: k is a language
            return Texts(self.name, k) if k in LANGS else default
        want = '"%s": ' % k
        try:
            with open("%s/texts/%s.%s.json" % (_HERE, self.name, lang)) as f:
                for line in f:
                    if line.startswith(want):
                        return json.loads(line[len(want):].rstrip().rstrip(","))
        except (OSError, ValueError):
            pass
        return default

    def __getitem__(self, k):
        s = self.get(k)
        if s is None:
            raise KeyError(k)
        return s

    def __contains__(self, k):
        return self.get(k) is not None

    def __iter__(self):
        return iter(LANGS if self.lang is None else self.table())

    def table(self):
        """One language's whole table as a dict (tools and tests; the unit reads key by key)."""
        with open("%s/texts/%s.%s.json" % (_HERE, self.name, self.lang)) as f:
            return json.load(f)

    def keys(self):
        return self.table().keys()

    def items(self):
        return self.table().items()


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
