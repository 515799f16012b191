"""A whole game of each game played through the page in headless Chromium with no network: the players' keys
(1-6) and the on-screen button of player 1 (mouse), cards tapped from the searchable deck, knocks with the
castle's button and slider. The page runs on its manual clock (?clock=manual): the test moves the unit's
virtual time to each action's instant (a scenario's at_ms), so the game is the same on a busy machine. Each
game must end as the scenario's .expect.json says; then the canvas is checked against the firmware's
framebuffer, the logs downloaded, imported with `mausbox logs import` and reported with `mausbox report`."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import webkit
from mausbox.sim.run import parse_scenario

SCEN = Path(__file__).resolve().parents[1] / "scenarios"
GAMES = ["mg-3p-wait", "mim-a-3p", "mms-4p-full"]  # Mausgeflippt, M is for Mouse (variant A), Mucks Mäuschen Still


def timeline(name: str) -> list[dict]:
    acts = []
    for a in parse_scenario((SCEN / f"{name}.jsonl").read_text(encoding="utf-8"), name):
        if "hold" in a:  # the key held down and let go ms later
            acts.append({"at_ms": a["at_ms"], "press": a["hold"]})
            acts.append({"at_ms": a["at_ms"] + a["ms"], "release": a["hold"]})
        else:
            acts.append(a)
    return sorted(acts, key=lambda a: a["at_ms"])  # stable


def advance(drv, ms: int) -> None:
    drv.execute_async_script("window.mausbox.advanceTo(arguments[0]).then(arguments[1])", ms)


def card(drv, ident: str) -> None:
    """Find the card in the deck by searching for its identity, and tap it (again: take it off the pad)."""
    from selenium.webdriver.common.by import By

    box = drv.find_element(By.ID, "search")
    box.clear()
    box.send_keys(ident)
    drv.find_element(By.CSS_SELECTOR, f'.card[data-id="{ident}"]').click()
    drv.execute_script("document.activeElement.blur()")


def play(drv, name: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    p1 = drv.find_element(By.ID, "p1")
    for a in timeline(name):
        advance(drv, a["at_ms"])
        if "press" in a or "release" in a:
            p = a.get("press") or a.get("release")
            chain = ActionChains(drv)
            if p == 1:  # player 1 on the screen's button, the others on their keys
                (chain.click_and_hold(p1) if "press" in a else chain.release(p1)).perform()
            else:
                (chain.key_down(str(p)) if "press" in a else chain.key_up(str(p))).perform()
        elif "tap" in a or "remove" in a:
            drv.find_element(By.CSS_SELECTOR, '[data-tab="cards"]').click()
            card(drv, a.get("tap") or a.get("remove"))
        elif "knock" in a:
            assert a["ms"] == 40, "the castle's button knocks for 40 ms"
            drv.find_element(By.CSS_SELECTOR, '[data-tab="castle"]').click()
            drv.execute_script("document.getElementById('strength').value = arguments[0]", round(a["knock"] * 100))
            drv.find_element(By.ID, "knock").click()
        else:
            raise AssertionError(f"no way to do {a} on the page")
    last = timeline(name)[-1]["at_ms"]
    for extra in range(1, 13):  # the end screens and claim windows run out
        advance(drv, last + extra * 5000)
        if game_end(drv):
            break


def game_end(drv) -> dict | None:
    lines = drv.execute_script("return window.mausbox.console.filter(l => l.startsWith('EV '))")
    for line in reversed(lines):
        rec = json.loads(line[3:])
        if rec["type"] == "game_end":
            return rec
    return None


def canvas_matches_framebuffer(drv) -> None:
    fb = bytes.fromhex(drv.execute_async_script("window.mausbox.frameNow().then(arguments[0])"))
    px = drv.execute_script("""const c = document.getElementById('oled');
        return Array.from(c.getContext('2d').getImageData(0, 0, 128, 64).data.filter((v, i) => i % 4 === 2));""")
    lit = 0
    for y in range(64):
        for x in range(128):
            on = fb[(y // 8) * 128 + x] >> (y % 8) & 1
            assert (px[y * 128 + x] > 0) == bool(on), f"canvas pixel ({x}, {y}) differs from the framebuffer"
            lit += on
    assert lit > 50, "the display shows next to nothing"


@pytest.mark.parametrize("name", GAMES)
def test_a_whole_game_on_the_page(name, page_url, browser, tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    drv = browser(downloads=downloads)
    drv.get(page_url + "?clock=manual&lang=en")
    webkit.wait_for(drv, "window.mausbox && window.mausbox.ready", "the page's unit ready")
    play(drv, name)
    end = game_end(drv)
    want = json.loads((SCEN / f"{name}.expect.json").read_text())
    assert end is not None, "the game never ended"
    assert end["scores"] == want["scores"] and end["winners"] == want["winners"], (end, want)
    canvas_matches_framebuffer(drv)

    drv.find_element("css selector", '[data-tab="log"]').click()
    shown = drv.find_element("id", "log").text
    assert "game_end" in shown and "game_start" in shown, "the game log on the page"
    drv.find_element("id", "download").click()
    tars = _wait_file(downloads)
    with tarfile.open(tars) as tf:
        assert any(m.name.endswith(".jsonl") for m in tf.getmembers())
    store = tmp_path / "store.sqlite"
    mausbox = [sys.executable, "-m", "mausbox"]
    imp = subprocess.run([*mausbox, "logs", "import", str(tars), "--store", str(store)], capture_output=True, text=True)
    assert imp.returncode == 0, imp.stdout + imp.stderr
    assert "imported" in imp.stdout
    rep = subprocess.run([*mausbox, "report", "--store", str(store), "-o", str(tmp_path / "class.html")],
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert "(1 game)" in rep.stdout, rep.stdout
    html = (tmp_path / "class.html").read_text(encoding="utf-8")
    assert {"mg": "Mausgeflippt", "mim": "M is for Mouse", "mms": "Mucks"}[name.split("-")[0]] in html


def _wait_file(folder: Path) -> Path:
    import time

    for _ in range(600):  # a hang guard, not a timing: the download is written by the browser
        done = list(folder.glob("*.tar"))
        if done:
            return done[0]
        time.sleep(0.1)
    raise AssertionError("the logs were never downloaded")
