"""A classroom's day (issue 32): 10 virtual units with 10 games each, pulled by one `mausbox logs pull` over all
of them in parallel, against one unit alone, in the same run; the pull's share of the link at 921,600 baud beside
115,200; and the day's estimate for 30 units.

Each game is the largest Mausgeflippt log `tests/scenarios` makes (its scenarios played on the virtual unit
here, the biggest log kept). The units are SerialUnits (host/mausbox/sim/serial.py) whose byte timing follows
their console's rate: the link carries rate/10 bytes a second (8N1). Every unit boots at 115,200; the 115,200
figures pull with `--baud 115200` (no switch), the 921,600 ones with `--baud 921600`: the host and each unit
agree on it after hello (docs/protocol.md, `baud`), and the bench fails unless every unit's line did switch.

    class.pull_10_units_wall_ratio         wall time of the 10 units' pull / one unit's, at 115,200 (goal <= 1.5)
    class.pull_10_units_wall_ratio_921600  the same at 921,600
    pull.link_fraction_115200              log bytes a second over the nominal rate, one unit (10 logs)
    pull.link_fraction_921600              the same at 921,600 (goal >= 85 %)
    class.day_estimate_s                   30 units x 10 games: 3 hubs of 10, each taking the measured 10-unit
                                           wall time at 921,600 (goal <= 30 s)
    class.day_estimate_115200_s            the same at today's 115,200
    class.line_fallbacks_921600            units whose line went back to 115,200 during a pull (a wait that failed
                                           at 921,600; 0 on a quiet machine)
    class.unit_cpu_s_per_pull_921600       CPU seconds the virtual unit's interpreter spent on one unit's pull
                                           (its main loop idles on the console: a host session adds no passes)
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

import mausbox  # noqa: E402,F401  (installs the micropython shim)
from mausbox.cmd_sim import served_unit  # noqa: E402
from mausbox.sim import run as simrun  # noqa: E402
from mausbox.sim.line import BOOT_BAUD  # noqa: E402
from mausbox.sim.serial import SerialUnit, SerialUnitError  # noqa: E402

UNITS = 10
GAMES = 10
DAY_UNITS = 30
TIMEOUT = "5"  # s, the pulls' --timeout: a busy machine stalls a virtual unit's pass now and then


def largest_mg_log(tmp: Path) -> bytes:
    """The biggest game log the Mausgeflippt scenarios make on the virtual unit."""
    best = b""
    for sc in sorted((ROOT / "tests" / "scenarios").glob("mg-*.jsonl")):
        root = tmp / ("sc-" + sc.stem)
        subprocess.run([sys.executable, "-m", "mausbox", "sim", "--scenario", str(sc), "--root", str(root)],
                       cwd=ROOT, check=True, capture_output=True, timeout=1200)
        for log in (root / "logs").glob("*.jsonl"):
            data = log.read_bytes()
            if len(data) > len(best):
                best = data
    if not best:
        raise SystemExit("class.failed: 1 flag (no Mausgeflippt scenario log)")
    return best


def unit_roots(tmp: Path, n: int, log: bytes) -> list[Path]:
    """n flash folders, each holding GAMES copies of the log; the firmware laid in once and copied."""
    first = tmp / "unit0"
    simrun.prepare_root(first)
    roots = []
    for i in range(n):
        root = tmp / f"unit{i}"
        if i:
            shutil.copytree(first, root, symlinks=True, ignore=shutil.ignore_patterns("unique_id", "logs"))
        logs = root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        for k in range(GAMES):
            (logs / ("%05d-mg.jsonl" % (k + 1))).write_bytes(log)
        (logs / "counter").write_text(str(GAMES + 1))
        roots.append(root)
    return roots


def start_units(stack: ExitStack, roots: list[Path]) -> list[SerialUnit]:
    units = []
    for root in roots:
        try:  # paced at the boot rate: the unit's switch moves the pacing to the agreed rate
            units.append(stack.enter_context(served_unit(root, simrun.DEFAULT_HEAP, baud=BOOT_BAUD)))
        except SerialUnitError:
            raise SystemExit("class.failed: 1 flag (a virtual unit did not start)") from None
    time.sleep(1.0)  # the boots' console output has gone out
    return units


def pull(ports: list[str], store: Path, baud: int) -> float:
    """One `mausbox logs pull --baud B` over the ports (as --all runs: one thread a unit); its wall time."""
    from mausbox.cli import main

    argv = ["logs", "pull", "--store", str(store), "--timeout", TIMEOUT, "--json", "--baud", str(baud)]
    for p in ports:
        argv += ["--port", p]
    t0 = time.monotonic()
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    t = time.monotonic() - t0
    if rc != 0:
        sys.stderr.write(out.getvalue()[-3000:])
        raise SystemExit("class.failed: 1 flag (the pull failed: exit %d)" % rc)
    return t


def unit_cpu(unit: SerialUnit) -> float | None:
    """CPU seconds of the unit's interpreter process so far (Linux /proc), or None."""
    proc = getattr(unit, "_proc", None)
    if proc is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / tick  # utime, stime: every thread's


