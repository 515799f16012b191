"""The page itself: it fits a phone in landscape (844x390) and a 1366x768 laptop with nothing cut off, follows
the browser's language, and runs offline once loaded (its service worker serves every file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import webkit

SIZES = [(844, 390), (1366, 768)]
SHOTS = os.environ.get("MAUSBOX_WEB_SHOTS")  # a folder: keep the screenshots there (docs/web/ is made so)


def viewport(drv, w: int, h: int) -> None:
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1,
                                                               "mobile": False})


OVERFLOW = """
const W = innerWidth, H = innerHeight, bad = [];
const de = document.documentElement;
if (de.scrollWidth > W || de.scrollHeight > H) bad.push(`page ${de.scrollWidth}x${de.scrollHeight}`);
for (const sel of ['#oled', '.player', '#tabs button', '#search', '#status', '#side']) {
  for (const el of document.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) bad.push(`${sel} not shown`);
    else if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5)
      bad.push(`${sel} at ${r.left|0},${r.top|0}-${r.right|0},${r.bottom|0}`);
  }
}
for (const el of document.querySelectorAll('#tabs button, .player, #clearpad')) {
  if (el.scrollWidth > el.clientWidth + 1) bad.push(`text cut in ${el.id || el.textContent}`);
}
const o = document.getElementById('oled').getBoundingClientRect();
if (o.width < 256) bad.push(`display only ${o.width|0} px wide`);
return bad;
"""


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_fits_and_nothing_overflows(size, page_url, browser, tmp_path):
    w, h = size
    drv = browser(w, h)
    viewport(drv, w, h)
    drv.get(page_url + "?lang=en")
    webkit.wait_for(drv, "window.mausbox && window.mausbox.ready && window.mausbox.frame", "the menu on the display")
    assert drv.execute_script(OVERFLOW) == []
    shot = Path(SHOTS or tmp_path) / f"page-{w}x{h}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    drv.save_screenshot(str(shot))
    assert shot.stat().st_size > 5000


def test_language_follows_the_browser(page_url, browser):
    drv = browser(lang="de-DE")
    drv.get(page_url)
    assert drv.execute_script("return navigator.language") == "de-DE"
    webkit.wait_for(drv, "window.mausbox && window.mausbox.ready && window.mausbox.said.length", "a prompt")
    assert drv.find_element("id", "download").get_attribute("textContent") == "Protokolle herunterladen"
    said = drv.execute_script("return window.mausbox.said")
    assert any("Waehlen" in s for s in said), said  # the unit itself speaks German (its lang setting)


def test_runs_offline_once_loaded(page_dir, browser):
    from mausbox import web

    srv, url = web.serve(page_dir)
    drv = browser()
    drv.get(url)
    webkit.wait_for(drv, "window.mausbox && window.mausbox.ready", "the page's unit ready")
    drv.execute_async_script("navigator.serviceWorker.ready.then(() => arguments[0]())")
    webkit.wait_for(drv, "caches.keys().then(k => k.length)", "the offline cache")  # a promise: WebDriver waits for it
    srv.shutdown()
    srv.server_close()  # nothing answers on that address any more
    drv.get(url)
    webkit.wait_for(drv, "window.mausbox && window.mausbox.ready && window.mausbox.frame", "the page, offline")
    assert drv.execute_script("return !!navigator.serviceWorker.controller")


def test_plays_in_real_time(page_url, browser):
    """Without the manual clock the unit's time follows the page's, and a player's tap reaches the menu."""
    from selenium.webdriver.common.action_chains import ActionChains

    drv = browser()
    drv.get(page_url + "?lang=en")
    webkit.wait_for(drv, "window.mausbox && window.mausbox.ready && window.mausbox.said.length", "the menu")
    start = drv.execute_script("return window.mausbox.vnow")
    webkit.wait_for(drv, f"window.mausbox.vnow > {start} + 1000", "a virtual second passing")
    before = drv.execute_script("return window.mausbox.said.length")
    ActionChains(drv).key_down("1").pause(0.1).key_up("1").perform()  # player 1 clicks: the menu's next game
    webkit.wait_for(drv, f"window.mausbox.said.length > {before}", "the menu moving on")
    assert "M is for Mouse" in drv.execute_script("return window.mausbox.said.slice(-1)[0]")
