"""The season bench's host side (bench/bench_season.py): the games as scenario actions, and the host on the line.

- season(): N games back to back as one scenario (actions by virtual time), mixed over every game, variant and
  player count, each played by the scenario generators of tests/scenarios (*-make.py: their own oracles give
  each game's expected end) with seeded random choices.
The host on the line and the unit's process are tests/host/seasonhost.py's (shared with
tests/host/test_season_fullflash.py).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "tests" / "scenarios"
GAP_MS = 3000  # between a game's last action and the next game's card


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), SCEN / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_MODS: dict = {}


def _mod(name: str):
    if name not in _MODS:
        if name == "mg-make":
            for p in (str(ROOT / "firmware"), str(ROOT / "host")):
                if p not in sys.path:
                    sys.path.insert(0, p)
        _MODS[name] = _load(name)
    return _MODS[name]


@dataclass
class Game:
    kind: str  # "mg-4p", "mim-b-3p", "mms-2p"
    actions: list[dict]  # at_ms from the game's own start
    length_ms: int
    expect: dict = field(default_factory=dict)  # scores, winners, reason


def _lines(lines) -> list[dict]:
    out = []
    for x in lines:
        if isinstance(x, dict):
            out.append(dict(x))
        elif x and not x.startswith("#"):
            out.append(json.loads(x))
    return out


def mg_game(r: random.Random, n: int) -> Game:
    """Mausgeflippt, n players (any of them young), random rounds in the generator's own moves: claims by one
    to three players (ties), right and wrong items, collections, nobody, false starts."""
    m = _mod("mg-make")
    young = tuple(p for p in range(2, n + 1) if r.random() < 0.2)
    g = m.Game(n, young=young)
    rounds = 0
    while not g.done:
        rounds += 1
        if rounds > 60:
            raise RuntimeError("mg: no end")
        prot = r.random() < 0.8  # mostly protected mice: the last cheese ends the game in a dozen rounds
        if g.pick(prot) is None:
            prot = not prot
        x = r.random()
        if x < 0.06:
            claims = []
        else:
            k = 1 if x < 0.7 else 2 if x < 0.92 else min(3, n)
            who = r.sample(g.ids, k)
            claims = []
            for p in who:
                y = r.random()
                if y < 0.75:
                    act = ("item", True)
                elif y < 0.85:
                    act = ("item", False)
                elif y < 0.93 and g.down[p] < 3:
                    act = ("coll", 0, 4 if p in young else 7)
                else:
                    act = ("slow",)
                claims.append((p, act))
        others = [p for p in g.ids if p not in {c[0] for c in claims}]
        fs = r.choice(others) if others and r.random() < 0.08 else None
        g.round(prot, claims, false_start=fs)
    g.lines.sort(key=lambda d: d["at_ms"])
    return Game(f"mg-{n}p", _lines(g.lines), g.t, g.expect())


def mim_game(variant: str, n: int) -> Game:
    """M is for Mouse, variant A, B or C, n players: the generator's game for that variant and count."""
    m = _mod("mim-make")
    got: list = []

    def keep(self, name, scores, winners, reason):
        got.append((self, {"scores": {str(p): s for p, s in scores.items()}, "winners": winners, "reason": reason}))

    m.Script.write = keep
    {"A": m.variant_a, "B": m.variant_b, "C": m.variant_c}[variant](n)
    s, exp = got[0]
    return Game(f"mim-{variant.lower()}-{n}p", _lines(s.lines), s.t, exp)


def mms_game(r: random.Random, n: int) -> Game:
    """Mucks Mäuschen Still, n players, random turns: mostly sticks placed, alarms (reported, timed out, sticks
    sliding off), passes, quiet insertions, a stick falling on one's own turn."""
    m = _mod("mms-make")
    got: list = []

    def keep(self, name):
        self.t += 2000
        got.append(self)

    m.Script.write = keep
    s = m.Script(n, r.randint(1, n), "season")
    turns = 0
    while s.done is None:
        turns += 1
        if turns > 120:
            raise RuntimeError("mms: no end")
        x = r.random()
        if x < 0.74:
            s.play("place")
        elif x < 0.80:
            s.play("alarm", round(r.uniform(0.1, 0.8), 2))
        elif x < 0.82:
            s.play("alarm_wait", round(r.uniform(0.1, 0.8), 2))
        elif x < 0.86:
            s.play("pass")
        elif x < 0.92:
            s.play("quiet", round(r.uniform(0.05, 0.2), 2))
        elif x < 0.96 and s.castle >= 1:
            s.play("slid", 0.3, r.randint(1, min(2, s.castle)))
        elif s.castle > 0:
            s.play("fell")
        else:
            s.play("place")
    s.write("season")
    s = got[0]
    return Game(f"mms-{n}p", _lines(s.lines), s.t, {"scores": {str(p): v for p, v in s.sticks.items()}, **s.done})


