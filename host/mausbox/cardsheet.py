"""Printable card sheets: A4 pages of 3 x 3 card tiles (63 x 88 mm), every field of every card shown.

Text is laid out with the metrics of DejaVu Sans (the font the sheet asks for; the advance widths below
are read from DejaVuSans.ttf / DejaVuSans-Bold.ttf 2.37, 2048 units per em): each text is wrapped or
shrunk until it fits its box, and carries `textLength`, so a renderer that substitutes another font
still squeezes the line into the same width instead of running over the card's edge or the sticker.
Each text also names its box (`data-box="x y w h"`), which the browser test checks.
"""

from __future__ import annotations

from html import escape

_CHARS = (" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"
          "ÄÖÜäöüßéèàâçñ·–—…€")
_REGULAR = (651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303, 1303, 1303,
            1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048, 1401, 1405, 1430, 1577,
            1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401,
            2025, 1403, 1251, 1403, 799, 690, 799, 1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260, 721, 1300, 1298,
            569, 569, 1186, 569, 1995, 1298, 1253, 1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075,
            1303, 690, 1303, 1716, 1401, 1612, 1499, 1255, 1253, 1298, 1290, 1260, 1260, 1255, 1255, 1126, 1298, 651,
            1024, 2048, 2048, 1303)
_BOLD = (713, 934, 1067, 1716, 1425, 2052, 1786, 627, 936, 936, 1071, 1716, 778, 850, 778, 748, 1425, 1425, 1425, 1425,
         1425, 1425, 1425, 1425, 1425, 1425, 819, 819, 1716, 1716, 1716, 1188, 2048, 1585, 1561, 1503, 1700, 1399, 1399,
         1681, 1714, 762, 762, 1587, 1305, 2038, 1714, 1741, 1501, 1741, 1577, 1475, 1397, 1663, 1585, 2259, 1579,
         1483, 1485, 936, 748, 936, 1716, 1024, 1024, 1382, 1466, 1214, 1466, 1389, 891, 1466, 1458, 702, 702, 1362,
         702, 2134, 1458, 1407, 1466, 1466, 1010, 1219, 979, 1458, 1335, 1892, 1321, 1335, 1192, 1458, 748, 1458, 1716,
         1585, 1741, 1663, 1382, 1407, 1458, 1473, 1389, 1389, 1382, 1382, 1214, 1458, 778, 1024, 2048, 2048, 1425)
_UPM = 2048
_WIDTH = {False: dict(zip(_CHARS, _REGULAR)), True: dict(zip(_CHARS, _BOLD))}
FONT = "DejaVu Sans, Verdana, sans-serif"
LINE = 1.25  # line height in font sizes

GAME_NAMES = {"mg": "Mausgeflippt", "mim": "M is for Mouse", "mms": "Mucks Mäuschen Still"}
GAME_CARD_IDS = {"mausgeflippt": "mg", "mim": "mim", "mms": "mms"}
KIND_NAMES = {"mouse": "mouse", "clothing": "clothing item", "cheese": "cheese", "card": "card", "game": "game card"}

