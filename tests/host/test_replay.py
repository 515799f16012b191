"""`mausbox sim --replay LOG`: a game log played again on the virtual unit gives the same verdicts; a log
whose verdict was changed (CRC fixed, so it is not merely damaged) is a mismatch, named; a damaged log is
refused with its line."""

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from maus.log import check as logcheck
from maus.log import writer as gamelog
from mausbox.sim import replay as simreplay
from scenariokit import SCENARIOS, play

# One scenario per game with races, ties, claims and alarms keeps `make test` fast; every scenario's log
# replays (docs/replay.md has the figures): widen this list to replay them all.
REPLAYED = ("mg-6p-ties", "mim-c-4p", "mms-3p-last")
SCENARIO_FILES = [SCENARIOS / f"{stem}.jsonl" for stem in REPLAYED]
QUICK = "mms-2p-draw"  # a short game without reaction races: one replay run


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """The log each scenario produces, made once per module."""
    made = {}

    def get(stem):
        if stem not in made:
            found, _ = play(SCENARIOS / f"{stem}.jsonl", tmp_path_factory.mktemp(stem))
            made[stem] = found[0]
        return made[stem]

    return get


def _records(path):
    return logcheck.read(path.read_bytes()).records


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "mausbox", "sim", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=900)


def _rewrite(path, dest, change):
    """Copy a log with change(record) applied to its records; every line is encoded again with a good CRC."""
    out = []
    for rec in _records(path):
        rec = dict(rec)
        change(rec)
        fields = {k: v for k, v in rec.items() if k not in ("seq", "t", "type", "crc")}
        out.append(gamelog.encode(rec["seq"], rec["t"], rec["type"], fields))
    dest.write_bytes(b"".join(out))
    assert logcheck.read(dest.read_bytes()).ok
    return dest


