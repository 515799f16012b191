// The page: the unit's face (OLED, six buttons with their LEDs, buzzer), the card pad, the castle, the game
// log. The firmware runs in worker.js; this file only draws what it sends and sends what the players do.
const T = {
  en: {
    loading: "starting the unit…", ready: "unit running", cards: "Cards", castle: "Castle", log: "Game log", about: "About",
    clearpad: "Clear pad", knock: "Knock on the castle", strength: "Strength", download: "Download the unit's logs",
    castlehelp: "Mucks Mäuschen Still: the piezo on the cheese castle feels this knock; the slider sets how hard.",
    keys: "Keys: 1–6 press (hold for a long press), q w e r t y a double press, a s d f g h a long press, " +
          "z x c v b n a 2.5 s hold, k knock, 0 clear the pad, / search cards.",
    scenario: "Play a scenario file (tests/scenarios/*.jsonl), or drop one on the page:",
    drop: "Drop a scenario file", search: "search cards: mouse 7, Koffer, cheese, mausgeflippt",
    heap: (h, b, s) => `Heap: ${h.toLocaleString()} bytes, the ESP32-WROOM-32's GC heap (${b.toLocaleString()}) plus the simulator's share (${s.toLocaleString()}), as the terminal sim gives it. This port grows its heap when it must and collects garbage between the page's calls, so the page measures the live heap after each collection and warns when it is over the board's.`,
    heapover: (n) => `Warning: the live heap reached ${n.toLocaleString()} bytes, more than the board has: on an ESP32 this is a MemoryError.`,
    scendone: (v, r) => `Scenario played: ${(v / 1000).toFixed(1)} s of unit time in ${(r / 1000).toFixed(1)} s.`,
    scenbad: "Not a scenario: ", nocard: "no card on the pad", error: "The unit stopped: ", gamecard: "game card",
    heapshort: (h) => `heap ${h.toLocaleString()} B, as the board's + the sim's share (About)`,
  },
  de: {
    loading: "Gerät startet…", ready: "Gerät läuft", cards: "Karten", castle: "Burg", log: "Spielprotokoll", about: "Info",
    clearpad: "Feld leeren", knock: "An die Burg klopfen", strength: "Stärke", download: "Protokolle herunterladen",
    castlehelp: "Mucks Mäuschen Still: der Piezo an der Käseburg spürt das Klopfen; der Regler sagt, wie fest.",
    keys: "Tasten: 1–6 drücken (halten = lang), q w e r t y Doppeldruck, a s d f g h langer Druck, " +
          "z x c v b n 2,5 s halten, k klopfen, 0 Feld leeren, / Karten suchen.",
    scenario: "Ein Szenario abspielen (tests/scenarios/*.jsonl), oder auf die Seite ziehen:",
    drop: "Szenario hier ablegen", search: "Karten suchen: mouse 7, Koffer, cheese, mausgeflippt",
    heap: (h, b, s) => `Speicher: ${h.toLocaleString()} Bytes, der GC-Heap des ESP32-WROOM-32 (${b.toLocaleString()}) und der Anteil des Simulators (${s.toLocaleString()}), wie im Terminal. Dieser Port vergrößert seinen Heap bei Bedarf und räumt zwischen den Aufrufen der Seite auf: die Seite misst den belegten Heap nach jedem Aufräumen und warnt, wenn er größer ist als auf dem Board.`,
    heapover: (n) => `Achtung: ${n.toLocaleString()} Bytes belegt, mehr als das Board hat: auf einem ESP32 ein MemoryError.`,
    scendone: (v, r) => `Szenario gespielt: ${(v / 1000).toFixed(1)} s Gerätezeit in ${(r / 1000).toFixed(1)} s.`,
    scenbad: "Kein Szenario: ", nocard: "keine Karte auf dem Feld", error: "Das Gerät hat angehalten: ", gamecard: "Spielkarte",
    heapshort: (h) => `Heap ${h.toLocaleString()} B, wie das Board + Anteil des Simulators (Info)`,
  },
};
const params = new URLSearchParams(location.search);
const LANG = (params.get("lang") || navigator.language || "en").toLowerCase().startsWith("de") ? "de" : "en";
const t = T[LANG];
document.documentElement.lang = LANG;
for (const el of document.querySelectorAll("[data-t]")) el.textContent = t[el.dataset.t];
const $ = (id) => document.getElementById(id);
$("search").placeholder = t.search;

