# The enrolment map (UID -> identity, for tags that cannot be written): what the unit keeps while it runs
# when it has enrolled a tag, in a module of its own so the card identities' parser (maus.cards.ident) is loaded
# only when a card is read or written (docs/build.md section 7). maus.cards.ident names it too.
from maus import moment
from maus.cards.reader import uid_hex  # noqa: F401 - the enrolment key; its home is maus.cards.reader, which reads cards

ENROL_PATH = "cards/enrol.json"


def existing(path=ENROL_PATH):
    """The unit's Enrolment if it has an enrolment file (a damaged one too: its error is reported), else
    None: most units enrol no tag, and then neither this module nor a map stays in RAM (maus.unit.build)."""
    import os

    try:
        os.stat(path)
    except OSError:
        return None
    return Enrolment(path)


class Enrolment:
    """UID -> identity for tags that cannot be written, kept as JSON on the flash.

    A missing file is an empty map; a corrupt one is reported in `error` and ignored (the unit
    keeps working with no enrolments); invalid entries are skipped and counted in `skipped`.
    Loading, changing and saving the file are maus.cards.file's.
    """

    def __init__(self, path=ENROL_PATH):
        self.path = path
        self.map = {}
        self.error = None
        self.skipped = 0
        self.load()

    def load(self):
        with moment():
            import maus.cards.file

            maus.cards.file.load(self)

    def get(self, uid_hex_key):
        return self.map.get(uid_hex_key)

    def add(self, uid, ident):
        """Enrol a UID (hex string); returns the canonical identity. ValueError on bad input."""
        with moment():
            import maus.cards.file

            return maus.cards.file.add(self, uid, ident)

    def remove(self, uid):
        with moment():
            import maus.cards.file

            return maus.cards.file.remove(self, uid)

    def save(self):
        # Atomic: write a temporary file, then rename it over the old one.
        with moment():
            import maus.cards.file

            maus.cards.file.save(self)
