"""The web page (make web) in headless Chromium: how long from asking for the page to the unit's menu
(web.load_ms), and how fast a scenario plays there, virtual time against real time (web.speed_ratio), beside
the terminal sim's figure for the same scenario (web.terminal_speed_ratio: `mausbox sim --scenario`, the
MicroPython unix port). Without chromium, chromium-driver or selenium it prints a skip line and exits 0."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "host"), str(HERE.parent / "firmware"), str(HERE.parent / "tests" / "web")]

import webkit  # noqa: E402

SCENARIO = HERE.parent / "tests" / "scenarios" / "mim-a-3p.jsonl"


def main() -> int:
    why = webkit.missing()
    if why is not None:
        print(f"web.skipped: 1 flag ({why})")
        return 0
    from mausbox import web
    from mausbox.sim import run as simrun

    with tempfile.TemporaryDirectory() as tmp:
        out = web.build(Path(tmp) / "web")
        srv, url = web.serve(out)
        drv = webkit.browser()
        try:
            loads = []
            for _ in range(3):
                drv.get(url)
                webkit.wait_for(drv, "window.mausbox && window.mausbox.ready && window.mausbox.frame", "the menu")
                loads.append(drv.execute_script("return window.mausbox.loadMs"))
            drv.find_element("id", "scenariofile").send_keys(str(SCENARIO))
            res = webkit.wait_for(drv, "window.mausbox && window.mausbox.scenario", "the scenario played")
        finally:
            webkit.close(drv)
            srv.shutdown()
        t = time.monotonic()
        rc, _ = simrun.run_scenario(SCENARIO, Path(tmp) / "unit", heap=simrun.board_heap())
        term_s = time.monotonic() - t
    loads.sort()
    print(f"web.load_ms: {loads[1]:.0f} ms")
    print(f"web.speed_ratio: {res['virtual_ms'] / res['real_ms']:.1f} x ({SCENARIO.name})")
    if rc == 0:
        print(f"web.terminal_speed_ratio: {res['virtual_ms'] / 1000 / term_s:.1f} x ({SCENARIO.name}, mausbox sim --scenario)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
