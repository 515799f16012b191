# A player at the table (maus.game names it too): its own module, so the menu joins players without
# loading the game contract.
from micropython import const

# Player colours, by player id 1..6 (index 0 unused). The LEDs show them; the log records them.
_COLOURS = const(("", "red", "blue", "green", "yellow", "purple", "cyan"))


class Player:
    __slots__ = ("id", "young", "colour")

    def __init__(self, pid, young=False):
        self.id = pid
        self.young = young
        self.colour = _COLOURS[pid]

    def as_log(self):
        return {"id": self.id, "colour": self.colour, "young": self.young}
