// The unit: MicroPython's WebAssembly port running the firmware (mausweb.py is the bridge), in a worker so
// the page stays responsive while the firmware computes. Messages in: {start, lang} {act} {scenario, name,
// text} {frame} {logs}; out: {out: line} {console: line} {ready} {tick} {done} {error}.
import { loadMicroPython } from "./micropython.mjs";

let mp = null, bridge = null, cfg = null;
let outBuf = "";
let playing = false, manual = false, t0 = 0, v0 = 0;
const pending = [];

function post(m) { self.postMessage(m); }

function onOut(s) {
  outBuf += s;
  let i;
  while ((i = outBuf.indexOf("\n")) >= 0) {
    post({ out: outBuf.slice(0, i) });
    outBuf = outBuf.slice(i + 1);
  }
}

async function boot() {
  cfg = await (await fetch("unit.json")).json();
  const files = await Promise.all(cfg.files.map(async (f) => [f, new Uint8Array(await (await fetch("unit/" + f)).arrayBuffer())]));
  const bridgeSrc = new Uint8Array(await (await fetch("mausweb.py")).arrayBuffer());
  mp = await loadMicroPython({
    heapsize: cfg.heap, pystack: 8192,
    stdout: (l) => post({ console: l }), stderr: (l) => post({ console: l }),
  });
  // The unit's heap starts at the board's plus the simulator's share. The port collects garbage only between
  // calls from here (a gc.collect() inside a call asks for one) and grows its heap when a call needs more,
  // so the page cannot stop at the board's size: it measures the live heap after each collection instead.
  const FS = mp.FS;
  FS.mkdir("/unit");
  for (const [name, data] of files) {
    const parts = name.split("/");
    let dir = "/unit";
    for (const p of parts.slice(0, -1)) { dir += "/" + p; try { FS.mkdir(dir); } catch (e) { /* there */ } }
    FS.writeFile("/unit/" + name, data);
  }
  FS.writeFile("/unit/mausweb.py", bridgeSrc);
  mp.registerJsModule("mausjs", { out: onOut });
  mp.runPython("import os, sys\nos.chdir('/unit')\nsys.path.insert(0, '/unit')\nimport mausweb");
  bridge = mp.pyimport("mausweb");
}

function readLogs() {
  const FS = mp.FS, out = {};
  let names = [];
  try { names = FS.readdir("/unit/logs").filter((n) => n.endsWith(".jsonl")); } catch (e) { return out; }
  for (const n of names.sort()) out[n] = FS.readFile("/unit/logs/" + n, { encoding: "utf8" });
  return out;
}

function pyError(e) { return e && e.name === "PythonError" ? `${e.type}: ${e.message}` : String(e); }

// Real time for play: each tick the unit's clock catches up with the page's (at most 250 ms of lag is kept:
// a slow machine plays slower, never in jumps).
function tick() {
  if (!playing) return;
  try {
    while (pending.length) bridge.act(pending.shift());
    const target = v0 + (performance.now() - t0);
    const now = bridge.now_ms();
    if (target - now > 250) { v0 += target - now - 250; }
    const step = Math.min(Math.max(0, Math.round(v0 + (performance.now() - t0) - now)), 100);
    const heap = bridge.heap();  // first in the call: right after the port's collection
    const v = step > 0 ? bridge.advance(step) : now;
    post({ tick: v, heap_used: heap });
  } catch (e) {
    playing = false;
    post({ error: pyError(e), logs: readLogs() });
    return;
  }
  setTimeout(tick, 10);
}

self.onmessage = async (ev) => {
  const m = ev.data;
  try {
    if (m.start !== undefined) {
      await boot();
      post({ booting: true, heap: cfg.heap });
      const t = performance.now();
      if (m.scenario) {
        mp.FS.writeFile("/unit/.scenario.jsonl", m.scenario);
        bridge.scenario("/unit/.scenario.jsonl");
        // main()'s loop in slices: the port collects garbage only between calls from here
        const slice = () => {
          try {
            post({ heap_used: bridge.heap() });
            if (!bridge.scenario_run(50)) { setTimeout(slice, 0); return; }
            post({ done: true, virtual_ms: bridge.now_ms(), real_ms: performance.now() - t, logs: readLogs(), frame: bridge.frame() });
          } catch (e) { post({ error: pyError(e), logs: readLogs() }); }
        };
        slice();
        return;
      }
      bridge.follow_lang(m.lang || "en");
      v0 = bridge.start();
      t0 = performance.now();
      post({ ready: true, boot_ms: t0 - t, heap_used: bridge.heap(), tick: v0 });
      manual = !!m.manual;
      playing = !manual;
      if (playing) tick();
    } else if (m.act !== undefined) {
      if (manual) bridge.act(JSON.stringify(m.act)); else pending.push(JSON.stringify(m.act));
    } else if (m.advance_to !== undefined) {
      // The manual clock (the page's ?clock=manual, for tests): the unit runs to this virtual ms, in slices.
      const slice = () => {
        try {
          const heap = bridge.heap();
          const v = bridge.advance(Math.max(0, Math.min(200, m.advance_to - bridge.now_ms())));
          if (v < m.advance_to) { post({ heap_used: heap }); setTimeout(slice, 0); return; }
          post({ tick: v, heap_used: heap, id: m.id });
        } catch (e) { post({ error: pyError(e), logs: readLogs() }); }
      };
      slice();
    } else if (m.frame !== undefined) {
      post({ frame: bridge.frame(), id: m.frame });
    } else if (m.logs !== undefined) {
      post({ logs: readLogs(), id: m.logs });
    } else if (m.heap !== undefined) {
      post({ heap_used: bridge.heap(), id: m.heap });
    }
  } catch (e) {
    playing = false;
    post({ error: pyError(e) });
  }
};
