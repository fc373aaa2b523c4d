"""The demo store's report, opened from disk in headless Chromium (acceptance 1 of issue 11)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.report.conftest import DemoReport
from tests.support.browser import RecordingPage

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _rolled_out_chain(report: DemoReport) -> tuple[int, int]:
    """(chain id, newest rollout id) of the demo chain the agent worked through (the demo rolls
    it out twice: tools, then text format; the chain page links the newest)."""
    trajectories = sorted(report.out.glob("trajectories/*.html"), key=lambda p: int(p.stem))
    assert trajectories, "the demo run made no trajectory page"

    def chain_of(page: Path) -> int:
        found = re.search(r'href="\.\./chains/(\d+)\.html"', page.read_text())
        assert found
        return int(found.group(1))

    chain = chain_of(trajectories[0])
    return chain, max(int(p.stem) for p in trajectories if chain_of(p) == chain)


def test_index_renders_funnel_and_every_plot(browser_page: RecordingPage) -> None:
    page = browser_page.open("index.html")
    cards = page.locator(".plot-card")
    assert cards.count() >= 8
    # plotly.js draws an <svg class="main-svg"> into each plot once it has run.
    page.wait_for_function(
        "document.querySelectorAll('.plot-card .plot .main-svg').length > 0 && "
        "Array.from(document.querySelectorAll('.plot-card .plot')).every(p => p.querySelector('.main-svg'))"
    )
    funnel = page.locator("table.funnel").inner_text()
    for step in ("pull requests mined", "chains", "rollouts", "judge-passed stages", "exported"):
        assert step in funnel
    assert "docs_only: 1" in funnel  # PR #4 only documents the calculator


def test_a_filter_narrows_the_chain_list(browser_page: RecordingPage) -> None:
    page = browser_page.open("index.html")
    rows = page.locator("#chain-rows tr")
    everything = rows.count()
    assert everything >= 2
    page.select_option("#f-len", "3")
    assert 0 < rows.count() < everything
    assert all(cell == "3" for cell in rows.locator("td:nth-child(3)").all_inner_texts())
    page.select_option("#f-len", "")
    page.select_option("#f-outcome", "not rolled out")
    assert 0 < rows.count() < everything
    page.fill("#f-text", "no such title anywhere")
    assert rows.count() == 0
    assert "0 of" in page.locator("#chain-count").inner_text()


def test_chain_page_shows_both_diffs_and_the_graph(
    browser_page: RecordingPage, demo_report: DemoReport
) -> None:
    chain_id, rollout_id = _rolled_out_chain(demo_report)
    page = browser_page.open(f"chains/{chain_id}.html")
    page.wait_for_selector("#chain-graph .main-svg")
    graph = page.locator("#chain-graph").inner_text()
    for number in ("#1", "#2", "#3"):
        assert number in graph
    assert page.locator("#chain-graph .scatterlayer .point").count() >= 3
    first = page.locator("#stage-1")
    # diff2html has replaced each raw diff with its rendering (a .d2h-file-wrapper per file).
    gold = first.locator(".diff-col.gold .rendered-diff .d2h-file-wrapper").first
    agent = first.locator(".diff-col.agent .rendered-diff .d2h-file-wrapper").first
    assert gold.is_visible() and agent.is_visible()
    assert page.locator("pre.raw-diff").count() == 0
    assert "def subtract" in gold.inner_text()
    assert "Reviewed by the demo agent" in agent.inner_text()
    assert "0.90" in first.locator("table.judge").inner_text()
    assert page.locator(f'a[href="../trajectories/{rollout_id}.html#stage-1"]').count() == 1


def test_trajectory_toggles_hide_observations_and_reasoning(
    browser_page: RecordingPage, demo_report: DemoReport
) -> None:
    _, rollout_id = _rolled_out_chain(demo_report)
    page = browser_page.open(f"trajectories/{rollout_id}.html")
    observations = page.locator("li.kind-tool")
    assert observations.count() >= 3 and observations.first.is_visible()
    page.check("#toggle-observations")
    assert not observations.first.is_visible()
    page.uncheck("#toggle-observations")
    assert observations.first.is_visible()
    reasoning = page.locator(".reasoning").first
    assert reasoning.is_visible()
    page.check("#toggle-reasoning")
    assert not reasoning.is_visible()
    # Each step has an anchor, and its patch-so-far opens in a side panel.
    edit = page.locator("li.kind-tool", has_text="has been edited").first
    step_id = edit.get_attribute("id")
    assert step_id and page.locator(f'a[href="#{step_id}"]').count() == 1
    edit.locator("a.show-patch").click()
    panel = page.locator("#patch-panel")
    assert panel.is_visible()
    assert "Reviewed by the demo agent" in panel.inner_text()
    assert page.locator(".judge-verdict").first.is_visible()


def test_no_page_reaches_outside_the_report(
    browser_page: RecordingPage, demo_report: DemoReport
) -> None:
    pages = ["index.html"] + [
        p.relative_to(demo_report.out).as_posix() for p in sorted(demo_report.out.glob("*/*.html"))
    ]
    for rel in pages:
        browser_page.open(rel)
    assert len(browser_page.requests) >= len(pages)
    assert browser_page.outside() == []
