"""An agent's edit to a compiled source changes a test's outcome in its sandbox (issue 51,
acceptance 3): on a stage that `prchain env setup` and `prchain tests verify` have done, in the
sandbox a rollout opens (`prchain.app.rollout.environment_factory`: the stage's era image, its
`prchain-build` setup at entry), a scripted agent

1. adds the stage's hidden tests (the gold test patch) and runs its FAIL_TO_PASS tests: they fail;
2. edits the C/C++/Cython files as the gold patch does, hunk by hunk, the way an editing tool
   replaces text (read the file, replace the hunk's old lines by its new ones, write it back);
3. runs `prchain-build` again (incremental) and the same tests: they pass.

With `--clean-room` the agent's diff then goes into the clean room of the hidden tests, which
builds the agent's sources itself (a full build) and runs the tests there.

Every command, its exit code, wall time and output tail is printed (and written to `--out` as
Markdown). The repository's code never leaves the sandbox and the store.

    python bench/bench_compiled_edit.py --config /work/data-numpy/prchain.yaml \\
        --db sqlite:////work/data-numpy/store.db --chain 1172 --out numpy-acceptance.md
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select  # noqa: E402
from unidiff import PatchSet  # noqa: E402

from prchain.agent.tasks import ChainTask, StageTask  # noqa: E402
from prchain.app.config import load_config  # noqa: E402
from prchain.app.envsetup import on_image  # noqa: E402
from prchain.app.rollout import environment_factory  # noqa: E402
from prchain.app.verdicts import environment_config  # noqa: E402
from prchain.environments.eras.python.compiled import BUILD_STEP  # noqa: E402
from prchain.environments.protocol import StageSpec  # noqa: E402
from prchain.store.db import session_scope  # noqa: E402
from prchain.store.models import Chain as ChainRow  # noqa: E402
from prchain.store.models import ChainStage, PullRequest, Repo, StageVerification  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from prchain.verdicts.sandbox import apply_patch  # noqa: E402

COMPILED = (".c", ".c.src", ".cpp", ".cc", ".cxx", ".h", ".h.src", ".hpp", ".pyx", ".pxd")


def edits(gold_patch: str) -> dict[str, list[tuple[str, str]]]:
    """Per compiled source the gold patch changes: its hunks as (old text, new text) pairs."""
    found: dict[str, list[tuple[str, str]]] = {}
    for patched in PatchSet(gold_patch):
        if not patched.path.endswith(COMPILED) or patched.is_added_file:
            continue
        found[patched.path] = [
            (
                "".join(line.value for line in hunk if not line.is_added),
                "".join(line.value for line in hunk if not line.is_removed),
            )
            for hunk in patched
        ]
    return found


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, text: str) -> None:
        print(text, flush=True)
        self.lines.append(text)

    def command(self, what: str, command: str, exit_code: int, seconds: float, out: str) -> None:
        tail = "\n".join(out.rstrip().splitlines()[-25:])
        self.say(
            f"\n**{what}** ({seconds:.0f} s, exit {exit_code})\n\n```\n$ {command}\n{tail}\n```"
        )


def stage_of(url: str, chain: int) -> tuple[ChainTask, str, list[str]]:
    """The chain's first stage as a rollout sees it, its gold test patch, its FAIL_TO_PASS."""
    with session_scope(make_engine(url)) as session:
        stage, number, repo, clone = session.execute(
            select(ChainStage, PullRequest.number, Repo.full_name, Repo.clone_path)
            .join(ChainRow, ChainRow.id == ChainStage.chain_id)
            .join(Repo, Repo.id == ChainRow.repo_id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(ChainStage.chain_id == chain, ChainStage.idx == 1)
        ).one()
        verdict = session.scalars(
            select(StageVerification)
            .where(StageVerification.chain_stage_id == stage.id)
            .order_by(StageVerification.id.desc())
        ).first()
        f2p = list(verdict.fail_to_pass) if verdict else []
        task = ChainTask(
            chain,
            repo,
            clone or "",
            "",
            [StageTask(1, number, stage.base_sha or "", stage.gold_patch, "", stage.id)],
        )
        return task, stage.gold_test_patch, f2p


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="the prchain.yaml env setup used")
    parser.add_argument("--db", required=True, help="the store's URL")
    parser.add_argument("--chain", type=int, required=True, help="a chain whose stage 1 is taken")
    parser.add_argument("--test", action="append", default=[], help="test ids (default: F2P)")
    parser.add_argument("--image", help="an era image to use instead of the stage's recipe")
    parser.add_argument("--clean-room", action="store_true", help="also run the hidden tests' room")
    parser.add_argument("--out", type=Path, help="write the observations here (Markdown)")
    args = parser.parse_args()
    config = load_config(args.config)
    task, test_patch, f2p = stage_of(args.db, args.chain)
    tests = args.test or f2p
    if not tests:
        sys.exit(f"chain {args.chain}: no FAIL_TO_PASS stored; run `prchain tests verify` first")
    changes = edits(task.stages[0].gold_patch)
    if not changes:
        sys.exit(f"chain {args.chain}: its gold patch changes no compiled source")
    log = Log()
    log.say(
        f"# {task.repo}#{task.stages[0].pr_number}: an agent's edit to "
        f"{', '.join(changes)} in its sandbox\n\nchain {args.chain}, base "
        f"{task.stages[0].base_sha[:12]}; tests: {', '.join(tests)}"
    )
    run_tests = "python -m pytest -p no:cacheprovider -q " + " ".join(map(shlex.quote, tests))
    timeout = config.environment.test_timeout
    if args.image:  # the sandbox API on an era image itself (its recipe not verified yet)
        from prchain.environments.factory import open_environment

        stage = task.stages[0]
        spec = StageSpec(1, stage.base_sha, stage.gold_patch, setup_command=BUILD_STEP)
        opened: Any = open_environment(
            on_image(environment_config(config), args.image),
            repo=task.repo,
            clone_path=task.clone_path,
            stages=[spec],
            labels={"prchain.bench": "compiled-edit"},
        )
    else:  # as a rollout opens it: the stage's verified era image and setup command
        opened = environment_factory(environment_config(config), args.db)(task, 0)
    with opened as env:
        started = time.monotonic()
        entered = env.enter_stage(1)
        log.say(
            f"\n**stage entered** ({time.monotonic() - started:.0f} s; the setup command "
            f"`{BUILD_STEP}` ran as the agent: "
            f"{'failed: ' + entered.setup_error if entered.setup_error else 'ok'})"
        )
        error = apply_patch(env, test_patch, reset=False)
        log.say(f"\nthe hidden tests (gold test patch) added: {error or 'applied'}")
        for what, command in (
            ("FAIL_TO_PASS before the edit", run_tests),
            ("the agent's edit", ""),
            ("rebuilt", BUILD_STEP),
            ("FAIL_TO_PASS after the edit", run_tests),
        ):
            if not command:
                for path, hunks in changes.items():
                    text = env.read_file(path)
                    for old, new in hunks:
                        if text.count(old) != 1:
                            sys.exit(f"{path}: a hunk's old text is not there exactly once")
                        text = text.replace(old, new)
                    env.write_file(path, text)
                    log.say(f"\n**the agent's edit**: {path}, {len(hunks)} hunk(s) replaced")
                diff = env.execute("git diff --stat")
                log.say(f"\n```\n$ git diff --stat\n{diff.output.rstrip()}\n```")
                continue
            began = time.monotonic()
            done = env.execute(command, timeout=timeout)
            log.command(what, command, done.exit_code, time.monotonic() - began, done.output)
        if args.clean_room:
            patch = env.cumulative_patch()
            with env.clean_room() as room:
                began = time.monotonic()
                applied = room.apply(patch) or "ok"
                log.say(
                    f"\nclean room: the agent's diff applied and the room's own `{BUILD_STEP}` "
                    f"run ({time.monotonic() - began:.0f} s): {applied}"
                )
                command = f"{BUILD_STEP} >/tmp/build.log 2>&1; tail -3 /tmp/build.log; {run_tests}"
                began = time.monotonic()
                done = room.execute(command, timeout=timeout)
                log.command(
                    "hidden tests in the clean room",
                    command,
                    done.exit_code,
                    time.monotonic() - began,
                    done.output,
                )
    if args.out:
        args.out.write_text("\n".join(log.lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
