"""`write_report`: the whole static site, written page by page into OUT_DIR.

Layout: index.html, chains/<id>.html, trajectories/<id>.html and assets/ (plotly.js, the
stylesheet, one small script). Links are relative, so the folder opens from disk or any copy.
The site is written into a fresh directory beside OUT_DIR and swapped in whole
(`prchain.core.files.atomic_directory`); OUT_DIR must be new, empty or an earlier report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.agent.stats import agreement
from prchain.core.files import atomic_directory
from prchain.report.chainpage import ChainPage, chain_pages
from prchain.report.collect import collect_index, llm_role_rows
from prchain.report.config import ReportConfig
from prchain.report.diffs import clip
from prchain.report.embed import script_json
from prchain.report.facts import PipelineFacts
from prchain.report.funnel import build_funnel
from prchain.report.graph import OUTCOME_COLOURS, GraphNode, chain_figure
from prchain.report.optional import p2t_counts
from prchain.report.plots import index_plots, write_plotly_js
from prchain.report.trajpage import StepCost, TrajectoryPage, trajectory_page
from prchain.store.rollouts import every_rollout

Progress = Callable[[str, int, int], None]
VENDORED = ("diff2html.min.js", "diff2html.min.css", "diff2html.LICENSE.txt")
STEP_LABELS = {
    "query": "task",
    "feedback": "judge feedback",
    "prm": "PRM guidance",
    "format_error": "format error",
}


@dataclass
class ReportSummary:
    out_dir: Path
    chain_pages: int = 0
    trajectory_pages: int = 0
    bytes: int = 0
    seconds: float = 0.0


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("prchain.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _assets(out: Path) -> None:
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    package = resources.files("prchain.report") / "assets"
    for name in ("report.css", "report.js"):
        (assets / name).write_text((package / name).read_text(encoding="utf-8"), encoding="utf-8")
    for name in VENDORED:
        (assets / name).write_bytes((package / "vendor" / name).read_bytes())
    write_plotly_js(assets)


class SiteWriter:
    def __init__(self, out: Path, config: ReportConfig, cost: StepCost | None) -> None:
        self.out, self.config, self.cost = out, config, cost
        self.env = _environment()
        self.generated = datetime.now(UTC).strftime("generated %Y-%m-%d %H:%M UTC")

    def write(self, rel: str, template: str, **context: Any) -> None:
        root = "../" * rel.count("/")
        context.setdefault("plots", False)
        context.setdefault("diffs", False)
        html = self.env.get_template(template).render(
            root=root, generated=self.generated, **context
        )
        (self.out / rel).write_text(html, encoding="utf-8")

    def index(self, session: Session, facts: PipelineFacts, store: str) -> list[int]:
        """Write index.html; returns the ids of the chains that get a page."""
        data = collect_index(session)
        paged = [c.id for c in data.chains[: self.config.max_chain_pages]]
        for chain in data.chains[: self.config.max_chain_pages]:
            chain.page = True
        self.write(
            "index.html",
            "index.html.j2",
            store=store,
            funnel=build_funnel(session, facts),
            graph_recomputed=facts.graph is not None,
            plots=index_plots(data),
            repos=data.repos,
            p2t=p2t_counts(session),
            llm_roles=llm_role_rows(session),
            agreement=agreement(session),
            lengths=sorted({c.length for c in data.chains}),
            outcomes=sorted({c.outcome for c in data.chains}),
            chains_total=len(data.chains),
            rollouts_total=len(data.rollouts),
            cost_total=sum(r["cost"] for r in data.rollouts),
            chains_json=script_json([c.as_json() for c in data.chains]),
        )
        return paged

    def chain(self, page: ChainPage) -> None:
        numbers = {s.pr_id: s.number for s in page.stages}
        for edge in page.edges:
            edge.setdefault("src_number", numbers.get(edge.get("src", 0)))
            edge.setdefault("dst_number", numbers.get(edge.get("dst", 0)))
        nodes = [GraphNode(s.pr_id, s.idx, s.number, s.title, s.outcome) for s in page.stages]
        limit = self.config.max_diff_lines
        stages = []
        for s in page.stages:
            view = vars(s) | {
                "gold": clip(s.gold_patch, limit),
                "gold_test": clip(s.gold_test_patch, limit),
                "agent": clip(s.agent_diff or "", limit),
            }
            stages.append(view)
        self.write(
            f"chains/{page.id}.html",
            "chain.html.j2",
            chain=vars(page) | {"stages": stages},
            graph_json=script_json(chain_figure(nodes, page.edges)),
            colours=OUTCOME_COLOURS,
            plots=True,
            diffs=True,
        )

    def trajectory(self, page: TrajectoryPage) -> None:
        self.write(
            f"trajectories/{page.rollout.id}.html",
            "trajectory.html.j2",
            r=page.rollout,
            page=page,
            labels=STEP_LABELS,
            row_committed=_committed,
            diffs=True,
        )


def _committed(columns: list[str], row: list[Any]) -> bool:
    """A P2T candidate row marked as the one committed for its window."""
    for name in ("committed", "chosen", "selected"):
        if name in columns and row[columns.index(name)]:
            return True
    return False


def _size(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def write_report(
    engine: Engine,
    out_dir: str | Path,
    config: ReportConfig,
    facts: PipelineFacts,
    *,
    cost: StepCost | None = None,
    store: str = "",
    progress: Progress | None = None,
) -> ReportSummary:
    """Write the site into a fresh directory beside `out_dir` and swap it in when complete.

    `out_dir` must be new, empty, or a report prchain wrote (a marker file says so): a user's own
    files are never replaced, and a run killed midway leaves the previous report as it was.
    """
    started = time.perf_counter()
    summary = ReportSummary(Path(out_dir))
    with atomic_directory(out_dir) as out:
        _write_site(engine, out, config, facts, cost, store, progress, summary)
    summary.bytes = _size(summary.out_dir)
    summary.seconds = time.perf_counter() - started
    return summary


def _write_site(
    engine: Engine,
    out: Path,
    config: ReportConfig,
    facts: PipelineFacts,
    cost: StepCost | None,
    store: str,
    progress: Progress | None,
    summary: ReportSummary,
) -> None:
    for sub in ("chains", "trajectories", "assets"):
        (out / sub).mkdir()
    _assets(out)
    writer = SiteWriter(out, config, cost)
    with Session(engine) as session:
        paged = writer.index(session, facts, store)
        for page in chain_pages(session, paged):
            writer.chain(page)
            summary.chain_pages += 1
            if progress and summary.chain_pages % 100 == 0:
                progress("chain pages", summary.chain_pages, len(paged))
        rollouts = every_rollout(session)
        for rollout in rollouts:
            writer.trajectory(
                trajectory_page(session, rollout, cost=cost, max_chars=config.max_observation_chars)
            )
            summary.trajectory_pages += 1
