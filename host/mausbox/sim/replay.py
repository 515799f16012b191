"""`mausbox sim --replay LOG`: play a pulled game log's physical events again on the virtual unit and
check that every verdict comes out the same (settling a dispute after a real game). See docs/replay.md.

Over 600 lines on purpose: turning a log of any of the three games into a scenario and comparing every
verdict is one job; each game's part is a function of its own.

The log is turned into a scenario: the game card, the variant, the same players joining (young ones
holding their button), the double press that starts, then every button press at its reveal time plus
its logged offset, every card tap, every alarm as a hard knock, and the gestures (click, double, long)
that the game's records imply. The judged records (verdict, score, claim, game_end) of the replay are
then compared with the original's, in order. When the first run does not agree, later runs put each
press at the reveal the previous run measured, plus its offset, until the placement no longer moves.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from maus.log import check as logcheck
from maus.settings import values as fw_settings
from maus.unit.begin import load_game
from maus.unit.shared import GAMES

from mausbox.sim import run as simrun

EXIT_MATCH, EXIT_MISMATCH, EXIT_DAMAGED = 0, 1, 2
JUDGED = ("verdict", "score", "claim", "game_end")
START_FIELDS = ("game", "variant", "players", "settings")
IGNORED_FIELDS = ("seq", "t", "crc", "offset_us")  # timing: µs differences are expected, the judgement is not
MAX_RUNS = 4  # runs that refine the press placement
MAX_CHOICE_RUNS = 12  # further runs that look for the clicks behind pairs chosen on the unit (mim)
MAX_CLICKS = 6
PRESS_MS = 80  # how long a replayed press is held
SETTLE_MS = 4  # edge to confirmed press (settle time plus a main-loop pass)
KNOCK = 0.8  # an alarm is replayed as a knock this strong (well over any threshold)
KNOCK_MS = 40
KNOCK_LEAD_MS = 10  # a knock is seen this long after it starts
# A record's ms may trail the event by a busy main loop: settle time, a display refresh (23 ms) and a
# flash sector erase (45 ms, docs/capture.md's timing model) before it.
REF_SLACK_MS = 60  # a press's logged ms may trail its edge by this much
GESTURE_SLACK_MS = 60  # a logged press this close to where a gesture must start is that gesture's press
# A record caused by a card on the pad (a pair's verdict) follows the tap's record within a main-loop pass on
# a board: 3-9 ms measured in real games, up to a display refresh and a sector erase (REF_SLACK_MS) on a busy
# one. A pair chosen on the unit instead comes a whole long press (1 s) after the last tap.
CAUSE_MS = REF_SLACK_MS
CARD_HOLD_MS = 300  # a card stays on the pad this long unless the same card comes again sooner
TAP_LEAD_MS = 25  # the pad is scanned every 50 ms: a card is logged about this long after it is put down


class ReplayError(Exception):
    """The log cannot be replayed (not a game the firmware knows, no players...)."""


def _game_key(game: str) -> str:
    for key in GAMES:
        if key == game or load_game(key)[1].GAME == game:
            return key
    raise ReplayError(f"the log is of game {game!r}, which this firmware does not know")


# --- reading the original ---------------------------------------------------------------------------


def check_log(data: bytes):
    """(logread.Checker, lines): lines[n - 1] is line n as text."""
    rep = logcheck.read(data)
    lines = data.decode("utf-8", "replace").split("\n")
    return rep, lines


# --- the scenario ----------------------------------------------------------------------------------------


class Plan:
    """The scenario for one run, and what each replayed press is meant to reproduce."""

    def __init__(self):
        self.actions: list[dict] = []
        self.presses: list[tuple[tuple, int, int]] = []  # (moment its offset counts from, player, virtual ms)
        self.t0_est = 0.0  # virtual ms where the game should start
        self.choices: dict[int, int] = {}  # seq of a verdict chosen on the unit -> clicks replayed before it
        self._plain: list[tuple[int, int, tuple]] = []  # (ms, player, its two actions)

    def add(self, at_ms: float, **act):
        act["at_ms"] = max(0, int(round(at_ms)))
        self.actions.append(act)
        return act

    def press(self, at_ms: int, p: int, hold_ms: int = PRESS_MS):
        """A press that a press record shows (or the unit's menus need)."""
        acts = (self.add(at_ms, press=p), self.add(at_ms + hold_ms, release=p))
        self._plain.append((acts[0]["at_ms"], p, acts))

    def _start(self, at_ms: float, p: int) -> int:
        # A gesture whose press is also logged (a game that logs every press): that press is the gesture's
        # first, so it goes where the log put it and is not pressed twice.
        at = int(round(at_ms))
        for i, (t, q, acts) in enumerate(self._plain):
            if q == p and abs(t - at) <= GESTURE_SLACK_MS:
                del self._plain[i]
                self.actions = [a for a in self.actions if a is not acts[0] and a is not acts[1]]
                return t
        return at

    def _tap(self, at_ms: float, p: int, hold_ms: int):
        at = self._start(at_ms, p)
        self.add(at, press=p)
        self.add(at + hold_ms, release=p)

    def click(self, t_ms: float, p: int, timing: dict):
        # a click is sent once the double-press window after the release has passed
        self._tap(t_ms - (PRESS_MS + timing["double"] + SETTLE_MS + 2), p, PRESS_MS)

    def double(self, t_ms: float, p: int):
        at = self._start(t_ms - SETTLE_MS - 160, p)
        self.add(at, press=p)
        self.add(at + 60, release=p)
        self._tap(at + 160, p, 60)

    def long(self, t_ms: float, p: int, timing: dict):
        at = self._start(t_ms - timing["long"] - SETTLE_MS, p)
        self.add(at, hold=p, ms=timing["long"] + 200)

    def text(self) -> str:
        acts = sorted(self.actions, key=lambda a: a["at_ms"])
        return "".join(json.dumps(a) + "\n" for a in acts)


def _settings(cfg) -> dict:
    """The settings a log's game_start names, checked as the unit checks settings.json."""
    if not isinstance(cfg, dict):
        raise ReplayError("game_start settings is not an object")
    d = fw_settings.defaults()
    for k, v in cfg.items():
        if k in d:
            why = fw_settings.check(k, v)
            if why:
                raise ReplayError(f"game_start setting {k}: {why}")
            d[k] = v
    return d


def _check_start(start: dict) -> None:
    players = start.get("players")
    if not isinstance(players, list) or not players:
        raise ReplayError("game_start lists no players")
    seen = set()
    for pl in players:
        pid = pl.get("id") if isinstance(pl, dict) else None
        if type(pid) is not int or not 1 <= pid <= 6 or pid in seen:
            raise ReplayError(f"game_start has a player {pl!r}: ids 1..6, each once, expected")
        seen.add(pid)
    _settings(start.get("settings") or {})


def _timing(cfg: dict) -> dict:
    d = _settings(cfg or {})
    return {"double": d["double_press_ms"], "long": d["long_press_ms"], "young": d["young_hold_ms"],
            "tie": d["tie_window_us"], "settings": d}


def prelude(plan: Plan, start: dict, key: str, timing: dict) -> float:
    """Game card, variant, joining, the starting double press. Returns the virtual ms of game_start."""
    g = GAMES[key]
    plan.add(500, tap=g[0])
    plan.add(800, remove=g[0])
    at = 1500
    variants = g[4]
    if len(variants) > 1:
        v = start.get("variant")
        if v not in variants:
            raise ReplayError(f"variant {v!r} is not one of {', '.join(map(str, variants))}")
        for _ in range(variants.index(v)):
            plan.press(at, 1)
            at += PRESS_MS + timing["double"] + 300
        plan.add(at, hold=1, ms=timing["long"] + 300)
        at += timing["long"] + 800
    _check_start(start)
    players = sorted(start["players"], key=lambda pl: pl["id"])
    if not g[2] <= len(players) <= g[3]:
        raise ReplayError(f"{len(players)} players: the unit takes {g[2]}..{g[3]} for this game")
    for pl in players:
        pid = pl["id"]
        if pl.get("young") and g[5]:
            hold = timing["young"] + 400
            plan.add(at, hold=pid, ms=hold)
            at += hold + 300
        else:
            plan.press(at, pid)
            at += PRESS_MS + 220
    at += timing["double"] + 400  # the last join press is no half of the double
    first = players[0]["id"]
    plan.press(at, first, 60)
    plan.press(at + 160, first, 60)
    return at + 160 + SETTLE_MS


def _press_refs(recs: list[dict]) -> dict[int, tuple[tuple, float]]:
    """seq of each press record with a usable offset -> (key of the moment its offset counts from, that
    moment in the log's ms). Mostly the last reveal; a game may also restart its race clock without a
    reveal record (M is for Mouse, variant C): such a moment is found from the presses themselves."""
    out: dict[int, tuple[tuple, float]] = {}
    k, t_rev = -1, 0
    hidden: list[float] = []
    for r in recs:
        if r["type"] == "reveal":
            k, t_rev = k + 1, r["t"]
            continue
        off = r.get("offset_us")
        if r["type"] != "press" or type(off) is not int or (off == -1 and r.get("false_start")):
            continue
        if k >= 0 and (abs(r["t"] - SETTLE_MS - (t_rev + off / 1000)) <= REF_SLACK_MS
                       or (off < 0 and 0 <= r["t"] - t_rev <= REF_SLACK_MS)):  # early presses: logged with
            # the reveal (a few ms after it on a board: each record before them is a flash write)
            out[r["seq"]] = (("reveal", k), t_rev + 0.5)
            continue
        ref = r["t"] - SETTLE_MS - off / 1000
        j = next((i for i, h in enumerate(hidden) if abs(h - ref) <= REF_SLACK_MS), len(hidden))
        if j == len(hidden):
            hidden.append(ref)
        out[r["seq"]] = (("race", j), hidden[j])
    return out


def _place_group(presses: list[tuple[int, int, int]], reveal_us: int, tie_us: int) -> list[int]:
    """Whole-ms times for presses [(player, offset_us, i)] after a reveal at reveal_us (virtual µs) that
    keep each one's side of the reveal (false start or not), the order, and who ties with the first."""
    out = {}
    valid = sorted((o, p, i) for p, o, i in presses if o >= 0)
    early = [(o, p, i) for p, o, i in presses if o < 0]
    first_ok = -(-reveal_us // 1000)  # the first ms at or after the reveal
    for o, _p, i in early:
        out[i] = min((reveal_us + o + 500) // 1000, first_ok - 1)
    if valid:
        b_o = valid[0][0]
        b = max((reveal_us + b_o + 500) // 1000, first_ok)
        out[valid[0][2]] = b
        prev_ms, prev_p, prev_o = b, valid[0][1], b_o
        for o, p, i in valid[1:]:
            ms = max((reveal_us + o + 500) // 1000, first_ok)
            if o - b_o <= tie_us:  # ties with the first: stay within the window
                ms = min(ms, b + tie_us // 1000)
            else:
                ms = max(ms, b + tie_us // 1000 + 1)
            if o > prev_o and (ms < prev_ms or (ms == prev_ms and p < prev_p)):
                ms = prev_ms + 1  # keep the order (same ms: the lower player id counts as first)
            out[i] = ms
            prev_ms, prev_p, prev_o = ms, p, o
    return [out[i] for _p, _o, i in presses]


def build(recs: list[dict], key: str, t0: float, reveals_us: dict[tuple, int], warnings: list[str],
          clicks: dict[int, int] | None = None) -> Plan:
    """The scenario for recs (the original's good records) with the game starting at virtual ms t0 and
    the moments presses count from at reveals_us (key -> virtual µs; missing: estimated from the original)."""
    start = recs[0]
    timing = _timing(start.get("settings") or {})
    plan = Plan()
    plan.t0_est = prelude(plan, start, key, timing)
    refs = _press_refs(recs)
    game = str(start.get("game"))
    ids = {pl["id"] for pl in start["players"]}

    def ref_us(key: tuple, est_ms: float) -> int:
        if key in reveals_us:
            return reveals_us[key]
        # not measured yet: where the original had it
        return int((t0 + est_ms) * 1000)

    # button presses by reveal, placed as a group
    groups: dict[tuple, list] = {}
    est: dict[tuple, float] = {}
    for r in recs:
        if r["type"] != "press":
            continue
        p, off = r.get("player"), r.get("offset_us")
        if type(p) is not int or p not in ids or type(off) is not int:
            warnings.append(f"seq {r['seq']}: press without a player or offset: left out")
            continue
        if r["seq"] not in refs:
            plan.press(int(t0 + r["t"] - SETTLE_MS), p)  # pressed before the card: only the ms is known
            continue
        k, est[k] = refs[r["seq"]]
        groups.setdefault(k, []).append((p, off, r["seq"]))
    for k, grp in groups.items():
        times = _place_group(grp, ref_us(k, est[k]), timing["tie"])
        for (p, _o, _s), ms in zip(grp, times):
            plan.press(ms, p)
            plan.presses.append((k, p, ms))

    # cards: on the pad at the logged time, off again before they come back
    taps = [r for r in recs if r["type"] == "tap"]
    before = {}  # seq of a tap -> t of the last record in an earlier ms
    last = prev_t = 0
    for r in recs:
        if r["t"] != prev_t:
            last, prev_t = prev_t, r["t"]
        before[r["seq"]] = last
    for n, r in enumerate(taps):
        ident = r.get("identity")
        if not isinstance(ident, str) or not ident:
            warnings.append(f"seq {r['seq']}: a card with no identity (uid {r.get('uid')}) cannot be replayed")
            continue
        try:
            simrun._check_ident(ident, f"seq {r['seq']}")
        except simrun.ScenarioError as e:
            warnings.append(f"{e}: left out")
            continue
        # The unit logs a card at the scan that found it, on average TAP_LEAD_MS after it was put down; so
        # is the replay's. Never before the record before it: the game may not have been ready for it.
        at = t0 + max(r["t"] - TAP_LEAD_MS, min(r["t"], before[r["seq"]] + 5))
        off = at + CARD_HOLD_MS
        for later in taps[n + 1:]:
            if later.get("identity") == ident:
                off = min(off, t0 + later["t"] - 200)
                break
        plan.add(at, tap=ident)
        plan.add(max(off, at + 60), remove=ident)

    for r in recs:
        if r["type"] == "settings":
            warnings.append(f"seq {r['seq']}: setting {r.get('key')} changed during the game; the replay keeps "
                            "the settings the game started with")
    _gestures(plan, recs, game, t0, timing, clicks or {})
    return plan


def _same_t(recs: list[dict], n: int, within_ms: int = CAUSE_MS) -> list[str]:
    """Types of the records logged before recs[n] for the same event: a chain of records, each written within
    within_ms of the one before (on a board every record is a flash write of ~1.4 ms, and the main loop that
    writes them may be a pass late: CAUSE_MS)."""
    out = []
    i = n - 1
    while i >= 0 and 0 <= recs[i + 1]["t"] - recs[i]["t"] <= within_ms:
        out.append(recs[i]["type"])
        i -= 1
    return out


def _gestures(plan: Plan, recs: list[dict], game: str, t0: float, timing: dict, clicks: dict[int, int]):
    """Presses that no press record shows, read from the records they caused (per game)."""
    ids = {pl["id"] for pl in recs[0]["players"]}
    last_alarm = None
    # mms: after an alarm the next turn comes by itself after report_ms, or sooner with a click
    report_ms = getattr(load_game("mms")[1], "report_ms", 4000) if game == "mms" else 0
    for n, r in enumerate(recs):
        typ, p, t = r["type"], r.get("player"), t0 + r["t"]
        prev = recs[n - 1] if n else {}
        same_t = _same_t(recs, n)
        if typ == "alarm":
            plan.add(t - KNOCK_LEAD_MS, knock=KNOCK, ms=KNOCK_MS)
            last_alarm = r["t"]
            continue
        if game == "mim" and typ == "reveal" and r.get("card") is None and type(r.get("by")) is int \
                and r["by"] in ids:
            plan.press(int(t - SETTLE_MS), r["by"])  # the start signal of a round (variant C)
            continue
        if type(p) is not int or p not in ids:
            continue
        if game == "mg":
            if typ == "claim" and r.get("call") == "mausgeflippt":
                plan.double(t, p)
            elif typ == "verdict" and str(r.get("reason")).startswith("blocked"):
                plan.double(t, p)  # a "Mausgeflippt!" call refused
            elif typ == "verdict" and "collection" in str(r.get("reason")) and "timeout" not in same_t:
                plan._tap(t - SETTLE_MS, p, PRESS_MS)  # the claimant ends the collection (if not logged)
        elif game == "mms":
            if typ == "claim" and r.get("what") in ("starts", "attempt"):
                plan.click(t, p, timing)
            elif typ == "verdict" and r.get("reason") == "placed":
                plan.click(t, p, timing)
            elif typ == "verdict" and r.get("reason") == "no_holes":
                plan.long(t, p, timing)
            elif typ == "castle" and r.get("why") == "slid_off":
                plan.double(t, p)
                if last_alarm is not None:
                    last_alarm = r["t"]  # reported after an alarm: the report time starts again
            elif typ == "dice" or (typ == "prompt" and r.get("what") == "attempt" and prev.get("type") != "dice"):
                if last_alarm is not None and r["t"] - last_alarm < report_ms - 20:
                    plan.click(t, p, timing)  # the next player did not wait for the report time
                last_alarm = None
        elif game == "mim":
            if typ == "note" and r.get("text") == "leader":
                plan.long(t, p, timing)
            elif typ == "claim" and r.get("pass"):
                plan.long(t, p, timing)
            elif typ == "verdict" and r.get("ok") and r.get("reason") == "pair" and "tap" not in same_t:
                # chose among several pairs: clicks step through them, a long press takes one. The log
                # names the pair but not the clicks: the replay tries 0, 1, 2... clicks (see replay_log)
                at = t - timing["long"] - SETTLE_MS
                if not any(x["type"] == "press" and x.get("player") == p
                           and abs(t0 + x["t"] - SETTLE_MS - at) <= GESTURE_SLACK_MS for x in recs[max(0, n - 8):n]):
                    k = clicks.get(r["seq"], 0)  # the game does not log these presses: search
                    plan.choices[r["seq"]] = k
                    step = PRESS_MS + timing["double"] + 120
                    for j in range(k, 0, -1):
                        plan.press(int(at - j * step), p)
                plan.long(t, p, timing)
    return plan


# --- running and measuring ---------------------------------------------------------------------------------


def _fresh(root: Path, cfg: dict):
    for name in ("logs", "settings.json", "settings.bak", "status.json", "clock.json", "calib.json"):
        p = root / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    if cfg and cfg != fw_settings.defaults():
        root.mkdir(parents=True, exist_ok=True)
        vals = _settings(cfg)
        fw_settings.Settings(str(root)).save(vals)  # checked by _settings before


def run_plan(plan: Plan, root: Path, cfg: dict, heap: str):
    """Run the plan's scenario; -> (exit code, console lines, replay log path or None)."""
    _fresh(root, cfg)
    root.mkdir(parents=True, exist_ok=True)
    scen = root / "replay-scenario.jsonl"
    scen.write_text(plan.text())
    rc, lines = simrun.run_scenario(scen, root, heap=heap)
    logs = simrun.logs_in(root)
    return rc, lines, (logs[0] if logs else None)


def measure(plan: Plan, recs: list[dict]) -> tuple[int | None, dict[tuple, int]]:
    """From a replay's records: the virtual ms of its game_start, and each reveal's virtual µs (found from
    the presses placed after it: press time minus the offset the replay logged)."""
    if not recs or recs[0]["type"] != "game_start":
        return None, {}
    t0 = recs[0].get("ticks")
    refs = _press_refs(recs)
    mine: dict[tuple, list[int]] = {}
    for k, p, ms in sorted(plan.presses, key=lambda x: x[2]):
        mine.setdefault((k, p), []).append(ms)
    seen: dict[tuple, int] = {}
    out: dict[tuple, int] = {}
    for r in recs:
        if r["seq"] not in refs or type(r.get("player")) is not int:
            continue
        kp = (refs[r["seq"]][0], r["player"])
        n = seen.get(kp, 0)
        seen[kp] = n + 1
        placed = mine.get(kp, [])
        if n < len(placed) and kp[0] not in out:
            out[kp[0]] = placed[n] * 1000 - r["offset_us"]
    return t0, out


# --- comparing ------------------------------------------------------------------------------------------------


def judged(recs: list[dict]) -> list[dict]:
    return [r for r in recs if r["type"] in JUDGED]


def _strip(r: dict) -> dict:
    return {k: v for k, v in r.items() if k not in IGNORED_FIELDS}


def compare(orig: list[dict], replay: list[dict], ended: bool) -> dict:
    """Judged records in order. ended: the original finished (else only its prefix must match)."""
    counts: dict[str, int] = {}
    for k in START_FIELDS:  # the same game, players and settings, or nothing after it can be trusted
        if orig[0].get(k) != replay[0].get(k):
            return {"match": False, "compared": counts, "original": orig[0], "replay": replay[0],
                    "differs": [f"game_start {k}: {json.dumps(orig[0].get(k))} vs {json.dumps(replay[0].get(k))}"]}
    a, b = judged(orig), judged(replay)
    for i, ra in enumerate(a):
        if i >= len(b):
            return {"match": False, "compared": counts, "index": i, "original": ra, "replay": None,
                    "differs": ["missing in the replay"]}
        rb = b[i]
        sa, sb = _strip(ra), _strip(rb)
        if sa != sb:
            keys = sorted(set(sa) | set(sb))
            diff = [f"{k}: {json.dumps(sa.get(k))} vs {json.dumps(sb.get(k))}" for k in keys if sa.get(k) != sb.get(k)]
            return {"match": False, "compared": counts, "index": i, "original": ra, "replay": rb, "differs": diff}
        counts[ra["type"]] = counts.get(ra["type"], 0) + 1
    if ended and len(b) > len(a):
        return {"match": False, "compared": counts, "index": len(a), "original": None, "replay": b[len(a)],
                "differs": ["only in the replay"]}
    return {"match": True, "compared": counts}


def _records(path: Path | None) -> tuple[list[dict], list[str]]:
    if path is None:
        return [], []
    data = path.read_bytes()
    rep = logcheck.read(data)
    return rep.records, data.decode("utf-8", "replace").split("\n")


# --- the command -------------------------------------------------------------------------------------------------


def replay_log(log: Path, root: Path, heap: str = "512k", echo=None) -> dict:
    """Replay LOG on a virtual unit in root/replay; -> the result (see docs/replay.md)."""
    res: dict = {"log": str(log), "exit": EXIT_DAMAGED, "problems": [], "warnings": []}
    try:
        data = log.read_bytes()
    except OSError as e:
        res["problems"] = [{"line": 0, "what": "unreadable", "detail": e.strerror or str(e)}]
        return res
    rep, lines = check_log(data)
    bad = rep.damaged()
    if bad or rep.start is None:
        res["problems"] = [{"line": p.line, "what": p.what, "detail": p.detail,
                            "text": lines[p.line - 1][:300] if 0 < p.line <= len(lines) else ""}
                           for p in (bad or rep.problems)]
        return res
    recs = rep.records
    ended = rep.end is not None and rep.end["type"] == "game_end"
    if rep.end is None:
        res["warnings"].append("the log has no game_end: the verdicts up to its last record are compared")
    elif rep.end["type"] == "game_abort":
        res["warnings"].append(f"the game was aborted ({rep.end.get('reason')}): the verdicts before that are compared")
    try:
        key = _game_key(str(recs[0].get("game")))
        _check_start(recs[0])
    except ReplayError as e:
        res["problems"] = [{"line": 1, "what": "not replayable", "detail": str(e), "text": lines[0][:300]}]
        return res
    cfg = recs[0].get("settings") or {}
    unit_root = root / "replay"
    reveals: dict[tuple, int] = {}
    clicks: dict[int, int] = {}
    t0 = None
    best: tuple | None = None
    runs = placements = 0
    if echo:
        echo(f"{log.name}: {len(recs)} records; playing its presses, cards and knocks again on a virtual unit")
        echo(f"in virtual time, a run for each placement of the presses tried (at most {MAX_RUNS})")
    import time

    while placements < MAX_RUNS and runs < MAX_RUNS + MAX_CHOICE_RUNS:
        runs += 1
        started = time.monotonic()
        warnings: list[str] = []
        try:
            if t0 is None:  # first run: the prelude's own estimate
                t0 = build(recs, key, 0, reveals, warnings, clicks).t0_est
            plan = build(recs, key, t0, reveals, warnings, clicks)
        except ReplayError as e:
            res["problems"] = [{"line": 1, "what": "not replayable", "detail": str(e), "text": lines[0][:300]}]
            return res
        try:
            rc, console, out = run_plan(plan, unit_root, cfg, heap)
        except (simrun.ScenarioError, RuntimeError) as e:
            res.update(exit=EXIT_MISMATCH, error=f"the replay could not run: {e}")
            return res
        rrecs, rlines = _records(out)
        if rc != 0 or not rrecs:
            res.update(exit=EXIT_MISMATCH, error="the virtual unit failed:\n" + "\n".join(console[-15:]))
            return res
        cmp = compare(recs, rrecs, ended)
        faithful = cmp["match"] and _timing_report(recs, rrecs)["same_presses"]
        if echo:
            echo(f"run {runs} ({time.monotonic() - started:.0f} s): " + (
                "every verdict the same" if cmp["match"] else "a verdict differs") + (
                "" if faithful else "; the presses placed again"))
        score = (cmp["match"], faithful, sum(cmp["compared"].values()))
        if best is None or score > best[0]:
            best = (score, cmp, rrecs, rlines, out, warnings, dict(plan.choices))
        if faithful:
            break
        o = cmp.get("original")
        if not cmp["match"] and o is not None and o["seq"] in plan.choices and plan.choices[o["seq"]] < MAX_CLICKS:
            clicks[o["seq"]] = plan.choices[o["seq"]] + 1  # that choice was another pair: one click more
            continue
        placements += 1
        m_t0, m_rev = measure(plan, rrecs)
        if m_t0 is None or (m_t0 == t0 and all(reveals.get(k) == v for k, v in m_rev.items())):
            break  # the placement no longer moves: another run would give the same log
        t0, reveals = m_t0, m_rev
    assert best is not None
    _score, cmp, rrecs, rlines, out, warnings, choices = best
    for seq, n in sorted(choices.items()):
        res["warnings"].append(f"seq {seq}: a pair chosen on the unit; the log does not say how many clicks "
                               f"it took: replayed with {n} click(s) before the long press")
    res["warnings"] += list(dict.fromkeys(warnings))
    res.update(exit=EXIT_MATCH if cmp["match"] else EXIT_MISMATCH, runs=runs, match=cmp["match"],
               compared=cmp["compared"], replay_log=str(out), game=recs[0].get("game"),
               variant=recs[0].get("variant"), timing=_timing_report(recs, rrecs))
    if not cmp["match"]:
        res["mismatch"] = _mismatch(cmp, recs, rrecs, lines, rlines)
    return res


def _line_of(rec: dict | None, recs: list[dict], lines: list[str]) -> tuple[int, str]:
    if rec is None:
        return 0, ""
    for n, line in enumerate(lines, 1):
        if line.startswith('{"seq":%d,' % rec["seq"]):
            return n, line
    return 0, json.dumps(rec)


def _mismatch(cmp: dict, recs, rrecs, lines, rlines) -> dict:
    on, ot = _line_of(cmp["original"], recs, lines)
    rn, rt = _line_of(cmp["replay"], rrecs, rlines)
    return {"original_line": on, "original": ot, "replay_line": rn, "replay": rt, "differs": cmp["differs"]}


def _timing_report(orig: list[dict], rep: list[dict]) -> dict:
    """How closely the replay's presses follow the original's (µs from their reveal)."""
    def offs(recs):
        return [(r.get("player"), r.get("offset_us"), r.get("false_start")) for r in recs if r["type"] == "press"]

    a, b = offs(orig), offs(rep)
    worst = 0
    same_kind = len(a) == len(b)
    for (pa, oa, fa), (pb, ob, fb) in zip(a, b):
        if pa != pb or fa != fb:
            same_kind = False
        if type(oa) is int and type(ob) is int and oa != -1 and ob != -1:
            worst = max(worst, abs(oa - ob))
    return {"presses": len(a), "replayed_presses": len(b), "same_presses": same_kind, "worst_offset_error_us": worst}


def _say(res: dict) -> str:
    name = Path(res["log"]).name
    if res["exit"] == EXIT_DAMAGED:
        out = [f"{name}: the log is damaged or not replayable, nothing was replayed:"]
        for p in res["problems"]:
            out.append(f"  line {p['line']}: {p['what']}" + (f" ({p['detail']})" if p.get("detail") else ""))
            if p.get("text"):
                out.append(f"    {p['text']}")
        return "\n".join(out)
    if res.get("error"):
        return f"{name}: {res['error']}"
    c = res.get("compared", {})
    what = ", ".join(f"{n} {k}" for k, n in sorted(c.items())) or "no judged records"
    out = []
    for w in res.get("warnings", []):
        out.append(f"note: {w}")
    tm = res.get("timing", {})
    runs = f"{res['runs']} run" + ("s" if res["runs"] != 1 else "")
    if tm.get("presses"):
        out.append(f"presses: {tm['replayed_presses']} replayed for {tm['presses']} logged, offsets within "
                   f"{tm['worst_offset_error_us']} us of the log's ({runs})")
    else:
        out.append(f"no reaction presses in the log ({runs})")
    if res["match"]:
        out.append(f"{name}: every verdict matches ({what})")
    else:
        m = res["mismatch"]
        out.append(f"{name}: MISMATCH after {what} matched")
        out.append(f"  original line {m['original_line']}: {m['original'] or '(none)'}")
        out.append(f"  replay   line {m['replay_line']}: {m['replay'] or '(none)'}")
        for d in m["differs"]:
            out.append(f"  differs: {d}")
        out.append(f"  replay log: {res['replay_log']}")
    return "\n".join(out)


def replay(log: Path, root: Path, heap: str = "512k", as_json: bool = False) -> int:
    """The command: replay, print the result, return the exit code (0 match, 1 mismatch, 2 damaged)."""
    from mausbox.errors import EXIT_USAGE, UserError

    if not log.is_file():
        raise UserError(f"no log file {log}", EXIT_USAGE)
    try:
        # what it is doing goes to standard error, a line a run (the result, or --json, to standard output)
        res = replay_log(log, root, heap=heap, echo=lambda m: print(f"replay: {m}", file=sys.stderr, flush=True))
    except FileNotFoundError as e:  # no MicroPython unix port
        raise UserError(str(e), EXIT_USAGE) from None
    if as_json:
        print(json.dumps(res, indent=2, ensure_ascii=False))
    else:
        print(_say(res), file=sys.stdout if res["exit"] == EXIT_MATCH else sys.stderr)
    return res["exit"]
