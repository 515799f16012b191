"""Game logs on the MicroPython unix port: littlefs (vfs.VfsLfs2) on the RAM block device.

Figures: records written per second (each one flushed = a littlefs commit) with ESP32-like 4 KB blocks
and with 512-byte blocks, bytes per typical record, boot recovery time (a torn 250-record log; 20
finished logs), and the power-cut campaign totals (every cut of a 252-record game on 512-byte blocks and
of a 202-record game on 4 KB blocks, 1,000 random cuts, cuts during boot recovery itself).
The RAM device is Python code, so the write rate is a floor for the sim, not the ESP32's flash speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "host"), str(ROOT / "firmware")]

from mausbox.mpbuild import micropython_binary  # noqa: E402

SCRIPT = r"""
import gc, sys, time, vfs
from maus.log import writer as gamelog
from maus.log import repair as logrepair
from maus.log import start as logstart
from maus.log.store import LogStore
from maus.sim.ramblock import RAMBlockDev
import powercut

def mount(blocks, bs):
    dev = RAMBlockDev(blocks, bs)
    vfs.VfsLfs2.mkfs(dev)
    vfs.mount(vfs.VfsLfs2(dev), "/b")
    return dev

def game(st, n, close=True):
    log = logstart.start_game(st, powercut.Clock(), "mausgeflippt", "classic", powercut.PLAYERS, "devkitc",
                             "a4cf12fe0b10", "0.1.0", powercut.SETTINGS, None, 1, reserve=4096)
    for typ, f in powercut.events(n, 3):
        log.record(typ, f)
    if close:
        log.end({1: 3, 2: 1}, [1], {1: {"mice": 3}, 2: {"mice": 1}}, "last mouse caught")
    else:
        log.close()
    return log

for blocks, bs in ((48, 4096), (384, 512)):
    dev = mount(blocks, bs)
    st = LogStore("/b")
    t0 = time.ticks_us()
    log = game(st, 1000)
    dt = time.ticks_diff(time.ticks_us(), t0)
    print("logs.write_rate_%db: %d records/s" % (bs, log.seq * 1000000 // dt))
    print("logs.device_ops_per_record_%db: %.1f ops" % (bs, dev.ops / log.seq))
    vfs.umount("/b")

dev = mount(384, 512)
st = LogStore("/b")
log = game(st, 1000)
size = st.size(log.name)
print("logs.bytes_per_record: %d bytes" % (size // log.seq))
n = 0
for typ, f in powercut.events(200, 3):
    n += len(gamelog.encode(100, 123456, typ, f))
print("logs.bytes_per_event_record: %d bytes" % (n // 200))
st.delete(log.name)

log = game(st, 250, False)
with open(st.path(log.name), "ab") as f:
    f.write(b'{"seq":251,"t":99,"type":"press","pla')
t0 = time.ticks_us()
rep = logrepair.recover(st)
dt = time.ticks_diff(time.ticks_us(), t0)
assert rep[0]["cut_bytes"] == 37, rep
print("logs.recovery_torn_250_records: %.1f ms" % (dt / 1000))
for i in range(20):
    game(st, 30)
t0 = time.ticks_us()
assert logrepair.recover(st) == []
dt = time.ticks_diff(time.ticks_us(), t0)
print("logs.recovery_check_21_finished_logs: %.1f ms" % (dt / 1000))
t0 = time.ticks_us()
ls = st.listing()
dt = time.ticks_diff(time.ticks_us(), t0)
print("logs.listing_%d_logs_sha256: %.1f ms" % (len(ls), dt / 1000))
vfs.umount("/b")

# A classroom unit: 2,000 small logs (a third marked pulled) on 4 KB blocks, listed by the host service as
# `mausbox logs pull` asks (the directory iterator, a part per ~900 bytes), and checked at boot.
import hostkit
from maus.host.service import HostService
dev = mount(1024, 4096)
st = LogStore("/b")
rec = gamelog.encode(0, 0, "game_start", {"game": "mg"}) + gamelog.encode(1, 5, "game_end", {"why": "x"})
for i in range(1, 2001):
    with open("/b/logs/%05d-mg.jsonl" % i, "wb") as f:
        f.write(rec)
    if i % 3 == 0:
        with open("/b/logs/%05d-mg.jsonl.pulled" % i, "wb") as f:
            f.write(b"0" * 64)
for n in (100, 2000):
    con = hostkit.Console()
    ctx = hostkit.Ctx("/b")
    svc = HostService(ctx, inp=con.inp, out=con.out, ready=con.ready)
    if n == 100:
        ctx.store.dir = "/b/few"
        import os
        os.mkdir("/b/few")
        for i in range(1, 101):
            with open("/b/few/%05d-mg.jsonl" % i, "wb") as f:
                f.write(rec)
    con.send(hostkit.request(1, "logs"))
    t0 = time.ticks_us()
    done = False
    while not done:
        svc.poll(0)
        done = b"#MB1R" in con.take()
    dt = time.ticks_diff(time.ticks_us(), t0)
    if n == 2000:
        print("logs.listing_ms_per_100: %.1f ms" % (dt / 1000 / 20))
        print("logs.listing_2000_logs: %.1f ms" % (dt / 1000))
    else:
        print("logs.listing_100_logs: %.1f ms" % (dt / 1000))
t0 = time.ticks_us()
assert logrepair.recover(st) == []
print("logs.recovery_check_2000_finished_logs: %.1f ms" % (time.ticks_diff(time.ticks_us(), t0) / 1000))
vfs.umount("/b")

def every4k():
    powercut.BS = 4096
    try:
        return powercut.every_cut(24, 200)[0]
    finally:
        powercut.BS = 512

for name, run in (("every_cut_252_records", lambda: powercut.every_cut(128, 250)[0]),
                  ("every_cut_202_records_4k_blocks", every4k),
                  ("random_1000_cuts", lambda: powercut.random_cuts(256, 800, 1000)),
                  ("cuts_during_recovery", lambda: powercut.recovery_cuts(96, 60, range(0, 360, 7))[0])):
    t0 = time.ticks_ms()
    s = run()
    print("logs.%s.seconds: %.1f s" % (name, time.ticks_diff(time.ticks_ms(), t0) / 1000))
    print("logs.%s.cuts: %d cuts" % (name, s.cuts))
    print("logs.%s.records_lost: %d records" % (name, s.lost))
    print("logs.%s.mount_failures: %d mounts" % (name, s.mount_failures))
    print("logs.%s.crashes: %d crashes" % (name, s.crashes))
    print("logs.%s.other_failures: %d checks" % (name, s.bad))
    print("logs.%s.in_flight_record_not_on_flash: %d cuts" % (name, s.dropped))
"""


def main() -> int:
    mpy = micropython_binary()
    if mpy is None:
        print("bench_logs: MicroPython unix port not found", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_logs_mpy.py"
        script.write_text(SCRIPT)
        env = dict(os.environ, MICROPYPATH=f"{ROOT / 'firmware'}:{ROOT / 'tests' / 'fw'}:.frozen")
        proc = subprocess.run([mpy, "-X", "heapsize=32m", str(script)], capture_output=True, text=True, env=env,
                              timeout=600)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
