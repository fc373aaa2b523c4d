"""`prchain report`: the facts the store does not hold, worked out with this run's config, then
the site. The only place the report meets the chains, export and pricing configuration."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, func, select
from sqlalchemy.engine import make_url

from prchain.app.config import Config
from prchain.app.store import opened
from prchain.report.facts import ExportFacts, GraphFacts, PipelineFacts
from prchain.report.site import Progress, ReportSummary, write_report
from prchain.store.db import session_scope

if TYPE_CHECKING:
    from prchain.store.handle import Store


def graph_facts(engine: Engine, config: Config) -> GraphFacts | None:
    """The reference graph as the latest `chains build` of the configured strategy read it
    (what each filter and link rule dropped, kept with the build): the report builds no graph
    again, and takes time in proportion to what it shows. None before any build."""
    from prchain.store.models import ChainBuild, ChainLink

    with session_scope(engine) as session:
        build = session.scalars(
            select(ChainBuild)
            .where(ChainBuild.strategy == config.chains.strategy)
            .order_by(ChainBuild.id.desc())
            .limit(1)
        ).first()
        if build is None:
            return None
        kept = select(func.count()).where(ChainLink.kept.is_(True))
        graph = build.graph or {"edges": session.scalar(kept) or 0}
        rules = list(build.rules or [])
    return GraphFacts(
        filtered={r["rule"]: r["prs"] for r in rules if r["level"] == "pr"},
        nodes=graph.get("nodes", 0),
        references=graph.get("references", 0),
        edges=graph.get("edges", 0),
        dropped={r["rule"]: r["links"] for r in rules if r["level"] == "link"},
    )


def export_facts(engine: Engine, config: Config) -> ExportFacts:
    """What `prchain export` with this config would write, and why it would skip the rest."""
    from prchain.agent.export import build_record
    from prchain.store.rollouts import exportable

    facts, skipped = ExportFacts(), Counter[str]()
    with session_scope(engine) as session:
        for rollout in exportable(session):
            record, why = build_record(
                session,
                rollout,
                min_score=config.agent.judge_threshold,
                keep=config.agent.keep_policy,
                keep_prm=config.prm.keep_in_export,
                leak_min_chars=config.agent.leak_min_chars,
                keep_on=config.agent.keep_on,
            )
            if record is None:
                skipped[why] += 1
            else:
                facts.written += 1
    facts.skipped = dict(skipped)
    return facts


def report_from_config(
    config: Config,
    out_dir: str | Path,
    progress: Progress | None = None,
    store: Store | None = None,
) -> ReportSummary:
    from prchain.llm.pricing import cost_usd

    with opened(config.store.url, store, readonly=True) as store:
        engine = store.engine
        facts = PipelineFacts(
            graph=graph_facts(engine, config) if config.report.funnel_graph else None,
            export=export_facts(engine, config),
        )
        prices = config.llm.prices
        return write_report(
            engine,
            out_dir,
            config.report,
            facts,
            cost=lambda model, p, c: cost_usd(prices, model, p, c),
            store=make_url(config.store.url).render_as_string(hide_password=True),
            progress=progress,
        )
