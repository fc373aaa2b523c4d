"""`prchain tasks images save|load` and `prchain tasks eval`: tasks that run on another machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from prchain.app.choices import TASK_FORMATS, written_noun
from prchain.cli.chains import tasks
from prchain.cli.exits import finish
from prchain.cli.options import build_config, config_options
from prchain.cli.progress import progress_bar
from prchain.cli.safe import SafeConsole
from prchain.core.text import plural

if TYPE_CHECKING:
    from prchain.verdicts.golden import StageResult

REASON_CHARS = 90


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


@tasks.group()
def images() -> None:
    """The images a task file's stages run in, as one archive to carry to another machine.

    Example:

    \b
      prchain tasks images save data/tasks.jsonl data/images.tar.gz
      prchain tasks images load data/images.tar.gz --tasks data/tasks.jsonl
      prchain tasks images push data/tasks.jsonl localhost:5000/tasks
    """


@images.command("save")
@click.argument("tasks_file", metavar="TASKS", type=click.Path(exists=True, dir_okay=False))
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--all-stages", is_flag=True, help="Also the images of stages that are not runnable.")
@click.option("--dry-run", is_flag=True, help="Only say what the archive would weigh.")
def save(tasks_file: str, out: str, all_stages: bool, dry_run: bool) -> None:
    """Write the images TASKS needs (from `tasks export --runnable`) to one `docker save` archive.

    A layer several images share is written once; the size with and without that is shown before
    anything is written. OUT ending in .gz is gzip-compressed (`docker load` reads both).

    Example:

    \b
      prchain tasks images save data/tasks.jsonl data/images.tar
      prchain tasks images save data/tasks.jsonl data/images.tar.gz --dry-run
    """
    from prchain.app.tasks import save_task_images, task_image_sizes

    found = task_image_sizes(tasks_file, every=all_stages)
    click.echo(
        f"{plural(len(found.images), 'image')}: {_mb(found.separate)} as separate archives, "
        f"{_mb(found.deduplicated)} with each shared layer once (before compression)"
    )
    if found.missing:
        click.echo(f"not in the engine (or not the image TASKS names): {', '.join(found.missing)}")
    if dry_run:
        return
    size = save_task_images(found, out)
    click.echo(f"wrote {out}: {_mb(size)}")


@images.command("load")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--tasks",
    "tasks_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The task file the archive was saved for: only the images it names, with the digests "
    "it states, are loaded.",
)
def load(archive: str, tasks_file: str) -> None:
    """Load into this machine's Docker engine the images TASKS names from an archive `tasks
    images save` wrote.

    Each image is checked against the name and content digest TASKS states before anything
    reaches the engine: an archive with any other image or name is refused, and an image the
    engine already has under one of those names is never replaced. Then it checks that every
    image TASKS's runnable stages need is there.

    Example:

    \b
      prchain tasks images load data/images.tar.gz --tasks data/tasks.jsonl
    """
    from prchain.app.tasks import load_task_images

    loaded = load_task_images(archive, tasks_file)
    named = f": {', '.join(loaded.names)}" if loaded.names else ""
    click.echo(f"loaded {plural(len(loaded.names), 'image')}{named}")
    if loaded.kept:
        click.echo(f"already in the engine, kept: {', '.join(loaded.kept)}")
    finish(
        len(loaded.missing),
        f"still missing or different: {', '.join(loaded.missing)}" if loaded.missing else "",
    )


@images.command("push")
@click.argument("tasks_file", metavar="TASKS", type=click.Path(exists=True, dir_okay=False))
@click.argument("registry")
@click.option("--all-stages", is_flag=True, help="Also the images of stages that are not runnable.")
def push(tasks_file: str, registry: str, all_stages: bool) -> None:
    """Push the images TASKS needs to REGISTRY (host[:port][/path]) as REGISTRY/<image name>.

    The registry stores a layer the images share once; `tasks images pull` on another machine
    names them back. Log in first (`docker login`) if the registry asks for it.

    Example:

    \b
      prchain tasks images push data/tasks.jsonl registry.example.org:5000/prchain-tasks
    """
    from prchain.app.tasks import push_task_images

    pushed = push_task_images(tasks_file, registry, every=all_stages)
    for name, digest in pushed.items():
        click.echo(f"pushed {registry}/{name} {digest}")


@images.command("pull")
@click.argument("tasks_file", metavar="TASKS", type=click.Path(exists=True, dir_okay=False))
@click.argument("registry")
def pull(tasks_file: str, registry: str) -> None:
    """Pull the images TASKS's runnable stages need from REGISTRY and give them their own names.

    Example:

    \b
      prchain tasks images pull data/tasks.jsonl registry.example.org:5000/prchain-tasks
    """
    from prchain.app.tasks import pull_task_images

    pulled = pull_task_images(tasks_file, registry)
    click.echo(f"pulled {plural(len(pulled.names) - len(pulled.missing), 'image')}")
    finish(
        len(pulled.missing),
        f"missing or different: {', '.join(pulled.missing)}" if pulled.missing else "",
    )


@tasks.command("eval")
@config_options
@click.argument("tasks_file", metavar="TASKS", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--predictions",
    type=click.Path(exists=True, dir_okay=False),
    help="SWE-bench predictions (instance_id, model_patch, model_name_or_path) to run instead of "
    "the gold patches.",
)
@click.option(
    "--results",
    type=click.Path(dir_okay=False),
    help="Results file (JSON Lines; default TASKS-stem.gold.eval.jsonl or .<predictions>.eval"
    ".jsonl beside TASKS); chains already in it are not run again.",
)
@click.option(
    "--chain", "chains", type=int, multiple=True, metavar="ID", help="Only this chain (repeatable)."
)
def eval_command(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    tasks_file: str,
    predictions: str | None,
    results: str | None,
    chains: tuple[int, ...],
) -> None:
    """Run each runnable stage's gold patch (or a model's) in its image, under the clean room's rules.

    Per chain the stages are entered in order as in a rollout: a stage's patch is applied on top of
    the patches carried from the earlier stages, then its hidden tests run. A stage is resolved
    when every FAIL_TO_PASS test passes and every PASS_TO_PASS test still does. Exits 1 when a
    gold patch does not resolve its stage, or a stage could not be run.

    Example:

    \b
      prchain tasks eval data/tasks.jsonl
      prchain tasks eval data/tasks.jsonl --predictions preds.jsonl --chain 3
    """
    from prchain.app.tasks import by_chain, eval_from_config

    config = build_config(config_path, overrides, db_url)
    console = SafeConsole(stderr=True)
    with progress_bar(console) as progress:
        task = progress.add_task("stages", total=None)
        found = eval_from_config(
            config,
            tasks_file,
            predictions=predictions,
            results=results,
            chain_ids=chains,
            on_start=lambda n: progress.update(task, total=n),
            on_stage=lambda r: progress.update(
                task, advance=1, description=f"chain {r.chain_id} stage {r.idx}: {r.status}"
            ),
        )
    SafeConsole().print(_table(found))
    verdicts = by_chain(found)
    resolved = sum(r.status == "resolved" for r in found)
    judged = sum(r.status in ("resolved", "unresolved", "error") for r in found)
    click.echo(
        f"{resolved} of {plural(judged, 'stage')} resolved; "
        f"{sum(v.passed for v in verdicts)} of {plural(len(verdicts), 'chain')} resolved throughout"
    )
    errors = sum(r.status == "error" for r in found)
    failed = errors + (0 if predictions else judged - resolved - errors)
    finish(failed, f"{plural(failed, 'stage')} did not resolve or could not run (see above)")


def _table(results: list[StageResult]) -> Table:
    table = Table(title="Evaluation")
    for column in ("chain", "stage", "instance", "model", "status", "F2P", "P2P", "s", "reason"):
        table.add_column(column)
    for r in results:
        reason = r.reason if len(r.reason) <= REASON_CHARS else r.reason[: REASON_CHARS - 1] + "…"
        table.add_row(
            str(r.chain_id),
            str(r.idx),
            r.instance_id,
            r.model,
            r.status + (" (stored)" if r.reused else ""),
            "{}/{}".format(*r.fail_to_pass),
            "{}/{}".format(*r.pass_to_pass),
            f"{r.seconds:g}",
            escape(reason),
        )
    return table


@tasks.command("convert")
@config_options
@click.argument("tasks_file", metavar="TASKS", type=click.Path(exists=True, dir_okay=False))
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--to",
    "to",
    type=click.Choice(TASK_FORMATS),
    default="harbor",
    show_default=True,
    help="The harness's task format.",
)
def convert(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    tasks_file: str,
    out: str,
    to: str,
) -> None:
    """Write the runnable stages of TASKS (from `tasks export --runnable`) as another harness's tasks.

    `harbor`: one Harbor task directory per stage under OUT (instruction.md, task.toml,
    environment/Dockerfile on the stage image, solution/solve.sh with the gold patch, tests/ with
    the clean room's verdict); run them with `harbor run -p OUT/<task> -a oracle`. Stages Harbor
    cannot judge are counted by why.

    `swe-rebench-v2`: OUT/tasks.json, one SWE-rebench V2 row per stage (the list SWE-rebench's
    scripts/eval.py --json reads), and each row's instance image built from the stage image
    (its Dockerfile in OUT/dockerfiles/).

    Example:

    \b
      prchain tasks convert data/tasks.jsonl data/harbor --to harbor
      prchain tasks convert data/tasks.jsonl data/rebench --to swe-rebench-v2
    """
    from prchain.app.tasks import convert_tasks

    config = build_config(config_path, overrides, db_url)
    found = convert_tasks(config, tasks_file, out, to)
    click.echo(f"wrote {plural(len(found.written), *written_noun(to))} under {out}")
    for reason, count in found.skipped.most_common():
        click.echo(f"  not written: {plural(count, 'stage')}: {reason}")