// What tests and the bench read (window.mausbox): the unit's state as the page knows it.
const state = window.mausbox = { ready: false, leds: [], frame: "", console: [], logs: {}, tone: 0, vnow: 0,
                                 heapPeak: 0, errors: [], scenario: null, loadMs: 0, said: [] };
const worker = new Worker("worker.js", { type: "module" });
let cfg = null;
const pad = new Set();

// --- the OLED: 128x64 MONO_VLSB, one canvas pixel a display pixel, scaled by CSS (pixelated) ----------
const ctx = $("oled").getContext("2d");
const img = ctx.createImageData(128, 64);
function drawFrame(hex) {
  state.frame = hex;
  const d = img.data;
  for (let x = 0; x < 128; x++) {
    for (let page = 0; page < 8; page++) {
      const b = parseInt(hex.substr((page * 128 + x) * 2, 2), 16);
      for (let bit = 0; bit < 8; bit++) {
        const i = ((page * 8 + bit) * 128 + x) * 4, on = (b >> bit) & 1;
        d[i] = on ? 140 : 0; d[i + 1] = on ? 220 : 0; d[i + 2] = on ? 255 : 0; d[i + 3] = 255;
      }
    }
  }
  ctx.putImageData(img, 0, 0);
}

// --- the players' buttons and LEDs --------------------------------------------------------------
const KEYS = "123456", DOUBLE = "qwerty", LONG = "asdfgh", HOLD = "zxcvbn";
const buttons = [];
for (let p = 1; p <= 6; p++) {
  const b = document.createElement("button");
  b.className = "player"; b.id = "p" + p; b.textContent = p;
  b.innerHTML = `<span class="led"></span>${p}`;
  const down = (ev) => { ev.preventDefault(); if (!b.classList.contains("down")) { b.classList.add("down"); send({ press: p }); } };
  const up = (ev) => { ev.preventDefault(); if (b.classList.contains("down")) { b.classList.remove("down"); send({ release: p }); } };
  b.addEventListener("pointerdown", (ev) => { b.setPointerCapture(ev.pointerId); down(ev); });
  b.addEventListener("pointerup", up); b.addEventListener("pointercancel", up);
  b.addEventListener("contextmenu", (ev) => ev.preventDefault());
  $("players").appendChild(b); buttons.push(b);
}
function showLeds(leds) {
  state.leds = leds;
  leds.forEach((hex, i) => {
    const led = buttons[i] && buttons[i].firstChild;
    if (!led) return;
    const [r, g, b] = [0, 2, 4].map((k) => parseInt(hex.substr(k, 2), 16));
    const m = Math.max(r, g, b);
    const s = m ? 255 / m : 0;  // an LED's colour at full brightness: the firmware dims them
    led.style.background = m ? `rgb(${r * s | 0},${g * s | 0},${b * s | 0})` : "#111";
    buttons[i].style.background = m ? `rgb(${(r * s * 0.6 + 90) | 0},${(g * s * 0.6 + 90) | 0},${(b * s * 0.6 + 90) | 0})` : "#777";
  });
}

// --- the buzzer: the PWM's frequency as a square wave --------------------------------------------
let audio = null, osc = null;
function tone(hz) {
  state.tone = hz;
  $("buzzer").classList.toggle("on", hz > 0);
  try {
    if (!audio) { audio = new AudioContext(); const g = audio.createGain(); g.gain.value = 0.05; g.connect(audio.destination); audio.g = g; }
    if (hz > 0) {
      if (!osc) { osc = audio.createOscillator(); osc.type = "square"; osc.connect(audio.g); osc.start(); }
      osc.frequency.setValueAtTime(hz, audio.currentTime);
    } else if (osc) { osc.stop(); osc.disconnect(); osc = null; }
  } catch (e) { /* no audio on this browser: the note shows */ }
}
document.addEventListener("pointerdown", () => audio && audio.resume(), { once: false });

