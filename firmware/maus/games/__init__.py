# The rules of each game: pure state machines (see maus.game for the contract).
