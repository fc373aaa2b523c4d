"""Every export format prchain writes, in one table (docs/add-an-export-format.md).

An entry names the format, what it exports, the tag its rows or files carry, and where its code is:
its converter (the function that writes or converts to it), its checker (which validates a row as a
reader loads it back, by the format's own published schema or loader where one exists) and the
function that writes its section of the dataset card. The CLI's `--format` and `--to` choices and
their help are read off this table.

Light on purpose: the CLI reads it at start-up, so code is named here as `module:function` and
imported only when a format runs (`load`). Each entry's code sits at or below the layer of the
command that runs its kind: trajectories are converted by the agent layer's export
(`prchain.agent.formats.dataset`), harness tasks by `convert` here, task and runnable rows by the
app layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from prchain.verdicts.taskfile import ConvertSummary

Kind = Literal["tasks", "runnable", "trajectories", "harness"]
"""tasks: `prchain tasks export` (one row per chain); runnable: `tasks export --runnable` (each stage
with its environment, and a flat row per runnable stage); trajectories: `prchain export --format`;
harness: `prchain tasks convert --to` (another harness's tasks, from a runnable task file)."""


@dataclass(frozen=True)
class Format:
    name: str
    kind: Kind
    version: str  # the tag its rows or files carry
    convert: str  # module:function that writes or converts to it
    summary: str  # how `--help` names it
    check: str = ""  # module:function raising on a row that breaks the format ("": none)
    card: str = ""  # module:function giving its dataset-card lines ("": the card's common body)
    written: tuple[str, str] = ("row", "rows")  # what the CLI counts: singular, plural


FORMATS: tuple[Format, ...] = (
    Format("task", "tasks", "prchain.task/1", "prchain.chains.views.tasks:export_tasks",
           "one JSON line per chain"),
    Format("stage", "runnable", "prchain.stage/1", "prchain.verdicts.runnable:export_runnable",
           "the chain form with an environment per stage, and a flat row per runnable stage"),
    Format("openai", "trajectories", "prchain.trajectory/2", "prchain.agent.formats.openai:to_openai",
           "openai (messages + tools)", check="prchain.agent.formats.openai:check_openai"),
    Format("sharegpt", "trajectories", "prchain.trajectory/2",
           "prchain.agent.formats.sharegpt:to_sharegpt", "sharegpt (LLaMA-Factory)",
           check="prchain.agent.formats.sharegpt:check_sharegpt",
           card="prchain.agent.formats.sharegpt:card_section"),
    Format("atif", "trajectories", "ATIF-v1.6", "prchain.agent.formats.atif:to_atif",
           "atif (Harbor's trajectories)", check="prchain.agent.formats.atif:check_atif"),
    Format("harbor", "harness", "prchain.harbor/1", "prchain.verdicts.harbor:write",
           "Harbor task directories", written=("task directory", "task directories")),
    Format("swe-rebench-v2", "harness", "prchain.swe-rebench-v2/1",
           "prchain.export.swe_rebench:write", "SWE-rebench V2 rows and their instance images",
           check="prchain.export.swe_rebench:check_row"),
)  # fmt: skip


def names(kind: Kind) -> tuple[str, ...]:
    """The names of one kind's formats, in table order (the CLI's choices)."""
    return tuple(f.name for f in FORMATS if f.kind == kind)


def get(name: str) -> Format:
    found = next((f for f in FORMATS if f.name == name), None)
    if found is None:
        raise KeyError(f"no export format {name!r}; known: {', '.join(f.name for f in FORMATS)}")
    return found


def choice_help(kind: Kind) -> str:
    """The formats of one kind as `--help` lists them: "a, b or c."."""
    shown = [f.summary for f in FORMATS if f.kind == kind]
    return (", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else shown[0]) + "."


def load(ref: str) -> Callable[..., Any]:
    """The function `module:function` names, imported now."""
    module, _, function = ref.partition(":")
    found: Callable[..., Any] = getattr(import_module(module), function)
    return found


def converter(name: str) -> Callable[..., Any]:
    return load(get(name).convert)


def checker(name: str) -> Callable[[dict[str, Any]], None]:
    """The format's row check (a no-op for a format that has none)."""
    ref = get(name).check
    return load(ref) if ref else (lambda row: None)


def card_section(name: str, data_file: str) -> list[str]:
    """The lines a format adds to the body of its dataset card."""
    ref = get(name).card
    found: list[str] = load(ref)(data_file) if ref else []
    return found


def convert(
    to: str, chains: Iterable[dict[str, Any]], out: str | Path, *, timeout: float, cap: int
) -> ConvertSummary:
    """`prchain tasks convert`: write `chains` (a runnable task file's) in harness format `to`
    under `out`; `timeout` is the test timeout, `cap` environment.max_report_bytes."""
    if get(to).kind != "harness":
        raise KeyError(f"{to!r} is not a harness task format; known: {', '.join(names('harness'))}")
    found: ConvertSummary = converter(to)(list(chains), out, timeout=timeout, cap=cap)
    return found
