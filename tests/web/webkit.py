"""Headless Chromium (Debian's chromium and chromium-driver) on the built page, for the web tests and the bench."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def missing() -> str | None:
    """Why the browser cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (make setup)"
    if CHROMIUM is None:
        return "no chromium (apt-get install chromium)"
    if CHROMEDRIVER is None:
        return "no chromedriver (apt-get install chromium-driver)"
    return None


def browser(width: int = 1366, height: int = 768, downloads: Path | None = None, offline: bool = True,
            lang: str = "en-US"):
    """A fresh headless Chromium; `offline`: every host but localhost unreachable (no network)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="mausbox-chromium-")
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
              f"--user-data-dir={profile}", f"--window-size={width},{height}", f"--lang={lang}",
              "--autoplay-policy=no-user-gesture-required"):
        opts.add_argument(a)
    if offline:
        # No network: only the page's own server answers (a proxy that is not there for every other host).
        opts.add_argument("--proxy-server=http://127.0.0.1:9")
        opts.add_argument("--proxy-bypass-list=<-loopback>;127.0.0.1")
    prefs: dict = {"intl.accept_languages": lang}
    if downloads is not None:
        prefs.update({"download.default_directory": str(downloads), "download.prompt_for_download": False})
    opts.add_experimental_option("prefs", prefs)
    drv = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    drv.set_window_size(width, height)
    drv.profile_dir = profile  # type: ignore[attr-defined]
    return drv


def close(drv) -> None:
    drv.quit()
    shutil.rmtree(getattr(drv, "profile_dir", ""), ignore_errors=True)


def wait_for(drv, js: str, what: str, limit_s: float = 600.0):
    """Poll a JS expression until it is truthy; fails with `what` (the limit is a hang guard, not a timing)."""
    end = time.monotonic() + limit_s
    while True:
        v = drv.execute_script("return " + js)
        if v:
            return v
        errs = drv.execute_script("return window.mausbox && window.mausbox.errors")
        assert not errs, f"the unit stopped: {errs}"
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.1)
