"""`prchain chains build|list|show` and `prchain tasks export`."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import TYPE_CHECKING, cast

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from prchain.app.choices import DROP_KINDS, RULE_NAMES, STRATEGY_NAMES
from prchain.cli import main
from prchain.cli.options import build_config, command_store, config_options
from prchain.cli.progress import reporting
from prchain.cli.safe import SafeConsole, echo
from prchain.core.text import plural

if TYPE_CHECKING:
    from prchain.app.config import Config
    from prchain.app.views import ChainView, SampledLink, Score
    from prchain.chains.building.build import BuildSummary
    from prchain.chains.config import DropKind
    from prchain.store.models import ChainLink


@main.group()
def chains() -> None:
    """Ordered chains of PRs that build on each other, picked from the reference graph.

    Example:

    \b
      prchain chains build
      prchain chains list --limit 10
      prchain chains show 3
    """


@chains.command("build")
@config_options
@click.option(
    "--strategy",
    type=click.Choice(STRATEGY_NAMES),
    help="thread (default), semantic, temporal or single.",
)
@click.option(
    "--min-len",
    type=click.IntRange(min=1),
    help="Shortest chain kept (default chains.min_len = 2).",
)
@click.option(
    "--max-len", type=click.IntRange(min=1), help="Longest chain kept (default chains.max_len = 5)."
)
@click.option(
    "--decontaminate",
    "decontaminate",
    multiple=True,
    metavar="SOURCE",
    help="SWE-bench-style instances no chain may contain: a local .jsonl/.parquet file or a hub "
    "name (repeatable; adds to chains.decontam.sources).",
)
def build(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    strategy: str | None,
    min_len: int | None,
    max_len: int | None,
    decontaminate: tuple[str, ...],
) -> None:
    """Select chains from the mined PRs and references and write them with their stages.

    Reruns update chains in place (keyed by strategy and PR sequence) and keep queries already written.

    Example:

    \b
      prchain chains build
      prchain chains build --strategy temporal --max-len 3
      prchain chains build --set chains.filters.max_patch_lines=800
      prchain chains build --decontaminate data/swe-bench-lite.jsonl
    """
    from prchain.app.pipeline import chains_from_config

    config = build_config(config_path, overrides, db_url)
    with reporting("reading the reference graph") as report:
        summary = chains_from_config(
            config,
            strategy=strategy,
            min_len=min_len,
            max_len=max_len,
            decontaminate=decontaminate,
            progress=report,
        )
    SafeConsole().print(*summary_tables(summary))


def summary_lengths(summary: BuildSummary) -> Table:
    """Chains per length, 2 to --max-len, and why those short of it are no longer."""
    from prchain.app.views import length_rows, lengths_table

    title = f"chains build ({summary.strategy})"
    if summary.max_len <= 1:
        table = Table("length", "chains", title=title)
        table.add_row("1", str(summary.total))
        return table
    found = {str(k): v for k, v in summary.by_length.items()}
    stops = {str(k): {str(r): n for r, n in v.items()} for k, v in summary.stops.items()}
    rows = length_rows(found, stops, 2, summary.max_len)
    return lengths_table([list(row) for row in rows], title)


def summary_tables(summary: BuildSummary) -> list[Table]:
    lengths = summary_lengths(summary)
    graph = Table("graph", "count", title="reference graph")
    report = summary.graph
    rows = [
        ("PRs kept as nodes", report.nodes),
        ("edges", report.edges),
        ("  of them rescued by the link vetter", report.rescued),
        ("PR-to-PR references read", report.references),
        ("  of them links found in code (no text)", report.code_references),
        ("evidence read from the store", report.evidence_kept),
        ("evidence asked of git and the lexers", report.evidence_new),
        ("candidate chains", summary.candidates),
        ("new chains", summary.new),
        ("stages written", summary.stages),
        ("stages selected per 1,000 PRs read", f"{summary.per_thousand} ({summary.prs} PRs)"),
        ("  of them entered by the fallback (propagate)", summary.entered_by["propagate"]),
        ("  of them entered by the fallback (hunks)", summary.entered_by["hunks"]),
        ("  of them entered by the fallback (replay)", summary.entered_by["replay"]),
        ("stale chains removed", summary.pruned),
        ("chains in use kept unchanged", summary.kept_in_use),
        ("chains in use kept, marked superseded", summary.superseded),
    ]
    if report.commit_graphs_failed:
        rows.append(("clones blamed without a commit-graph", report.commit_graphs_failed))
    for name, value in rows:
        graph.add_row(name, str(value))
    from prchain.app.views import rules_table

    return [lengths, graph, rules_table([asdict(rule) for rule in summary.rules()])]


@chains.command("list")
@config_options
@click.option(
    "--limit", type=click.IntRange(min=1), default=20, show_default=True, help="How many chains."
)
@click.option("--strategy", help="Only chains of this strategy.")
def list_(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    limit: int,
    strategy: str | None,
) -> None:
    """List chains, longest and strongest first.

    Example:

    \b
      prchain chains list --limit 50 --strategy semantic
    """
    from prchain.app.views import list_chains

    config = build_config(config_path, overrides, db_url)
    table = Table(
        "id", "repo", "strategy", "len", "score", "PRs (oldest first)", "edge types", title="chains"
    )
    for chain, repo, numbers in list_chains(
        command_store(config, readonly=True).engine, limit=limit, strategy=strategy
    ):
        types = " ".join("/".join(e.get("types", [])) for e in chain.edges or [])
        table.add_row(
            str(chain.id),
            repo,
            chain.strategy,
            str(chain.length),
            f"{chain.score:.2f}",
            " ← ".join(f"#{n}" for n in numbers),
            types,
        )
    SafeConsole().print(table)


@chains.command("show")
@config_options
@click.argument("chain_id", type=int)
def show(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, chain_id: int
) -> None:
    """Show one chain: its stages, the references linking them (with evidence), its queries.

    Example:

    \b
      prchain chains show 12
    """
    from prchain.app.views import chain_view

    config = build_config(config_path, overrides, db_url)
    print_chain(SafeConsole(), chain_view(command_store(config, readonly=True).engine, chain_id))


WIDE = 110  # from this console width on, `chains show` also prints each stage's base and end


def print_chain(console: Console, view: ChainView) -> None:
    """The chain in an 80-column terminal: one line per stage, edge and piece of evidence.

    Titles and evidence are cut with an ellipsis rather than wrapped word by word."""
    console.print(
        f"[bold]chain {view.id}[/] {escape(view.repo)} strategy={view.strategy} "
        f"length={view.length} score={view.score:.2f}"
    )
    if view.overview:
        console.print(f"[bold]overview:[/] {escape(view.overview)}")
    wide = console.width >= WIDE
    rows = [
        (
            str(s.idx),
            f"#{s.pr_number}",
            escape(s.title),
            s.merged_at[:10],
            *((s.base_sha[:10], s.end_sha[:10]) if wide else ()),
            str(s.code_lines),
            str(s.test_lines),
        )
        for s in view.stages
    ]
    names = ["t", "PR", "title", "merged", *(("base", "end") if wide else ()), "code ±", "test ±"]
    stages = Table(title="stages (oldest first)", box=box.SIMPLE_HEAD, pad_edge=False)
    widths = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(names)]
    # Every other column keeps its full width; only the title gives way (3 = padding + rule).
    room = console.width - sum(w for n, w in zip(names, widths, strict=True) if n != "title")
    for i, name in enumerate(names):
        width = max(room - 3 * len(names), 12) if name == "title" else widths[i]
        stages.add_column(
            name,
            no_wrap=True,
            overflow="ellipsis",
            max_width=width,
            min_width=None if name == "title" else width,
            justify="right" if name.endswith("±") else "left",
        )
    for row in rows:
        stages.add_row(*row)
    edges = Table(title="edges", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("newer → older", "class", "strength", "overlap", "gap (days)"):
        edges.add_column(name, no_wrap=True, overflow="ellipsis")
    for e in view.edges:
        edges.add_row(
            f"#{e.get('src_number')} → #{e.get('dst_number')}",
            str(e.get("evidence_class") or ", ".join(e.get("types", []))),
            str(e.get("strength")),
            f"{e.get('overlap', 0):.2f}",
            "" if e.get("gap_days") is None else f"{e['gap_days']:.0f}",
        )
    console.print(stages, edges)
    for e in view.edges:
        if e.get("why"):  # why the build kept this link; the quoted evidence has its own line
            why = Text(f"  #{e.get('src_number')} → #{e.get('dst_number')} kept: ", style="bold")
            why.append(re.sub(r": '.*'\)", ")", str(e["why"]), count=1), style="")
            console.print(why)
        for x in e.get("evidence", []):
            # Evidence is PR text ("[ty] Fix …"): plain Text, so rich does not read it as markup.
            line = Text(f"  #{e.get('src_number')} → #{e.get('dst_number')} ")
            line.append(f"[{x['type']} in {x['found_in']}] ", style="dim")
            line.append(" ".join(str(x["text"]).split()))
            console.print(line, no_wrap=True, overflow="ellipsis")
    for s in view.stages:
        console.print(
            f"[bold]query {s.idx} (#{s.pr_number}):[/] {escape(s.query) if s.query else '[dim](none yet)[/]'}"
        )


@chains.command("links")
@config_options
@click.option("--dropped", is_flag=True, help="Only the links the rules dropped.")
@click.option(
    "--rule",
    type=click.Choice(RULE_NAMES),
    metavar="RULE",
    help="Only links dropped by this rule (e.g. gap_too_long; the rules: docs/chains.md).",
)
@click.option(
    "--kind",
    type=click.Choice(DROP_KINDS),
    help="Only drops of this kind: link (a link rule judged the pair not dependent) or stage "
    "(an end is no usable stage: filtered, not mined, under the substance minimum).",
)
@click.option(
    "--rescued",
    is_flag=True,
    help="Only the links a rule dropped and the link vetter judged dependent (`chains vet`).",
)
@click.option("--chain", "chain_id", type=int, metavar="N", help="Only the links of chain N.")
@click.option(
    "--limit", type=click.IntRange(min=1), default=50, show_default=True, help="How many links."
)
def links(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    dropped: bool,
    kind: str | None,
    rule: str | None,
    rescued: bool,
    chain_id: int | None,
    limit: int,
) -> None:
    """List the candidate links of the latest build, kept or dropped, with the rule that decided.

    Example:

    \b
      prchain chains links --dropped --rule gap_too_long
      prchain chains links --dropped --kind link
      prchain chains links --rescued
      prchain chains links --chain 12
    """
    from prchain.app.views import chain_pairs, chain_view, list_links

    config = build_config(config_path, overrides, db_url)
    engine = command_store(config).engine
    pairs = None
    if chain_id is not None:
        chain_view(engine, chain_id)  # an unknown id is one clear line
        pairs = chain_pairs(engine, chain_id)
    drop = cast("DropKind | None", kind)
    found = list_links(
        engine, dropped=dropped, rule=rule, pairs=pairs, limit=limit, kind=drop, rescued=rescued
    )
    table = Table(
        "newer → older",
        "decision",
        "class",
        "overlap",
        "gap",
        "lineage",
        "symbols",
        "why",
        title="links",
    )
    for view in found[:limit]:
        link = view.link
        table.add_row(
            f"#{view.newer_number} → #{view.older_number}",
            _decision(link),
            link.evidence_class or "",
            "" if link.overlap is None else f"{link.overlap:.2f}",
            "" if link.gap_days is None else f"{link.gap_days:.0f} d",
            f"{link.lineage} ({link.lineage_via})" if link.lineage else "",
            _measured(link.symbols),
            Text(link.why),
        )
    SafeConsole().print(table)
    if not found:
        echo("no stored links match (run `prchain chains build` first)")


def _decision(link: ChainLink) -> str:
    """'kept', 'kept: rescued from RULE' (the link vetter overruled a rule) or 'dropped: RULE'."""
    if not link.kept:
        return f"dropped: {link.rule}"
    return f"kept: rescued from {link.rescued_from}" if link.rescued_from else "kept"


def _measured(count: int | None) -> str:
    """A feature that is read only where it may change a decision: "-" where it was not."""
    return "-" if count is None else str(count)


@chains.command("sample")
@config_options
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draw.")
@click.option("-n", "count", type=click.IntRange(min=1), default=30, show_default=True)
@click.option("--strategy", help="Only chains of this strategy.")
@click.option(
    "--dropped",
    is_flag=True,
    help="Draw dropped links instead of chains (with --rule: of one rule).",
)
@click.option(
    "--rule",
    type=click.Choice(RULE_NAMES),
    metavar="RULE",
    help="With --dropped: only links dropped by this rule.",
)
@click.option(
    "--kind",
    type=click.Choice(DROP_KINDS),
    help="With --dropped: only drops of this kind: link (a link rule judged the pair not dependent) or stage "
    "(an end is no usable stage: filtered, not mined, under the substance minimum).",
)
@click.option(
    "--body-chars",
    type=click.IntRange(min=0),
    default=800,
    show_default=True,
    help="How much of each PR body to print.",
)
def sample(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    seed: int,
    count: int,
    strategy: str | None,
    dropped: bool,
    rule: str | None,
    kind: str | None,
    body_chars: int,
) -> None:
    """Print a reproducible sample for a hand check: each link with both PRs' titles and bodies,
    the decision and the lines the newer PR rewrites of the older.

    Example:

    \b
      prchain chains sample --seed 7 -n 30
      prchain chains sample --seed 7 -n 20 --dropped
      prchain chains sample --seed 7 -n 20 --dropped --kind link
    """
    from prchain.app.views import (
        drop_shares,
        sample_chains,
        sample_dropped,
        shares_line,
    )

    config = build_config(config_path, overrides, db_url)
    engine = command_store(config).engine
    if dropped:
        drop = cast("DropKind | None", kind)
        echo(shares_line(drop_shares(engine, rule), drop))
        for i, link in enumerate(sample_dropped(engine, count, seed, rule, drop), start=1):
            echo(f"=== dropped link {i}")
            _echo_link(link, body_chars)
        return
    for i, chain in enumerate(sample_chains(engine, count, seed, strategy), start=1):
        numbers = " ← ".join(f"#{s.number}" for s in chain.stages)
        label = f" [{chain.label}]" if chain.label else ""
        echo(f"=== chain {i}: id {chain.id}{label}: {numbers}")
        for link in chain.links:
            _echo_link(link, body_chars)


def _echo_link(link: SampledLink, body_chars: int) -> None:
    """One link as plain text: the decision, both PRs, the rewritten lines."""
    stored = link.link
    head = f"--- #{link.newer.number} → #{link.older.number}"
    if stored is not None:
        head += f"  {_decision(stored)}  {stored.evidence_class}  lineage {stored.lineage}"
        head += f"  symbols {_measured(stored.symbols)}"
    echo(head)
    if stored is not None:
        echo(f"    why: {stored.why}")
        for x in stored.evidence or []:
            text = " ".join(str(x.get("text", "")).split())
            echo(f"    evidence [{x.get('class')}, {x.get('type')} in {x.get('found_in')}]: {text}")
    for tag, pr in (("newer", link.newer), ("older", link.older)):
        echo(f"    {tag} #{pr.number}: {pr.title}")
        body = " ".join(pr.body.split())
        if body and body_chars:
            echo(f"      {body[:body_chars]}{'…' if len(body) > body_chars else ''}")
    for line in link.rewritten:
        echo(f"    rewrites: {line}")


@chains.command("score")
@config_options
@click.argument("label_files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--moved", is_flag=True, help="List the labelled pairs decided otherwise than then.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as one JSON object.")
def score(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    label_files: tuple[str, ...],
    moved: bool,
    as_json: bool,
) -> None:
    """Read hand-check labels against the latest build: how the pairs judged by hand (CSV files
    with repository, older, newer, verdict) are decided today, and the precision of the kept
    ones.

    Example:

    \b
      prchain chains score docs/handcheck/round-2*.csv
      prchain chains score labels.csv --moved
    """
    from prchain.app.views import read_labels
    from prchain.app.views import score as score_labels

    labels = read_labels(label_files)
    config = build_config(config_path, overrides, db_url)
    result = score_labels(command_store(config).engine, labels)
    if as_json:
        counts = {f"{v}/{d}": n for (v, d), n in sorted(result.counts().items())}
        echo(json.dumps({"labels": len(labels), "scored": len(result.scored), **counts}))
        return
    _print_score(result, len(labels))
    if moved:
        _print_moved(result)


def _print_score(result: Score, labels: int) -> None:
    console = SafeConsole()
    console.print(
        f"{len(result.scored)} of {labels} labels are of repositories this store holds",
        highlight=False,
    )
    if not result.scored:
        return
    columns = ("kept", "dropped: link rule", "dropped: stage", "no candidate")  # DECISIONS
    table = Table("verdict", *columns, title="labelled pairs by today's decision")
    for verdict, counts in result.table():
        table.add_row(verdict, *map(str, counts))
    console.print(table)
    strict, kept = result.share("kept", ["dependent"])
    lenient, _ = result.share("kept", ["dependent", "borderline"])
    real, dropped = result.share("link", ["dependent"])
    if kept:
        console.print(
            f"kept: {kept}, dependent {strict} ({strict / kept:.1%}), "
            f"with borderline {lenient} ({lenient / kept:.1%})",
            highlight=False,
        )
    if dropped:
        console.print(
            f"dropped by a link rule: {dropped}, dependent {real} ({real / dropped:.1%})",
            highlight=False,
        )


def _print_moved(result: Score) -> None:
    table = Table("repository", "newer → older", "verdict", "then", "now", title="moved")
    for s in result.moved():
        label = s.label
        now = "kept" if s.decided == "kept" else f"dropped: {s.rule}"
        then = "kept" if label.was == "kept" else f"dropped: {label.was}"
        table.add_row(
            label.repository, f"#{label.newer} → #{label.older}", label.verdict, then, now
        )
    SafeConsole().print(table)


@main.group()
def tasks() -> None:
    """Chains as tasks for agents and single-PR tools (SWE-bench field names per stage).

    Example:

    \b
      prchain tasks export data/tasks.jsonl
    """


@tasks.command("export")
@config_options
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--strategy", help="Only chains of this strategy.")
@click.option(
    "--runnable",
    is_flag=True,
    help="Give each stage its image, commands and log parser, and write the runnable stages "
    "one per row beside OUT (OUT-stem.stages.jsonl); needs the Docker engine.",
)
@click.option(
    "--include-unverified",
    is_flag=True,
    help="With --runnable: stages whose era environment did not verify are runnable too.",
)
def export(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    out: str,
    strategy: str | None,
    runnable: bool,
    include_unverified: bool,
) -> None:
    """Write one JSON line per chain with its stages; loads with datasets.load_dataset("json", ...).

    With --runnable each stage also carries its environment (docs/export-formats.md, "Runnable
    rows"), and the stages that can run elsewhere are written again in a flat SWE-rebench-V2
    shape; the others are counted by why not.

    Example:

    \b
      prchain tasks export data/tasks.jsonl
      prchain tasks export data/temporal.jsonl --strategy temporal
      prchain tasks export data/tasks.jsonl --runnable
    """
    config = build_config(config_path, overrides, db_url)
    if runnable:
        print_runnable(config, out, strategy, include_unverified)
        return
    from prchain.app.views import export_tasks

    count = export_tasks(command_store(config, readonly=True).engine, out, strategy=strategy)
    echo(f"wrote {count} chains to {out}")


def print_runnable(config: Config, out: str, strategy: str | None, unverified: bool) -> None:
    """`tasks export --runnable`: write both forms and say what is not runnable and why."""
    from prchain.app.tasks import export_runnable_from_config, flat_path

    found = export_runnable_from_config(config, out, strategy=strategy, unverified=unverified)
    click.echo(
        f"wrote {plural(found.chains, 'chain')} ({plural(found.stages, 'stage')}) to {out}; "
        f"{plural(found.runnable - found.apart, 'runnable stage')} to {flat_path(out)} "
        f"in {plural(len(found.images), 'image')}"
    )
    if found.apart:  # a row of that shape names one image, and their hidden tests need another
        click.echo(
            f"  runnable, left out of the flat form: {found.apart} (their hidden tests run in a "
            "room image with what their gold patch adds)"
        )
    for kind, count in found.not_runnable.most_common():
        click.echo(f"  not runnable, {kind}: {count}")
