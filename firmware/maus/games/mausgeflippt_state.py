# Mausgeflippt: the table as the unit can know it (what was tapped, never a hand), and the scores. The
# winners, the summary and the status screen are maus.games.mausgeflippt_moments's, loaded for their moment.
from micropython import const

from maus.games.mausgeflippt_cards import CHEESES, CLOTHING, MICE

_P = const(7)  # per-player lists are indexed by player id 1..6


class TableState:
    def __init__(self, players):
        self.ids = [pl.id for pl in players]  # seating order
        self.young = [False] * _P
        for pl in players:
            self.young[pl.id] = pl.young
        self.mice = [0] * _P  # caught mice
        self.up = [0] * _P  # face-up clothing penalties
        self.down = [0] * _P  # face-down clothing penalties
        self.cheeses = [0] * _P  # cheeses taken
        self.mice_left = MICE  # the stack, the open mouse included
        self.caught = bytearray(MICE + 1)  # by mouse id: 1 = caught from the pad (stack mice stay anonymous)
        self.penalty = bytearray(CLOTHING + 1)  # by clothing id: the player it lies in front of, 0 = none
        self.cheese_used = bytearray(CHEESES + 1)  # by cheese id: 1 = shown (and maybe taken)
        self.cheese_stack = CHEESES  # face down
        self.open_cheese = 0  # cheese id, 0 = none open

    def score(self, p):
        return self.mice[p] - self.up[p] - self.down[p] - 2 * self.cheeses[p]

    def penalty_points(self, p):
        return self.up[p] + self.down[p] + 2 * self.cheeses[p]

    def cheeses_left(self):
        return self.cheese_stack + (1 if self.open_cheese else 0)

    def show_cheese(self, n):
        self.cheese_used[n] = 1
        self.cheese_stack -= 1
        self.open_cheese = n

    def penalise(self, p, card, face_down):
        self.penalty[card] = p
        if face_down:
            self.down[p] += 1
        else:
            self.up[p] += 1

    def catch(self, p, mouse):
        """p catches `mouse` from the pad, or (mouse 0) one from the stack. False when none is left."""
        if self.mice_left == 0:
            return False
        if mouse:
            self.caught[mouse] = 1
        self.mice_left -= 1
        self.mice[p] += 1
        return True

    def take_cheese(self, p, from_stack):
        """p takes the open cheese, or (from_stack) the top face-down one. False when none is left."""
        if from_stack:
            if self.cheese_stack == 0:
                return False
            self.cheese_stack -= 1
        self.cheeses[p] += 1
        return True
