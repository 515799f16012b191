# Card identities: `mausbox:<game>/<kind>/<id>` on the tag, `<game>/<kind>/<id>` everywhere else.
#
# Canonical form (docs/cards.md): lower case, no prefix, the number zero-padded to the width of the
# kind's largest number: mg/mouse/07, mg/clothing/31, mg/cheese/3, mim/card/05; game cards are
# game/mausgeflippt, game/mim, game/mms. normalise() maps any accepted spelling to it, or None.
from micropython import const

PREFIX = "mausbox:"

# (game, kind, first, last) of each numbered kind (mms has none); the padding width is the number of digits
# of `last`. Flat tuples, not dicts of dicts: this module is in RAM at every card read.
KINDS = (("mg", "mouse", 1, 32), ("mg", "clothing", 1, 58), ("mg", "cheese", 1, 9), ("mim", "card", 1, 23))
# Game card names -> game code.
GAME_CARDS = {"mausgeflippt": "mg", "mim": "mim", "mms": "mms"}
_GAME_ALIASES = {"mg": "mausgeflippt"}



_MAX_IDENT = const(48)


def _kind(game, kind):
    for k in KINDS:
        if k[0] == game and k[1] == kind:
            return k
    return None


def format_id(game, kind, num):
    """Canonical identity of a numbered card, or None if there is no such card."""
    r = _kind(game, kind)
    if r is None or not r[2] <= num <= r[3]:
        return None
    s = str(num)
    w = len(str(r[3]))
    return "%s/%s/%s" % (game, kind, "0" * (w - len(s)) + s)


def game_card(game):
    """Canonical identity of the game card of a game code ("mg") or name ("mausgeflippt")."""
    name = _GAME_ALIASES.get(game, game)
    return "game/" + name if name in GAME_CARDS else None


def parse(ident):
    """(game, kind, number) of a numbered card, ("game", code, 0) of a game card, or None."""
    if not isinstance(ident, str) or len(ident) > _MAX_IDENT:
        return None
    s = ident.strip().lower()
    if s.startswith(PREFIX):
        s = s[len(PREFIX):]
    parts = s.split("/")
    if len(parts) == 2 and parts[0] == "game":
        name = _GAME_ALIASES.get(parts[1], parts[1])
        code = GAME_CARDS.get(name)
        return None if code is None else ("game", code, 0)
    if len(parts) != 3:
        return None
    game, kind, num = parts
    r = _kind(game, kind)
    if r is None or not 0 < len(num) <= 3:
        return None
    n = 0
    for ch in num:
        if not "0" <= ch <= "9":
            return None
        n = n * 10 + ord(ch) - 48
    if not r[2] <= n <= r[3]:
        return None
    return (game, kind, n)


def normalise(ident):
    """The canonical form of an identity (with or without the prefix, any padding), or None."""
    p = parse(ident)
    if p is None:
        return None
    if p[0] == "game":
        return game_card(p[1])
    return format_id(p[0], p[1], p[2])


def from_text(text):
    """Identity from an NDEF text record: only `mausbox:` texts count; None otherwise."""
    if not isinstance(text, str) or not text.startswith(PREFIX):
        return None
    return normalise(text)
