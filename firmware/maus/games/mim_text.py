# M is for Mouse prompts: 16 characters x 6 lines, ASCII only (the OLED font has no umlauts; pair names are folded by mim.ascii before they are shown).
# The words are in maus/texts/mim.<lang>.json, read from flash when shown (maus.text).
from maus.text import Texts

TEXT = Texts("mim")
