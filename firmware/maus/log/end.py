# A game log's last records, loaded for that moment and let go again (maus.log.writer.GameLog.end, .abort):
# the held records written, the room kept for the end taken if the flash filled during the game, then
# game_end or game_abort and the log closed.
import os


def end(log, scores, winners, breakdown, why):
    log.release()
    _reopen(log)
    log.record("game_end", {"scores": _skeys(scores), "winners": list(winners),
                            "breakdown": _skeys(breakdown), "why": why})
    log.close()


def abort(log, reason):
    log.release()
    _reopen(log)
    log.record("game_abort", {"reason": reason})
    log.close()


def _reopen(log):
    # The flash filled during the game: the room kept for its end (logs/reserve) goes now, so the end
    # record still lands, after a note of how many records were lost (docs/log-format.md).
    at = log.end_at
    if log._f is not None or at is None:
        return
    if not log._ok:  # not even game_start reached the flash: no log (an end alone would be no game's)
        try:
            os.remove(at[0])
        except OSError:
            pass
        return
    try:
        os.remove(at[1])
    except OSError:
        pass
    try:
        f = open(at[0], "ab")
    except OSError:
        return
    log._f = at[2](f) if at[2] is not None else f
    log.record("note", {"text": "flash full: records lost", "lost": log.lost})


def _skeys(d):
    return {str(k): v for k, v in d.items()}
