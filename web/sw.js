// Offline: every file of this build is cached on the first visit and served from the cache after that.
const CACHE = "mausbox-@BUILD@";
self.addEventListener("install", (ev) => {
  ev.waitUntil((async () => {
    const cfg = await (await fetch("unit.json")).json();
    const files = ["./", "index.html", "app.js", "worker.js", "style.css", "icon.svg", "mausweb.py", "micropython.mjs",
                   "micropython.wasm", "unit.json", ...cfg.files.map((f) => "unit/" + f)];
    await (await caches.open(CACHE)).addAll(files);
    self.skipWaiting();
  })());
});
self.addEventListener("activate", (ev) => {
  ev.waitUntil((async () => {
    for (const k of await caches.keys()) if (k !== CACHE) await caches.delete(k);
    await self.clients.claim();
  })());
});
self.addEventListener("fetch", (ev) => {
  ev.respondWith((async () => (await caches.match(ev.request, { ignoreSearch: true })) || fetch(ev.request))());
});