// --- the card pad: a deck to search and tap --------------------------------------------------------
function renderDeck() {
  const q = $("search").value.toLowerCase().split(/\s+/).filter(Boolean);
  const deck = $("deck"); deck.textContent = "";
  let n = 0;
  for (const c of cfg.cards) {
    const hay = (c.id + " " + c.label).toLowerCase();
    const nums = q.filter((w) => /^\d+$/.test(w));
    if (!q.filter((w) => !/^\d+$/.test(w)).every((w) => hay.includes(w))) continue;
    if (!nums.every((w) => c.id.split("/").pop().replace(/^0+/, "") === w.replace(/^0+/, ""))) continue;
    if (++n > 80) break;
    const b = document.createElement("button");
    b.className = "card" + (c.id.startsWith("game/") ? " game" : "") + (pad.has(c.id) ? " on" : "");
    b.dataset.id = c.id;
    const [head, ...rest] = c.label.split(": ");
    b.innerHTML = `<b></b><span></span>`;
    const game = c.id.startsWith("game/");
    b.firstChild.textContent = game ? c.label.replace("game card ", "") : c.id;
    b.lastChild.textContent = game ? t.gamecard : rest.join(": ") || head;
    b.onclick = () => toggleCard(c.id);
    deck.appendChild(b);
  }
}
function toggleCard(id) {
  if (pad.has(id)) { pad.delete(id); send({ remove: id }); } else { pad.add(id); send({ tap: id }); }
  renderPad(); renderDeck();
}
function renderPad() {
  const el = $("pad"); el.textContent = "";
  if (!pad.size) { el.textContent = t.nocard; return; }
  for (const id of pad) { const b = document.createElement("button"); b.textContent = id + " ✕"; b.onclick = () => toggleCard(id); el.appendChild(b); }
}
function clearPad() { for (const id of [...pad]) send({ remove: id }); pad.clear(); renderPad(); renderDeck(); }
$("search").addEventListener("input", renderDeck);
$("search").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter") { const first = $("deck").querySelector(".card"); if (first) toggleCard(first.dataset.id); }
  if (ev.key === "Escape") $("search").blur();
  ev.stopPropagation();
});
$("clearpad").onclick = clearPad;

// --- the castle ------------------------------------------------------------------------------------
const knock = () => send({ knock: Number($("strength").value) / 100, ms: 40 });
$("knock").onclick = knock;

// --- tabs, keys -------------------------------------------------------------------------------------
for (const b of document.querySelectorAll("#tabs button")) {
  b.onclick = () => {
    for (const o of document.querySelectorAll("#tabs button")) o.classList.toggle("on", o === b);
    for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("on", tab.id === "tab-" + b.dataset.tab);
  };
}
const held = new Set();
document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.target.tagName === "INPUT") return;
  const k = ev.key;
  let i;
  if ((i = KEYS.indexOf(k)) >= 0) { if (!held.has(k)) { held.add(k); buttons[i].classList.add("down"); send({ press: i + 1 }); } }
  else if ((i = DOUBLE.indexOf(k)) >= 0) send({ double: i + 1 });
  else if ((i = LONG.indexOf(k)) >= 0) send({ hold: i + 1, ms: 1200 });
  else if ((i = HOLD.indexOf(k)) >= 0) send({ hold: i + 1, ms: 2500 });
  else if (k === "k") knock();
  else if (k === "0") clearPad();
  else if (k === "/") { ev.preventDefault(); $("search").focus(); document.querySelector('[data-tab="cards"]').click(); }
  else return;
  ev.preventDefault();
});
document.addEventListener("keyup", (ev) => {
  const i = KEYS.indexOf(ev.key);
  if (i >= 0 && held.has(ev.key)) { held.delete(ev.key); buttons[i].classList.remove("down"); send({ release: i + 1 }); }
});

