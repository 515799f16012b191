"""A pull over a bad line finishes: the virtual unit's logs through the reliability relay (flips, drops and
duplicates of whole kilobytes, both ways; host/mausbox/sim/relay.py), one `pull_unit`, every log byte for byte.
`make bench` does the same with 2,000 logs at 2 % beside a clean line (pull.faulty_2pct.*)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mausbox.link import UnitLink
from mausbox.logpull import pull_unit
from mausbox.mpbuild import micropython_binary
from mausbox.sim.relay import FaultyRelay
from mausbox.store import Store

pytestmark = pytest.mark.skipif(micropython_binary() is None, reason="needs the MicroPython unix port")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_pull  # noqa: E402


def test_a_pull_over_a_bad_line_finishes_with_every_log_right(tmp_path):
    logs = bench_pull.small_logs(60)
    with bench_pull.virtual_unit(tmp_path / "u", logs) as unit:
        bench_pull.service_up(unit.pty_path)
        with FaultyRelay(unit.pty_path, rate=0.1, seed=3) as relay:
            links: list[UnitLink] = []

            def connect():
                for old in links:
                    old.close()
                links[:] = [UnitLink(relay.port, timeout=3)]
                return links[0]

            store = Store(tmp_path / "store" / "logs.sqlite")
            res = pull_unit(connect(), store, reconnect=connect)
            for lk in links:
                lk.close()
            assert relay.faults > 0
    assert res.ok, (res.error, [(o.name, o.status, o.detail) for o in res.outcomes if o.status != "pulled"])
    for name, data in logs.items():
        assert (store.raw_dir(res.unit) / name).read_bytes() == data, name
