"""`prchain tests verify`: FAIL_TO_PASS / PASS_TO_PASS per chain stage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from prchain.cli import CONTEXT_SETTINGS, main
from prchain.cli.exits import finish
from prchain.cli.options import backend_options, build_config, config_options, registry_option
from prchain.cli.progress import progress_bar
from prchain.cli.safe import SafeConsole
from prchain.core.text import plural

if TYPE_CHECKING:
    from prchain.verdicts.verify import StageReport

REASON_CHARS = 90


@main.group(context_settings=CONTEXT_SETTINGS)
def tests() -> None:
    """Run each stage's tests in its repository's image: which tests the gold patch fixes.

    Example:

    \b
      prchain tests verify
      prchain tests verify --chain 3 --gold-runs 5
    """


@tests.command()
@config_options
@click.option(
    "--chain", "chains", type=int, multiple=True, metavar="ID", help="Only this chain (repeatable)."
)
@click.option("--gold-runs", type=int, help="Repeat the gold run N times (verdicts.gold_runs).")
@click.option("--redo", is_flag=True, help="Verify again stages whose result is stored.")
@click.option(
    "--workers",
    type=int,
    help="Stages verified in parallel, each in its own sandbox (verdicts.workers).",
)
@backend_options
@registry_option
def verify(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    chains: tuple[int, ...],
    gold_runs: int | None,
    redo: bool,
    workers: int | None,
    backend: str | None,
    ray_address: str | None,
    registry: str | None,
) -> None:
    """Find FAIL_TO_PASS and PASS_TO_PASS tests of every chain stage (SWE-bench's meaning).

    Per stage, in a fresh sandbox on its base: the repo's test command (verdicts.repos.<repo>.test)
    runs without the gold patch, with the gold test patch, then with the gold code patch as well,
    the last run repeated; tests whose outcome varies are dropped as flaky. A stage whose gold patch
    fails its own tests, or fixes none, is stored as unusable with the reason. Reruns skip stages
    already verified with the same recipe. Stages run in parallel on the configured backend
    (--workers; --backend ray: one Ray task per stage). A node whose engine lacks a stage's era
    image pulls it from --registry (scale.registry) instead of building it.

    Example:

    \b
      prchain tests verify --set 'verdicts.repos.acme/calc.test=python3 -m pytest {files}'
      prchain tests verify --config prchain.yaml --chain 3
      prchain tests verify --workers 4 --backend ray --ray-address auto
      prchain tests verify --backend ray --ray-address auto --registry registry.lan:5000/prchain
    """
    config = build_config(
        config_path,
        overrides,
        db_url,
        **{
            "verdicts.gold_runs": gold_runs,
            "verdicts.workers": workers,
            "scale.backend": backend,
            "scale.ray_address": ray_address,
            "scale.registry": registry,
        },
    )
    from prchain.app.verdicts import verify_from_config

    console = SafeConsole(stderr=True)
    with progress_bar(console) as progress:
        task = progress.add_task("stages", total=None)
        reports = verify_from_config(
            config,
            chain_ids=chains,
            redo=redo,
            on_start=lambda n: progress.update(task, total=n),
            on_done=lambda r: progress.update(
                task, advance=1, description=f"chain {r.job.chain_id} stage {r.job.idx}: {r.result}"
            ),
        )
    SafeConsole().print(_table(reports))
    SafeConsole().print(_totals(reports))
    # A sandbox that failed, or a repository without a test command, needs the user; an
    # unusable stage is a finding about the data, not a failure.
    failed = sum(r.result in ("error", "unconfigured", "era-unverified") for r in reports)
    finish(failed, f"{plural(failed, 'stage')} could not be verified (see the reasons above)")


def _table(reports: list[StageReport]) -> Table:
    table = Table(title="Test verdicts")
    for column in ("chain", "stage", "PR", "result", "F2P", "P2P", "flaky", "seconds", "reason"):
        table.add_column(column)
    for r in reports:
        reason = r.reason or ""
        table.add_row(
            str(r.job.chain_id),
            str(r.job.idx),
            f"#{r.job.pr_number}",
            r.result,
            str(r.fail_to_pass),
            str(r.pass_to_pass),
            str(r.flaky),
            f"{r.seconds:.1f}",
            escape(reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"),
        )
    return table


def _totals(reports: list[StageReport]) -> str:
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.result] = counts.get(r.result, 0) + 1
    usable = [r for r in reports if r.usable]  # a skipped or reused stage by its stored status
    by_result = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
    f2p = sum(r.fail_to_pass for r in usable)
    return f"{len(reports)} stages: {by_result}; {f2p} FAIL_TO_PASS tests in {len(usable)} usable stages"


@tests.command()
@config_options
@click.argument("stage", metavar="CHAIN:IDX")
def show(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, stage: str
) -> None:
    """Show one stage's verification: era image and commands, counts per run, per-test outcomes
    and the root error (the first exception of the gold run, however long its output).

    Example:

    \b
      prchain tests show 12:1
    """
    chain, sep, idx = stage.partition(":")
    if not sep or not chain.isdigit() or not idx.isdigit():
        raise click.BadParameter(f"{stage!r} is not CHAIN:IDX (e.g. 12:1)", param_hint="STAGE")
    config = build_config(config_path, overrides, db_url)
    from prchain.app.verdicts import show_stage

    _print_stage(SafeConsole(), show_stage(config, int(chain), int(idx)))


def _print_stage(out: Console, shown: dict[str, Any]) -> None:
    out.print(
        f"chain {shown['chain']} stage {shown['idx']}: PR #{shown['pr']} on {shown['base'][:12]}"
    )
    era = shown.get("era")
    if era:
        out.print(f"era image: {era['image'] or '-'} ({era['status']})")
        out.print(f"setup: {escape(era['setup_command'] or '-')}")
    if "status" not in shown and era and era["status"] != "verified":
        out.print(
            "not verified: its era did not verify in `prchain env setup`, and `tests verify` uses "
            f"no unverified era's image. The era's root error: {escape(era['root_error'] or '-')}"
        )
        return
    if "status" not in shown:
        out.print("not verified yet: `prchain tests verify --chain N`")
        return
    out.print(f"test command: {escape(shown['test_command'])}")
    out.print(
        f"result: {shown['status']}" + (f" — {escape(shown['reason'])}" if shown["reason"] else "")
    )
    runs = shown["runs"]
    for name, c in runs.get("counts", {}).items():
        out.print(
            f"  {name:6} {c['passed']} passed, {c['failed']} failed, {c['errors']} errors, "
            f"{c['skipped']} skipped, {c['collection_errors']} collection errors"
        )
    if runs.get("root_error"):
        out.print(f"root error: {escape(runs['root_error'])}")
    out.print(_outcomes(shown))
    if runs.get("why"):
        out.print("why, for the tests the run with the test patch alone did not report:")
        for test, why in sorted(runs["why"].items()):
            out.print(f"  {escape(test)}: {escape(why)}", soft_wrap=True)


def _outcomes(shown: dict[str, Any]) -> Table:
    runs = shown["runs"]
    gold = runs.get("gold") or [{}]
    table = Table("test", "start", "tests", "gold", "list", title="per-test outcomes")
    lists = {t: "F2P" for t in shown["fail_to_pass"]} | {t: "P2P" for t in shown["pass_to_pass"]}
    lists |= {t: "flaky" for t in shown["flaky"]}
    for test in sorted(set(runs.get("start", {})) | set(runs.get("tests", {})) | set(gold[-1])):
        table.add_row(
            escape(test),
            runs.get("start", {}).get(test, "-"),
            runs.get("tests", {}).get(test, "-"),
            gold[-1].get(test, "-"),
            lists.get(test, ""),
        )
    return table
