# A Table for rule tests: records everything the game does and runs timers in virtual time.


class FakeTable:
    def __init__(self):
        self.t = 0
        self.records = []  # (type, fields)
        self.said = []  # (key, kw)
        self.sounds = []
        self.leds = {}
        self.timers = {}  # name -> due ms
        self.race = None  # reveal_t_us while a race is open
        self.armed = False
        self.finished = False
        self.game = None

    # Table API
    def now_ms(self):
        return self.t

    def log(self, rtype, fields):
        self.records.append((rtype, fields))

    def say(self, key, **kw):
        self.said.append((key, kw))

    def led(self, player, colour, mode="on"):
        self.leds[player] = (colour, mode)

    def sound(self, name):
        self.sounds.append(name)

    def timer(self, name, ms):
        self.timers[name] = self.t + ms

    def cancel(self, name):
        self.timers.pop(name, None)

    def race_open(self, reveal_t_us):
        self.race = reveal_t_us

    def race_close(self):
        self.race = None

    def detector(self, armed):
        self.armed = armed

    def finish(self):
        self.finished = True

    # test helpers
    def advance(self, ms):
        """Move virtual time forward by ms, firing due timers in order."""
        end = self.t + ms
        while True:
            due = [(t, n) for n, t in self.timers.items() if t <= end]
            if not due:
                break
            due.sort()
            t, name = due[0]
            del self.timers[name]
            self.t = t
            self.game.on_timer(name)
        self.t = end

    def types(self):
        return [r[0] for r in self.records]

    def last(self, rtype):
        for r in reversed(self.records):
            if r[0] == rtype:
                return r[1]
        return None