# Every game, variant and player count the unit offers (maus.unit.shared.GAMES) that the generators play: Mausgeflippt
# 2-6, M is for Mouse A 2-5, B 3-5 (P3 leads), C 4-5 (its script's claims need P4), Mucks Mäuschen Still 2-4.
KINDS = ([("mg", n) for n in range(2, 7)] + [("mim-A", n) for n in range(2, 6)] + [("mim-B", n) for n in range(3, 6)]
         + [("mim-C", n) for n in (4, 5)] + [("mms", n) for n in range(2, 5)])


def one(r: random.Random, kind: str, n: int) -> Game:
    if kind == "mg":
        return mg_game(r, n)
    if kind == "mms":
        return mms_game(r, n)
    return mim_game(kind[-1], n)


# The cheaper games (on the unix port, a fifth to a half of the real time of a Mucks Mäuschen Still game or of
# variant B's whole deck): they fill each block of BLOCK games beside one game of every kind, so 300 games fit
# the bench's ten minutes.
LIGHT = [("mg", n) for n in range(2, 7)] + [("mim-A", n) for n in range(2, 6)]
BLOCK = 30


def games(count: int, seed: int = 27) -> list[Game]:
    """`count` games in blocks of BLOCK: every kind of KINDS once, the rest drawn from LIGHT, in a seeded random
    order."""
    r = random.Random(seed)
    out: list[Game] = []
    cache: dict = {}
    while len(out) < count:
        order = list(KINDS) + [r.choice(LIGHT) for _ in range(BLOCK - len(KINDS))]
        r.shuffle(order)
        for kind, n in order:
            if len(out) == count:
                break
            if kind.startswith("mim"):  # the generator's game is fixed: made once
                if (kind, n) not in cache:
                    cache[(kind, n)] = one(r, kind, n)
                out.append(cache[(kind, n)])
                continue
            for _ in range(20):
                try:
                    out.append(one(r, kind, n))
                    break
                except (IndexError, AssertionError, RuntimeError):
                    continue  # the generator ran out of cards or moves for this draw: another draw
            else:
                raise RuntimeError(f"no {kind} {n}p game")
    return out


@dataclass
class Plan:
    games: list[Game]
    starts: list[int]  # each game's start (its card tapped), virtual ms
    ends: list[int]  # its last action
    polled: list[bool]  # `status` twice a second through it
    pulls: list[tuple[int, int]]  # (virtual ms, games done before it)
    actions: list[dict]


def plan(gs: list[Game], pull_every: int = 10, poll_every: int = 3, poll_ms: int = 500, t0: int = 3000) -> Plan:
    """The season's scenario: the games back to back, `status` every poll_ms through every poll_every-th game, a
    pull after every pull_every games; every third pull is asked for in the game after (it waits for its end)."""
    acts: list[dict] = [{"at_ms": 500, "host": {"op": "hello", "host": "season", "proto": 1}}]
    starts, ends, polled, pulls = [], [], [], []
    seen: dict[str, int] = {}
    t = t0
    for i, g in enumerate(gs):
        start = t
        starts.append(start)
        end = start + g.length_ms
        ends.append(end)
        acts.append({"at_ms": start, "season": "game", "n": i + 1, "family": g.kind.split("-")[0]})
        for a in g.actions:
            b = dict(a)
            b["at_ms"] = start + a["at_ms"]
            acts.append(b)
        # every poll_every-th game of each kind: the polled games and the others hold the same mix of games
        seen[g.kind] = seen.get(g.kind, 0) + 1
        poll = seen[g.kind] % poll_every == 2 % poll_every
        polled.append(poll)
        if poll:
            acts.append({"at_ms": start, "season": "polled", "on": 1})
            for k in range(start + 250, end + 1000, poll_ms):
                acts.append({"at_ms": k, "host": {"op": "status"}})
            acts.append({"at_ms": end + 1000, "season": "polled", "on": 0})
        t = end + GAP_MS
        done = i + 1
        if done % pull_every == 0 or done == len(gs):
            np = done // pull_every
            if np % 3 == 0 and done < len(gs):  # in the next game, a few seconds after its start
                pulls.append((t + 20000, done))
            else:
                pulls.append((end + 1500, done))
    for at, _ in pulls:
        acts.append({"at_ms": at, "host": {"op": "hello", "host": "season", "proto": 1}})
        acts.append({"at_ms": at, "host": {"op": "logs"}})
    acts.sort(key=lambda a: a["at_ms"])
    return Plan(gs, starts, ends, polled, pulls, acts)