def one_rate(tmp: Path, log: bytes, baud: int) -> tuple[float, float, float]:
    """(one unit's pull time, 10 units' pull time, the log bytes a unit holds) at `baud`, in one run."""
    roots = unit_roots(tmp / f"b{baud}", UNITS, log)
    with ExitStack() as stack:
        units = start_units(stack, roots)
        ports = [u.pty_path for u in units]
        cpu0 = unit_cpu(units[0])
        t1 = pull(ports[:1], tmp / f"b{baud}" / "one" / "logs.sqlite", baud)
        if baud != BOOT_BAUD and cpu0 is not None:
            print("class.unit_cpu_s_per_pull_%d: %.2f s" % (baud, unit_cpu(units[0]) - cpu0))
        for r in roots[:1]:  # unit 0 again, its logs not yet marked for the second store: mark files removed
            for m in (r / "logs").glob("*.pulled"):
                m.unlink()
        t10 = pull(ports, tmp / f"b{baud}" / "all" / "logs.sqlite", baud)
        want = [] if baud == BOOT_BAUD else [baud, BOOT_BAUD]  # each pull: the switch, and back at its end
        end = time.monotonic() + 10  # the host closes its port as the units switch back: their last switch
        while time.monotonic() < end and any(len(u.rates) < len(want) * (2 if u is units[0] else 1) for u in units):
            time.sleep(0.05)
        for u in units:
            if u.rates != want * (2 if u is units[0] else 1):
                raise SystemExit("class.failed: 1 flag (a unit's line went %s, not %s)" % (u.rates, want))
        if baud != BOOT_BAUD:  # a unit that went back to 115,200 mid-pull (a wait failed): bytes crossed two rates
            print("class.line_fallbacks_%d: %d units" % (baud, sum(u.garbled > 0 for u in units)))
    return t1, t10, GAMES * len(log)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        log = largest_mg_log(tmp)
        print("class.game_log_size: %d bytes" % len(log))
        figures = {}
        for baud in (115200, 921600):
            t1, t10, nbytes = one_rate(tmp, log, baud)
            figures[baud] = (t1, t10, nbytes)
            print("class.pull_1_unit_%d_s: %.2f s" % (baud, t1))
            print("class.pull_10_units_%d_s: %.2f s" % (baud, t10))
    t1, t10, nbytes = figures[115200]
    print("class.pull_10_units_wall_ratio: %.2f x" % (t10 / t1))
    print("pull.link_fraction_115200: %.1f %%" % (100 * nbytes / t1 / (115200 / 10)))
    f1, f10, fbytes = figures[921600]
    print("class.pull_10_units_wall_ratio_921600: %.2f x" % (f10 / f1))
    print("pull.link_fraction_921600: %.1f %%" % (100 * fbytes / f1 / (921600 / 10)))
    hubs = math.ceil(DAY_UNITS / UNITS)
    print("class.day_estimate_s: %.1f s" % (hubs * f10))
    print("class.day_estimate_115200_s: %.1f s" % (hubs * t10))
    return 0


if __name__ == "__main__":
    sys.exit(main())
