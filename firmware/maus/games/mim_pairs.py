# M is for Mouse: card data in compact form and the pair finder.
#
# A card is 4 bytes of letter indexes: two objects (by the index of their German initial) and two
# letters. An element is (slot, e): e 0/1 = object 0/1, e 2/3 = letter 0/1. `used` holds one byte
# per slot: bit e set = a chip lies on element e. A pair is a free object on one card and its free
# initial letter on another; Pairs.out lists each as two bytes slot << 2 | e (object, then letter).
from micropython import const

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

    def __init__(self, cards):
        self.cards = cards
        self._lp = bytearray(2 * _NL)  # per letter: up to two free letter elements (slot << 2 | e)
        self.out = bytearray(8 * _NL)  # every letter: 2 objects x 2 letters at most
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

    def letter(self, slots, k):
        """Letter index of pair k of the last find."""
        pos = self.out[2 * k]
        return self.cards[4 * slots[pos >> 2] + (pos & 3)]