CARD_W, CARD_H, COLS, ROWS = 63.0, 88.0, 3, 3
PAGE_W, PAGE_H = 210.0, 297.0
PAD = 4.0
STICKER_R = 12.5


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The advance width of `text` at font size `size` (same unit as size), in DejaVu Sans."""
    table = _WIDTH[bold]
    return sum(table.get(c, 2048) for c in text) * size / _UPM  # unknown glyphs: a full em, never too narrow


def _break(text: str, size: float, width: float, bold: bool) -> tuple[list[str], bool]:
    """Greedy word wrap; a word wider than the line is split after '/', ',' or '-', else by characters
    (then the second value is True: a size that needs that is a last resort)."""
    lines: list[str] = []
    hard = False
    cur = ""
    for word in text.split(" "):
        cand = word if not cur else cur + " " + word
        if text_width(cand, size, bold) <= width:
            cur = cand
            continue
        if cur:
            lines.append(cur)
            cur = ""
        while text_width(word, size, bold) > width:
            cut = 0
            for i in range(len(word), 0, -1):
                if text_width(word[:i], size, bold) <= width:
                    cut = i
                    break
            soft = max(word.rfind(c, 0, cut) for c in "/,-:") + 1
            hard = hard or soft <= 0
            cut = soft if soft > 0 else max(cut, 1)
            lines.append(word[:cut])
            word = word[cut:]
        cur = word
    if cur:
        lines.append(cur)
    return lines, hard


def fit(text: str, width: float, height: float, size: float, min_size: float, bold: bool = False,
        max_lines: int = 99) -> tuple[float, list[str]]:
    """(font size, lines) for text in a width x height box: the largest size from `size` down to `min_size`
    (in 5 % steps) at which the wrapped lines fit; at min_size the lines that fit, the last one ended by '…'."""
    s = size
    while True:
        lines, hard = _break(text, s, width, bold)
        if len(lines) <= max_lines and len(lines) * s * LINE <= height + 1e-9 and (not hard or s <= min_size):
            return s, lines
        if s <= min_size:
            break
        s = max(min_size, s * 0.95)
    n = max(1, min(max_lines, int(height // (s * LINE))))
    lines, _ = _break(text, s, width, bold)
    if len(lines) > n:
        last = lines[n - 1]
        while last and text_width(last + "…", s, bold) > width:
            last = last[:-1]
        lines = lines[:n - 1] + [last + "…"]
    return s, lines


def _text(x: float, y: float, w: float, h: float, text: str, size: float, min_size: float, *, bold=False,
          anchor="start", fill="#000", max_lines=99) -> str:
    """SVG for text laid out in the box (x, y, w, h) (y = top); anchor start or middle."""
    s, lines = fit(text, w, h, size, min_size, bold, max_lines)
    out = []
    tx = x if anchor == "start" else x + w / 2
    for i, line in enumerate(lines):
        base = y + s * (i * LINE + 0.95)  # ascent of DejaVu Sans is ~0.93 em
        tw = min(text_width(line, s, bold), w)
        out.append('<text x="%.2f" y="%.2f" font-size="%.2f"%s text-anchor="%s" fill="%s" textLength="%.2f" '
                   'lengthAdjust="spacingAndGlyphs" data-box="%.2f %.2f %.2f %.2f">%s</text>'
                   % (tx, base, s, ' font-weight="bold"' if bold else "", anchor, fill, tw, x, y, w, h,
                      escape(line)))
    return "".join(out)


def card_fields(game: str, kind: str, item: dict | None, catalog: dict | None) -> list[str]:
    """The lines a card shows besides its kind and number: every field of its catalog entry, in words."""
    if item is None:
        return []
    out = []
    glossary = {}
    if catalog and isinstance(catalog.get("objects"), dict):
        glossary = {v[0]: v[1] for v in catalog["objects"].values() if isinstance(v, list) and len(v) >= 2}
    for k, v in item.items():
        if k == "id":
            continue
        if k == "objects" and glossary:
            v = ["%s (%s)" % (o, glossary[o]) if o in glossary else o for o in v]
        shown = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
        out.append("%s: %s" % (k, shown))
    return out


class Card:
    def __init__(self, ident: str, fields: list[str]):
        self.ident = ident
        bits = ident.split("/")
        if bits[0] == "game":
            self.game = GAME_CARD_IDS.get(bits[1], bits[1])
            self.kind = "game"
            self.number = GAME_NAMES.get(self.game, bits[1])
        else:
            self.game, self.kind = bits[0], bits[1]
            self.number = bits[2] if len(bits) > 2 else ""
        self.fields = fields


def tile(card: Card, x: float, y: float) -> str:
    w, h = CARD_W, CARD_H
    inner = w - 2 * PAD
    parts = ['<g font-family="%s"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999" '
             'stroke-width="0.2" stroke-dasharray="1,1"/>' % (FONT, x, y, w, h)]
    head = "%s · %s" % (GAME_NAMES.get(card.game, card.game), KIND_NAMES.get(card.kind, card.kind))
    parts.append(_text(x + PAD, y + 3.5, inner, 5.5, head, 4.2, 2.6, fill="#333", max_lines=1))
    big = 16.0 if card.kind != "game" else 11.0
    parts.append(_text(x + PAD, y + 12, inner, 22, card.number, big, 5.0, bold=True, anchor="middle", max_lines=2))
    fy, fh = y + 36, h - 36 - (2 * STICKER_R + 6)  # above the sticker
    if card.fields:
        per = fh / len(card.fields)
        for i, line in enumerate(card.fields):
            parts.append(_text(x + PAD, fy + i * per, inner, per, line, 3.6, 2.2))
    cx, cy = x + w - PAD - STICKER_R, y + h - PAD - STICKER_R
    parts.append('<circle cx="%.2f" cy="%.2f" r="%.1f" fill="none" stroke="#bbb" stroke-width="0.3"/>'
                 % (cx, cy, STICKER_R))
    parts.append(_text(cx - 8, cy - 1.5, 16, 3, "sticker", 2.5, 2.0, anchor="middle", fill="#999", max_lines=1))
    id_w = cx - STICKER_R - 1.5 - (x + PAD)  # left of the sticker circle
    parts.append(_text(x + PAD, y + h - PAD - 7, id_w, 7, "mausbox:" + card.ident, 3.0, 1.8, fill="#555",
                       max_lines=2))
    parts.append("</g>")
    return "".join(parts)


def pages(cards: list[Card], title: str) -> list[str]:
    """One SVG document per A4 page (210 x 297 mm)."""
    x0, y0 = (PAGE_W - COLS * CARD_W) / 2, (PAGE_H - ROWS * CARD_H) / 2
    per = COLS * ROWS
    total = (len(cards) + per - 1) // per
    out = []
    for p in range(0, len(cards), per):
        parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="210mm" height="297mm" viewBox="0 0 210 297">',
                 _text(x0, y0 - 7, COLS * CARD_W, 5, "%s, page %d of %d" % (title, p // per + 1, total), 3.5, 2.5,
                       anchor="middle", fill="#555", max_lines=1).replace("<text ", '<text font-family="%s" ' % FONT)]
        for i, card in enumerate(cards[p:p + per]):
            parts.append(tile(card, x0 + (i % COLS) * CARD_W, y0 + (i // COLS) * CARD_H))
        parts.append("</svg>\n")
        out.append("".join(parts))
    return out


def html(svg_pages: list[str], title: str) -> str:
    """Every page in one file that prints as A4 pages from a browser."""
    head = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s</title><style>'
            '@page { size: A4; margin: 0 } body { margin: 0 } '
            'svg { display: block; page-break-after: always; break-after: page }'
            '</style></head><body>\n' % escape(title))
    return head + "".join(svg_pages) + "</body></html>\n"
