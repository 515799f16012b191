# The host service's heap on the 32-bit build (run by bench/bench_hostsvc.py): the module, one instance, and
# what a listing and a log stream hold between main-loop passes (the logs on littlefs in RAM, as on a board's
# flash), and the garbage one pass of a stream makes (logs on the unix port's own files: littlefs on a RAM
# device would add the simulated flash's Python reads, which a board does in C).
import gc
import sys

from maus.log.store import LogStore  # the unit has these already
from maus.settings.values import Settings  # noqa: F401

where = sys.argv[1]
if where == "lfs":
    import vfs
    from maus.sim.ramblock import RAMBlockDev

    _dev = RAMBlockDev(400, 512)
    vfs.VfsLfs2.mkfs(_dev)
    vfs.mount(vfs.VfsLfs2(_dev), "/flash")
    root = "/flash"
else:
    root = sys.argv[2]
gc.collect()
a = gc.mem_alloc()
from maus.host.service import HostService  # noqa: E402

gc.collect()
b = gc.mem_alloc()
from hostkit import Console, Ctx, request  # noqa: E402


class Null(Console):
    # What the host would read goes nowhere: counted only, so the console's own copies are not measured.
    def write(self, b):
        self.sent += len(b)
        return len(b)


ctx = Ctx(root)
con = Null()
con.sent = 0
gc.collect()
c = gc.mem_alloc()
svc = HostService(ctx, inp=con.inp, out=con.out, ready=con.ready)
gc.collect()
d = gc.mem_alloc()


def run(op, seq, **args):
    # (most held between passes, most allocated within a pass after the first)
    con.send(request(seq, op, **args))
    held = per_pass = 0
    gc.collect()
    base = gc.mem_alloc()
    for k in range(100000):
        gc.collect()
        x = gc.mem_alloc()
        svc.poll(0)
        if k:
            per_pass = max(per_pass, gc.mem_alloc() - x)
        gc.collect()
        held = max(held, gc.mem_alloc() - base)
        if svc.job is None and not con.rx:
            break
    return held, per_pass


store = LogStore(root)
with open(store.dir + "/00001-mg.jsonl", "wb") as f:
    for i in range(600):
        f.write(b'{"seq":%d,"t":%d,"type":"press","player":1,"crc":"00000000"}\n' % (i, i * 100))
for i in range(2, 200):
    with open(store.dir + "/%05d-mg.jsonl" % i, "wb") as f:
        f.write(b"x")
if where == "lfs":
    print("hostsvc.heap_module: %d bytes" % (b - a))
    print("hostsvc.heap_instance: %d bytes" % (d - c))
    print("hostsvc.heap_listing_held: %d bytes" % run("logs", 1)[0])
    ctx.mode = "menu"
    print("hostsvc.heap_stream_idle_held: %d bytes" % run("read", 2, name="00001-mg.jsonl")[0])
    ctx.mode = "play"
    print("hostsvc.heap_stream_game_held: %d bytes" % run("read", 3, name="00001-mg.jsonl")[0])
    vfs.umount("/flash")
else:
    ctx.mode = "play"
    print("hostsvc.heap_stream_game_garbage_per_pass: %d bytes" % run("read", 3, name="00001-mg.jsonl")[1])