// --- the game log: the latest log's records as lines (as the terminal UI shows them) ----------------------
function logLine(rec) {
  const body = Object.fromEntries(Object.entries(rec).filter(([k]) => !["seq", "crc", "t", "type", "settings"].includes(k)));
  return `${((rec.t || 0) / 1000).toFixed(1).padStart(6)}s ${(rec.type || "?").padEnd(10)} ${JSON.stringify(body)}`;
}
const logEl = $("log");
function addLogRecord(rec) {
  if (rec.type === "game_start") logEl.textContent = "";
  const li = document.createElement("li"); li.textContent = logLine(rec); logEl.appendChild(li);
  logEl.scrollTop = logEl.scrollHeight;
}

// --- downloads: the unit's logs folder as one tar (mausbox logs import takes it) ------------------------
function tar(files) {
  const enc = new TextEncoder(), parts = [];
  const field = (h, off, len, s) => { const b = enc.encode(s); h.set(b.subarray(0, len), off); };
  const mtime = Math.floor(Date.now() / 1000);
  for (const [name, text] of Object.entries(files)) {
    const data = enc.encode(text), h = new Uint8Array(512);
    field(h, 0, 100, "logs/" + name); field(h, 100, 8, "0000644\0"); field(h, 108, 8, "0000000\0"); field(h, 116, 8, "0000000\0");
    field(h, 124, 12, data.length.toString(8).padStart(11, "0") + "\0"); field(h, 136, 12, mtime.toString(8).padStart(11, "0") + "\0");
    field(h, 148, 8, "        "); h[156] = 48; field(h, 257, 6, "ustar\0"); field(h, 263, 2, "00");
    let sum = 0; for (const x of h) sum += x;
    field(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
    parts.push(h, data, new Uint8Array((512 - data.length % 512) % 512));
  }
  parts.push(new Uint8Array(1024));
  return new Blob(parts, { type: "application/x-tar" });
}
let downloadWanted = false;
$("download").onclick = () => { downloadWanted = true; worker.postMessage({ logs: 1 }); };
function saveLogs(logs) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(tar(logs));
  a.download = `mausbox-logs-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-")}.tar`;
  document.body.appendChild(a); a.click(); a.remove();
}

