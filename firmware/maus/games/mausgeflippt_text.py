# Mausgeflippt prompts: 16 characters x 6 lines, ASCII only (the OLED font has no umlauts).
# The words are in maus/texts/mg.<lang>.json, read from flash when shown (maus.text).
from maus.text import Texts

TEXT = Texts("mg")
