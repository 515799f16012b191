# M is for Mouse: what the game and every variant's engine share, with nothing of the package imported, so
# that the parts loaded for their moments (mim.new, mim.catalog, mim.moments, mim.aside, mim.claims,
# mim.rounds) take it from here rather than from mim.rules, which loads them: the cards and the pair finder,
# the letters and their folding for the display, a card's identity, and Engine, the base of each variant's
# engine (mim.turns, mim.race). The Game itself is mim.rules.MIsForMouse.
from micropython import const

TYPE_CHECKING = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if TYPE_CHECKING:
    from typing import Any, Callable

    from maus.games.base import Game, Table

    class MimGame(Game):
        # What an engine asks of its game, maus.games.mim.rules.MIsForMouse, written out for the type checker
        # (the compiler drops the block: no class on the unit; and this leaf imports nothing of the package)
        def end(self, reason: str) -> None: ...


# --- cards and pairs ------------------------------------------------------------------------------
# A card is 4 bytes of letter indexes: two objects (by the index of their German initial) and two
# letters. An element is (slot, e): e 0/1 = object 0/1, e 2/3 = letter 0/1. `used` holds one byte
# per slot: bit e set = a chip lies on element e. A pair is a free object on one card and its free
# initial letter on another; Pairs.out lists each as two bytes slot << 2 | e (object, then letter).
CARDS = const(23)  # rulebook component counts
LETTERS = "ABCDEFGHIJKLMNOPRSTUVWZ"  # no objects for Q, X, Y
_NL = const(23)
_FREE = const(255)


class Catalog:
    """Compact card data: `cards` bytes (4 per card), the names of the objects in one string."""

    def __init__(self, cards, names):
        self.cards = cards  # bytes: card i at 4*i: object, object, letter, letter (letter indexes)
        self.names = names  # str: by letter index, German name and English gloss, each ending in "\n"
        self.n = len(cards) // 4

    def element(self, card, e):
        """Letter index shown by element e of card (0-based card index)."""
        return self.cards[4 * card + e]

    def name(self, letter, en=0):
        """The German object name of a letter index (en 1: its English gloss)."""
        s = self.names
        i = 0
        for _ in range(2 * letter + en):
            i = s.find("\n", i) + 1
        return s[i: s.find("\n", i)]

    def pair_text(self, letter, lang):
        """ "K für Koffer" / "K for Koffer (suitcase)"."""
        if lang == "de":
            return "%s f\u00fcr %s" % (LETTERS[letter], self.name(letter))
        return "%s for %s (%s)" % (LETTERS[letter], self.name(letter), self.name(letter, 1))


class Pairs:
    """Finds every legal pair of a table without allocating (buffers are made here, once)."""

    def __init__(self, cards, slots=_NL):
        self.cards = cards
        self._lp = bytearray(2 * _NL)  # per letter: up to two free letter elements (slot << 2 | e)
        # at most `slots` cards are searched at once: each card's 2 objects pair with at most the 2 letter
        # elements _lp keeps for their letter, so 4 pairs a card, 2 bytes each
        self.out = bytearray(8 * slots)
        self.n = 0
        self._s2 = bytearray(2)
        self._u2 = bytearray(2)

    def find(self, slots, n, used):
        """Pairs among slots[0:n] (card indexes) with chips `used`; returns their number."""
        c = self.cards
        lp = self._lp
        out = self.out
        for i in range(2 * _NL):
            lp[i] = _FREE
        for s in range(n):
            b = 4 * slots[s]
            u = used[s]
            for e in range(2, 4):
                if not u & (1 << e):
                    i = 2 * c[b + e]
                    if lp[i] == _FREE:
                        lp[i] = s << 2 | e
                    elif lp[i + 1] == _FREE:
                        lp[i + 1] = s << 2 | e
        k = 0
        for s in range(n):
            b = 4 * slots[s]
            u = used[s]
            for e in range(2):
                if not u & (1 << e):
                    i = 2 * c[b + e]
                    for j in range(i, i + 2):
                        pos = lp[j]
                        if pos != _FREE and pos >> 2 != s:
                            out[2 * k] = s << 2 | e
                            out[2 * k + 1] = pos
                            k += 1
        self.n = k
        return k

    def between(self, a, ua, b, ub):
        """Pairs formed by card a (slot 0, chips ua) and card b (slot 1, chips ub)."""
        s = self._s2
        u = self._u2
        s[0] = a
        s[1] = b
        u[0] = ua
        u[1] = ub
        return self.find(s, 2, u)