// --- scenarios: checked and sorted as mausbox.sim.run.parse_scenario does, then played by a fresh unit ------
const ACTIONS = ["press", "release", "hold", "tap", "remove", "knock", "noise", "rfid"];
function parseScenario(text, name) {
  const out = [];
  text.split(/\r?\n/).forEach((raw, n) => {
    const line = raw.trim(), where = `${name}:${n + 1}`;
    if (!line || line.startsWith("#") || line.startsWith("//")) return;
    let a;
    try { a = JSON.parse(line); } catch (e) { throw new Error(`${where}: not valid JSON`); }
    if (typeof a !== "object" || Array.isArray(a) || a === null) throw new Error(`${where}: each line must be a JSON object`);
    if (!Number.isInteger(a.at_ms) || a.at_ms < 0) throw new Error(`${where}: "at_ms" must be a whole number of ms >= 0`);
    const kinds = ACTIONS.filter((k) => k in a);
    if (kinds.length !== 1) throw new Error(`${where}: exactly one action needed, one of ${ACTIONS.join(", ")}`);
    const k = kinds[0], clean = { at_ms: a.at_ms, [k]: typeof a[k] === "string" && a[k].startsWith("mausbox:") ? a[k].slice(8) : a[k] };
    if (k === "hold") clean.ms = a.ms;
    if (k === "knock") clean.ms = a.ms === undefined ? 30 : a.ms;
    out.push(clean);
  });
  return out.map((a, i) => [a, i]).sort((x, y) => x[0].at_ms - y[0].at_ms || x[1] - y[1]).map(([a]) => a);
}
function playScenario(text, name) {
  let acts;
  try { acts = parseScenario(text, name); } catch (e) { $("scenresult").textContent = t.scenbad + e.message; state.scenario = { error: e.message }; return; }
  // Python's json.dumps spacing, so the unit reads the very file the terminal sim would write
  const norm = acts.map((a) => JSON.stringify(a).replace(/":/g, '": ').replace(/,"/g, ', "')).join("\n") + "\n";
  location.hash = "";
  sessionStorage.setItem("mausbox-scenario", JSON.stringify({ name, norm }));
  location.reload();
}
$("scenariofile").onchange = async (ev) => { const f = ev.target.files[0]; if (f) playScenario(await f.text(), f.name); };
document.addEventListener("dragover", (ev) => { ev.preventDefault(); $("drop").classList.add("on"); });
document.addEventListener("dragleave", () => $("drop").classList.remove("on"));
document.addEventListener("drop", async (ev) => {
  ev.preventDefault(); $("drop").classList.remove("on");
  const f = ev.dataTransfer.files[0]; if (f) playScenario(await f.text(), f.name);
});
state.playScenario = playScenario;

// --- the worker ------------------------------------------------------------------------------------
function send(act) { worker.postMessage({ act }); }
state.send = send;
// ?clock=manual: the unit's clock moves only when asked (tests play a game through the page deterministically)
state.advanceTo = (ms) => new Promise((res) => { const id = Math.random(); waits.set(id, res); worker.postMessage({ advance_to: ms, id }); });
state.frameNow = () => new Promise((res) => { const id = Math.random(); waits.set(id, res); worker.postMessage({ frame: id }); });
const waits = new Map();
function onOut(line) {
  let m;
  try { m = JSON.parse(line); } catch (e) { return; }
  if (m.oled !== undefined) drawFrame(m.oled);
  if (m.leds) showLeds(m.leds);
  if (m.tone !== undefined) tone(m.tone);
}
function onConsole(line) {
  state.console.push(line);
  if (state.console.length > 2000) state.console.splice(0, 1000);
  if (line.startsWith("EV ")) { try { addLogRecord(JSON.parse(line.slice(3))); } catch (e) { /* not a record */ } }
  if (line.startsWith("SAY ")) state.said.push(line.slice(4));
  const c = $("console"); c.textContent = state.console.slice(-60).join("\n"); c.scrollTop = c.scrollHeight;
}
worker.onmessage = (ev) => {
  const m = ev.data;
  if (m.out !== undefined) onOut(m.out);
  if (m.console !== undefined) onConsole(m.console);
  if (m.id !== undefined && waits.has(m.id)) { waits.get(m.id)(m.frame !== undefined ? m.frame : m.tick); waits.delete(m.id); }
  if (m.logs && downloadWanted) { downloadWanted = false; saveLogs(m.logs); }
  if (m.logs) state.logs = m.logs;
  if (m.ready) {
    state.ready = true; state.loadMs = performance.now();  // since the page was asked for: page to menu
    $("state").textContent = t.ready;
  }
  if (m.tick !== undefined) state.vnow = m.tick;
  if (m.heap_used !== undefined && m.heap_used > state.heapPeak) {
    state.heapPeak = m.heap_used;
    if (cfg && m.heap_used > cfg.heap) $("heapnote").textContent = t.heap(cfg.heap, cfg.board_heap, cfg.sim_share) + " " + t.heapover(m.heap_used);
  }
  if (m.done) {
    state.scenario = { virtual_ms: m.virtual_ms, real_ms: m.real_ms, logs: m.logs };
    if (m.frame) drawFrame(m.frame);
    $("scenresult").textContent = t.scendone(m.virtual_ms, m.real_ms);
    $("state").textContent = t.scendone(m.virtual_ms, m.real_ms);
  }
  if (m.error) { state.errors.push(m.error); $("state").textContent = t.error + m.error; onConsole(m.error); }
};

(async () => {
  cfg = await (await fetch("unit.json")).json();
  state.cfg = cfg;
  $("heapnote").textContent = t.heap(cfg.heap, cfg.board_heap, cfg.sim_share);
  $("heapshort").textContent = t.heapshort(cfg.heap);
  renderDeck(); renderPad();
  const scen = sessionStorage.getItem("mausbox-scenario");
  sessionStorage.removeItem("mausbox-scenario");
  if (scen) {
    const { name, norm } = JSON.parse(scen);
    $("scenresult").textContent = name + " …";
    document.querySelector('[data-tab="log"]').click();
    worker.postMessage({ start: 1, scenario: norm });
  } else {
    worker.postMessage({ start: 1, lang: LANG, manual: params.get("clock") === "manual" });
  }
  if ("serviceWorker" in navigator && location.protocol !== "file:") navigator.serviceWorker.register("sw.js").catch(() => {});
})();
