"""PNG screenshots of a generated report: its index and its first trajectory page.

Usage: python scripts/screenshots.py OUT_DIR  (writes OUT_DIR/screenshots/*.png)
Drives Debian's Chromium (`apt-get install chromium`) through playwright; no browser is downloaded.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("PRCHAIN_CHROMIUM", "/usr/bin/chromium")


def main(out: Path) -> None:
    shots = out / "screenshots"
    shots.mkdir(exist_ok=True)
    pages = [("index", out / "index.html")]
    trajectories = sorted((out / "trajectories").glob("*.html"), key=lambda p: int(p.stem))
    chains = sorted((out / "chains").glob("*.html"), key=lambda p: int(p.stem))
    if chains:
        pages.append(("chain", chains[0]))
    if trajectories:
        pages.append(("trajectory", trajectories[0]))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for name, path in pages:
            page.goto(path.resolve().as_uri())
            page.wait_for_load_state("load")
            page.wait_for_timeout(500)  # plotly draws after DOMContentLoaded
            target = shots / f"{name}.png"
            page.screenshot(path=str(target), full_page=True)
            print(f"wrote {target}")
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "data/demo/report"))