@pytest.mark.parametrize("scenario", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_every_scenario_log_replays_with_the_same_verdicts(scenario, logs, tmp_path):
    log = logs(scenario.stem)
    res = simreplay.replay_log(log, tmp_path)
    assert res["exit"] == 0, simreplay._say(res)
    assert res["match"] is True
    orig = _records(log)
    replayed = _records(simreplay.Path(res["replay_log"]))
    for typ in ("verdict", "score", "claim", "game_end"):
        assert res["compared"].get(typ, 0) == sum(r["type"] == typ for r in orig), typ
    # the replay really played the game: the same cards, the same presses, the same end
    assert [r.get("identity") for r in orig if r["type"] == "tap"] == \
           [r.get("identity") for r in replayed if r["type"] == "tap"]
    assert res["timing"]["same_presses"], res["timing"]
    assert replayed[-1]["scores"] == orig[-1]["scores"]


def test_a_changed_verdict_is_a_mismatch_naming_the_line(logs, tmp_path):
    log = logs(QUICK)
    orig = _records(log)
    target = next(r for r in orig if r["type"] == "verdict" and r["ok"])

    def flip(rec):  # the unit said no where its rules say yes
        if rec["seq"] == target["seq"]:
            rec["ok"] = False

    bad = _rewrite(log, tmp_path / "disputed.jsonl", flip)
    proc = _cli("--replay", bad, "--root", tmp_path / "u")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = target["seq"] + 1
    assert f"original line {line}:" in proc.stderr
    assert "differs: ok: false vs true" in proc.stderr and "MISMATCH" in proc.stderr
    assert "Traceback" not in proc.stderr
    # it says what it is doing meanwhile: the log, then a line a run
    assert proc.stderr.startswith(f"replay: disputed.jsonl: {len(orig)} records; playing"), proc.stderr[:300]
    assert "replay: run 1 (" in proc.stderr and "a verdict differs" in proc.stderr

    js = _cli("--replay", bad, "--root", tmp_path / "u", "--json")
    assert "replay: run 1 (" in js.stderr  # the JSON alone on standard output
    res = json.loads(js.stdout)
    assert js.returncode == 1 and res["exit"] == 1 and res["match"] is False
    assert res["mismatch"]["original_line"] == line
    assert json.loads(res["mismatch"]["replay"])["ok"] is True
    # every judged record before it matched
    assert sum(res["compared"].values()) == sum(r["type"] in simreplay.JUDGED and r["seq"] < target["seq"]
                                                for r in orig)


def test_settings_of_the_log_are_the_replays(logs, tmp_path):
    # A unit set to English and 3000 us ties: the replay's unit starts with the same settings.
    def english(rec):
        if rec["type"] == "game_start":
            rec["settings"] = dict(rec["settings"], lang="en", tie_window_us=3000)

    log = _rewrite(logs(QUICK), tmp_path / "en.jsonl", english)
    res = simreplay.replay_log(log, tmp_path / "u")
    assert res["exit"] == 0, simreplay._say(res)
    start = _records(simreplay.Path(res["replay_log"]))[0]
    assert start["settings"]["lang"] == "en" and start["settings"]["tie_window_us"] == 3000


def test_a_game_that_stopped_early_is_compared_up_to_its_end(logs, tmp_path):
    # Power lost mid-game: the records before the cut are replayed and compared, with a note.
    log = logs(QUICK)
    lines = log.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[: len(lines) // 2]))
    res = simreplay.replay_log(cut, tmp_path / "u")
    assert res["exit"] == 0, simreplay._say(res)
    assert any("no game_end" in w for w in res["warnings"])
    assert 0 < res["compared"]["verdict"] < sum(r["type"] == "verdict" for r in _records(log))


def test_a_damaged_log_is_refused_with_its_line(logs, tmp_path):
    log = logs(QUICK)
    data = bytearray(log.read_bytes())
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    at = starts[6] + 12  # inside line 7
    data[at] ^= 0x01
    bad = tmp_path / "flipped.jsonl"
    bad.write_bytes(bytes(data))
    proc = _cli("--replay", bad, "--root", tmp_path / "u")
    assert proc.returncode == 2
    assert "line 7: bad crc" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "u" / "replay" / "logs").exists()  # nothing was played

    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(log.read_bytes()[: starts[9] + 20])
    res = json.loads(_cli("--replay", torn, "--root", tmp_path / "u", "--json").stdout)
    assert res["exit"] == 2 and res["problems"][0]["line"] == 10 and res["problems"][0]["what"] == "torn tail"


def test_refusals_without_a_run(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"")
    assert simreplay.replay_log(junk, tmp_path)["problems"][0]["what"] == "empty"
    other = tmp_path / "other.jsonl"
    other.write_bytes(gamelog.encode(0, 0, "game_start", {"game": "chess", "players": [], "v": 1})
                      + gamelog.encode(1, 5, "game_end", {"scores": {}, "winners": [], "why": ""}))
    res = simreplay.replay_log(other, tmp_path)
    assert res["exit"] == 2 and "chess" in res["problems"][0]["detail"]
    proc = _cli("--replay", tmp_path / "missing.jsonl", "--root", tmp_path / "u")
    assert proc.returncode == 2 and "no log file" in proc.stderr


# --- placing presses: what decides a race is kept --------------------------------------------------------------

def test_presses_keep_their_side_of_the_reveal():
    reveal = 10_000_700  # µs, not on a ms boundary
    times = simreplay._place_group([(1, -300, 0), (2, 200, 1), (3, 0, 2)], reveal, 2000)
    assert times[0] * 1000 < reveal  # false start stays one
    assert times[1] * 1000 >= reveal and times[2] * 1000 >= reveal


def test_ties_and_order_survive_whole_ms():
    reveal = 5_000_400
    # 1 and 2 tie (1900 us apart), 3 does not (2100 us after 1), 4 presses 10 us after 2
    group = [(1, 300_000, 0), (2, 301_900, 1), (4, 301_910, 3), (3, 302_100, 2)]
    t = dict(zip((1, 2, 4, 3), simreplay._place_group(group, reveal, 2000)))
    off = {p: ms * 1000 - reveal for p, ms in t.items()}
    assert off[2] - off[1] <= 2000 and off[4] - off[1] <= 2000
    assert off[3] - off[1] > 2000
    assert off[1] < off[2] and (off[2], 2) < (off[4], 4)  # the firmware orders by time, then player


def test_prelude_selects_variant_and_young_players():
    start = {"game": "mim", "variant": "C", "players": [{"id": 2, "young": False}, {"id": 1, "young": False}],
             "settings": {}}
    plan = simreplay.Plan()
    t0 = simreplay.prelude(plan, start, "mim", simreplay._timing({}))
    acts = sorted(plan.actions, key=lambda a: a["at_ms"])
    assert acts[0] == {"at_ms": 500, "tap": "game/mim"}
    assert sum(1 for a in acts if a.get("press") == 1 and a["at_ms"] < 3000) == 2  # two clicks: A -> B -> C
    assert any(a.get("hold") == 1 and a["ms"] > 1000 for a in acts)  # a long press takes it
    assert t0 > acts[-1]["at_ms"] - 100

    mg = {"game": "mg", "variant": None, "players": [{"id": 1, "young": False}, {"id": 3, "young": True}]}
    plan = simreplay.Plan()
    simreplay.prelude(plan, mg, "mausgeflippt", simreplay._timing({"young_hold_ms": 3000}))
    assert any(a.get("hold") == 3 and a["ms"] > 3000 for a in plan.actions)
    assert not any(a.get("hold") == 1 for a in plan.actions)
