"""The web page's browser tests: the page built once per session into a temporary folder, served on localhost."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import webkit  # noqa: E402


@pytest.fixture(scope="session")
def page_dir(tmp_path_factory):
    why = webkit.missing()
    if why is not None:
        if os.environ.get("CI"):  # .ci/run installs chromium and chromium-driver: missing there is a failure
            pytest.fail(f"the web tests need a browser: {why}")
        pytest.skip(f"no browser for the web tests: {why}")
    from mausbox import web

    return web.build(tmp_path_factory.mktemp("web") / "web")


@pytest.fixture(scope="session")
def page_url(page_dir):
    from mausbox import web

    srv, url = web.serve(page_dir)
    yield url
    srv.shutdown()


@pytest.fixture
def browser():
    drivers = []

    def make(width=1366, height=768, downloads=None, lang="en-US"):
        d = webkit.browser(width, height, downloads=downloads, lang=lang)
        drivers.append(d)
        return d

    yield make
    for d in drivers:
        webkit.close(d)
