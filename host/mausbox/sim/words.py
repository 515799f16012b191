"""A game log's records in words, for the simulator's log pane and its "last verdict" line (the unit's
display shows a verdict for 1.5 s; the screen keeps it until the next one). Record types and fields:
docs/log-format.md."""

from __future__ import annotations

REASONS = {  # verdict reasons (maus.games.*) in words
    "item_worn": "worn: caught!",
    "item_not_worn": "not worn!",
    "protected_item_worn": "protected mouse, and it wears it: cheese!",
    "protected_item_not_worn": "protected mouse, not worn",
    "protected": "protected mouse!",
    "timeout": "too slow",
    "blocked_3_face_down": "3 face-down cards: no Mausgeflippt!",
    "protected_collection": "protected mouse in the collection",
    "collection_clean": "Mausgeflippt! none matches",
    "collection_matches": "Mausgeflippt called, but a card matches",
    "pair": "a pair!",
    "no free pair": "no free pair",
}
PROMPTS = {
    "first_cheese": "show the first cheese", "next_cheese": "show the next cheese", "reveal_any": "reveal a mouse",
    "reveal": "reveal a mouse", "claim": "play a card or double-press", "cheese": "take the cheese",
    "collect": "tap all the cards",
}


def _spaced(v) -> str:
    """A log's snake_case word as words: "stick_placed" -> "stick placed"."""
    return str(v).replace("_", " ")


def _p(rec: dict, key: str = "player") -> str:
    v = rec.get(key)
    return f"P{v}" if isinstance(v, int) else "nobody"


def _scores(scores) -> str:
    if not isinstance(scores, dict):
        return "?"
    return ", ".join(f"P{k} {v}" for k, v in sorted(scores.items(), key=lambda kv: str(kv[0]).zfill(3)))


def describe(rec: dict) -> str:
    """One record as a short sentence."""
    t = rec.get("type")
    if t == "game_start":
        names = {"mg": "Mausgeflippt", "mim": "M is for Mouse", "mms": "Mucks Mäuschen Still"}
        ps = rec.get("players")
        ps = ps if isinstance(ps, list) else []
        var = f" {rec['variant']}" if rec.get("variant") else ""
        game = str(rec.get("game"))
        return f"{names.get(game, game)}{var} starts, {len(ps)} player{'s' * (len(ps) != 1)}"
    if t == "reveal":
        return f"revealed {rec.get('card') or 'a card'}"
    if t == "press":
        off = rec.get("offset_us")
        when = f" {off / 1000:+.1f} ms" if isinstance(off, (int, float)) else ""
        extra = " too early" if rec.get("false_start") else (" late" if rec.get("late") else "")
        return f"{_p(rec)} pressed{when}{extra}{' (ignored)' if rec.get('locked') else ''}"
    if t == "claim":
        return f"{_p(rec)} claims" + (" (tie)" if rec.get("tied") else "") + (" (passed on)" if rec.get("passed") else "")
    if t == "tap":
        return f"card {rec.get('identity') or 'unknown (' + str(rec.get('uid')) + ')'} on the pad"
    if t == "verdict":
        why = str(rec.get("reason"))
        return f"{_p(rec)}: {'right' if rec.get('ok') else 'wrong'}, {REASONS.get(why, _spaced(why))}"
    if t == "score":
        d = rec.get("delta")
        return f"{_p(rec)} {d:+d} ({_spaced(rec.get('why', ''))})" if isinstance(d, int) else \
            f"{_p(rec)} score {d}"
    if t == "alarm":
        return f"ALARM! the castle trembled ({_p(rec)})"
    if t == "prompt":
        what = str(rec.get("what"))
        return f"unit asks: {PROMPTS.get(what, _spaced(what))}"
    if t == "timeout":
        return f"no answer to {_spaced(rec.get('what'))}: {rec.get('outcome')}"
    if t == "gesture":
        return f"{_p(rec)} {rec.get('kind')}"
    if t == "settings":
        return f"setting {rec.get('key')}: {rec.get('old')} -> {rec.get('new')}"
    if t == "note":
        return str(rec.get("text", "note"))
    if t == "recovered":
        return f"recovered after a power cut ({rec.get('records')} records kept)"
    if t == "game_end":
        win = rec.get("winners") or []
        won = ", ".join(f"P{w}" for w in win) if isinstance(win, list) else "?"
        return f"game over: {_scores(rec.get('scores'))}; won by {won or 'nobody'}"
    if t == "game_abort":
        return f"game aborted ({rec.get('reason')})"
    body = {k: v for k, v in rec.items() if k not in ("seq", "crc", "t", "type")}
    return f"{t}: " + ", ".join(f"{k} {v}" for k, v in body.items())


def last_verdict(records: list[dict]) -> str | None:
    """The newest verdict (or alarm, or game end) with the score changes that followed it, in words."""
    for i in range(len(records) - 1, -1, -1):
        rec = records[i]
        if rec.get("type") in ("verdict", "alarm", "game_end", "game_abort"):
            parts = [describe(rec)]
            for nxt in records[i + 1:]:
                if nxt.get("type") == "score":
                    parts.append(describe(nxt))
                elif nxt.get("type") not in ("prompt", "note", "gesture"):
                    break
            return "; ".join(parts)
    return None
