"""A headless Chromium for browser tests: Debian's package, driven by playwright.

Nothing is downloaded (`playwright install` is never run): playwright launches the system
binary given by PRCHAIN_CHROMIUM (default /usr/bin/chromium, installed by scripts/setup-system.sh).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("PRCHAIN_CHROMIUM", "/usr/bin/chromium")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """A launched headless browser, shared by the session; skipped (failed in CI) without one."""
    if not Path(CHROMIUM).exists():
        message = f"no Chromium at {CHROMIUM} (run `make install` or apt-get install chromium)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


class RecordingPage:
    """A page that records every request it makes and lets only files under `root` through."""

    def __init__(self, browser: Any, root: Path) -> None:
        self.root = root.resolve().as_uri() + "/"
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        # Generous: CI machines are shared, and parsing plotly.js (4.8 MB) can take a while there.
        self.context.set_default_timeout(120_000)
        self.page = self.context.new_page()
        self.page.route("**/*", self._route)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if url.startswith(self.root):
            route.continue_()
        else:
            route.abort()

    def open(self, rel: str) -> Any:
        self.page.goto(self.root + rel)
        self.page.wait_for_load_state("load")
        return self.page

    def outside(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(self.root)]

    def close(self) -> None:
        self.context.close()