# --- the engine ----------------------------------------------------------------------------------
_OTHER = const(-1)  # parse(): a card of another game
_UNKNOWN = const(-2)  # parse(): no identity or a bad one

_FOLD = "\u00e4ae\u00f6oe\u00fcue\u00c4Ae\u00d6Oe\u00dcUe\u00dfss"  # one string: 3 characters a rule


def ascii(s):
    """German text for the OLED font: umlauts become ae, oe, ue; ss for sharp s."""
    for i in range(0, len(_FOLD), 3):
        if _FOLD[i] in s:
            s = s.replace(_FOLD[i], _FOLD[i + 1: i + 3])
    return s


def parse(ident, ncards=23):
    """ "mim/card/05" -> card index 4; _OTHER for another game's card, _UNKNOWN for anything else."""
    if not isinstance(ident, str):
        return _UNKNOWN
    parts = ident.split("/")
    if len(parts) == 3 and parts[0] == "mim" and parts[1] == "card":
        try:
            n = int(parts[2])
        except ValueError:
            return _UNKNOWN
        return n - 1 if 1 <= n <= ncards else _UNKNOWN
    if len(parts) >= 2 and parts[0] in ("mg", "mms", "game"):
        return _OTHER
    return _UNKNOWN


class Engine:
    """What every variant shares: the table's voice, card checks, and the choice between pairs."""

    # What each variant provides (the Game hands its events on), as bare annotations: the compiler keeps
    # nothing of them, where empty methods here would each cost RAM while a game is played.
    # (Their winners and summary are maus.games.mim.moments's, status maus.games.mim.aside's, loaded for the
    # moment; so is the end, which a variant asks its Game for: self.g.end(reason).)
    start: "Callable[[], None]"
    # The state every variant has, made by maus.games.mim.new (as each variant's own)
    g: "MimGame"
    table: "Table"
    cat: "Catalog"
    settings: "dict[str, Any]"  # the game's settings (maus.settings.values schema: JSON values)
    lang: str
    ids: "list[int]"  # player ids in seating order
    colour: "list[str]"  # by player id
    finder: "Pairs"
    opts: bytearray  # the pairs two tapped cards allow (4 at most), as Pairs.out
    opt_cards: bytearray  # the two cards of those pairs (slot 0, slot 1)
    n_opts: int
    opt_i: int
    reason: str  # why the game ended ("" until then)
    on_tap: "Callable[[str | None, int], None]"  # (ident, t_us)
    on_press: "Callable[[int, int], None]"  # (player, t_us)
    on_gesture: "Callable[[int, str], None]"  # (player, kind)
    on_timer: "Callable[[str], None]"  # (name)

    def say(self, key, **kw):
        self.table.say(key, **kw)

    def bad(self, key, **kw):
        self.table.sound("error")
        self.table.say(key, **kw)

    def card(self, ident):
        """Card index of an identity from the pad, or -1 after signalling a foreign or unknown card."""
        c = parse(ident, self.cat.n)
        if c >= 0:
            return c
        if ident != "game/mim":  # our own game card again: harmless (the shell handles it anyway)
            self.bad("wrong_game" if c == _OTHER else "unknown_card")
        return -1

    def ident(self, c):
        return "mim/card/%02d" % (c + 1)

    # --- pairs -----------------------------------------------------------------------------------
    def offer(self, a, ua, b, ub):
        """The pairs of card a (chips ua) with card b (chips ub); kept as options 0..n-1."""
        f = self.finder
        n = f.between(a, ua, b, ub)
        for i in range(2 * n):
            self.opts[i] = f.out[i]
        self.opt_cards[0] = a
        self.opt_cards[1] = b
        self.n_opts = n
        self.opt_i = 0
        return n

    def opt_letter(self, k):
        pos = self.opts[2 * k]
        return self.cat.element(self.opt_cards[pos >> 2], pos & 3)

    def pair_text(self, letter):
        return self.cat.pair_text(letter, self.lang)

    def show_choice(self):
        self.say("choose", pair=ascii(self.pair_text(self.opt_letter(self.opt_i))), i=self.opt_i + 1,
                 n=self.n_opts)

    def next_choice(self):
        self.opt_i = (self.opt_i + 1) % self.n_opts
        self.table.sound("tick")
        self.show_choice()

    def verdict(self, player, ok, reason, letter=-1):
        f = {"player": player, "ok": ok, "reason": reason}
        if letter >= 0:
            f["pair"] = self.pair_text(letter)
        self.table.log("verdict", f)
