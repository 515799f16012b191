# M is for Mouse prompts: both languages have the same keys, every prompt is ASCII (the OLED font has no
# umlauts) and fits the 16 x 6 display with the longest values it can get.
from maus.games.mim.engine import ascii
from maus.games.mim.rules import TEXT
from maus.unit.feedback import wrap as _wrap
from test_mim_kit import CAT


def _longest(lang):
    return max((ascii(CAT.pair_text(i, lang)) for i in range(23)), key=len)


def test_both_languages_have_the_same_prompts():
    assert sorted(TEXT["en"]) == sorted(TEXT["de"])


def test_prompts_are_ascii_and_fit_the_display():
    for lang in ("en", "de"):
        kw = {"p": 6, "q": 5, "n": 22, "i": 4, "left": 22, "l": "W", "on": "Computer", "pair": _longest(lang),
              "text": "\n".join(["P6: 15 chips -"] * 6)}
        for key, fmt in TEXT[lang].items():
            s = fmt.format(**kw)
            for ch in s:
                assert 32 <= ord(ch) < 127 or ch == "\n", (lang, key, s)
            lines = _wrap(s)
            assert len(lines) <= 6 and max(len(x) for x in lines) <= 16, (lang, key, lines)


def test_pairs_shown_in_ascii():
    for i in range(23):
        for lang in ("de", "en"):
            s = ascii(CAT.pair_text(i, lang))
            assert all(ord(ch) < 127 for ch in s), s
