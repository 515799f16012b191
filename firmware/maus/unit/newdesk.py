# The desk made as a game starts (maus.unit.core HostWake.lull), loaded for that and let go again: its set-up need
# not stay in RAM with the game (maus.unit.desk does).
import maus.unit.desk as dk


def desk(w, part):
    """-> the Desk (maus.unit.desk) of the HostWake w, which has read on from `part` (bytes the service had read of a
    request it had not read whole when the game began, or None)."""
    d = dk.Desk()
    d.w = w
    d._dk = bytearray(dk.frame.HDR + dk.KEEP)
    d._dn = 0
    d._dw = 0
    d._dat = 0
    d._oh = bytearray(b"#MB1R 0000 0000 00000000 ")
    hw = w.ctx.hw
    d._fifo = getattr(hw, "tx_fifo", 0) if hw is not None and dk.frame.console(hw) == "uart" else 0
    d._us = getattr(hw, "ticks_us", None) if d._fifo else None
    d._txe = d._us() if d._us is not None else 0
    if part:
        for c in part:
            d._byte(c)
    return d
