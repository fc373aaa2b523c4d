"""What the era acceptance tests share: the CLI run in-process, a test config, the recipes and
verdicts per PR, and removing only the images (and cache volume) a test's made-up repository got."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result
from sqlalchemy import select

from prchain.cli import main
from prchain.environments.eras.build import cache_volume
from prchain.environments.eras.config import ErasConfig
from prchain.environments.protocol import StageSpec
from prchain.store.db import session_scope
from prchain.store.models import (
    Chain,
    ChainStage,
    EnvRecipe,
    PullRequest,
    RolloutStage,
    StageEra,
    StageVerification,
)
from prchain.store.opener import make_engine


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def offline_eras(index_url: str, **more: Any) -> dict[str, Any]:
    """An `eras` section that builds on the suite base CI already has (bookworm, Python 3.11,
    pytest from Debian's python3-pytest) and takes packages from the local index at `index_url`
    only (the build reaches it on 127.0.0.1); `more` adds or replaces settings."""
    return {
        "index_url": index_url,
        "network_mode": "host",
        "suites": {"bookworm": "3.11"},
        "extra_base_packages": [],
        "test_packages": [],
        "seed_packages": [],
        "system_site_packages": True,
        **more,
    }


def write_config(tmp_path: Path, eras: dict[str, Any], **chains: Any) -> Path:
    """prchain.yaml with this `eras` section, logs under `tmp_path`, and chains of any size."""
    config = tmp_path / "prchain.yaml"
    settings = {
        "eras": eras,
        "environment": {"log_dir": str(tmp_path / "logs")},
        "chains": {"min_chain_code_lines": 0, **chains},
    }
    config.write_text(yaml.safe_dump(settings))
    return config


def recipes_by_pr(url: str) -> dict[int, EnvRecipe]:
    """The era recipe of each stage, by its PR's number."""
    with session_scope(make_engine(url)) as session:
        rows = session.execute(
            select(PullRequest.number, EnvRecipe)
            .join(ChainStage, ChainStage.pr_id == PullRequest.id)
            .join(StageEra, StageEra.chain_stage_id == ChainStage.id)
            .join(EnvRecipe, EnvRecipe.era_key == StageEra.era_key)
        ).all()
        session.expunge_all()
    return dict(rows)  # type: ignore[arg-type]


def verdicts_by_pr(url: str) -> dict[int, StageVerification]:
    """What `tests verify` stored for each stage, by its PR's number."""
    with session_scope(make_engine(url)) as session:
        rows = session.execute(
            select(PullRequest.number, StageVerification)
            .join(ChainStage, ChainStage.id == StageVerification.chain_stage_id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
        ).all()
        session.expunge_all()
    return dict(rows)  # type: ignore[arg-type]


def stage_specs(url: str, recipes: dict[int, EnvRecipe]) -> list[StageSpec]:
    """Every stage of the store at `url`, in PR order, on its era's image, test and setup command."""
    with session_scope(make_engine(url)) as session:
        rows = session.execute(
            select(PullRequest.number, ChainStage.base_sha, ChainStage.gold_patch)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .order_by(PullRequest.number)
        ).all()
    return [
        StageSpec(
            i,
            base or "",
            gold,
            image=recipes[n].image,
            test_command=recipes[n].test_command,
            setup_command=recipes[n].setup_command,
        )
        for i, (n, base, gold) in enumerate(rows, start=1)
    ]


def chain_sandbox(url: str, log_dir: Path, repo: str, clone: Path) -> Any:
    """The sandbox (not yet entered) of the store's one chain, each stage on its era's image, with
    the queries `queries build` (an LLM) would have written."""
    from prchain.agent.tasks import load_chain
    from prchain.app.envsetup import era_stages
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    engine = make_engine(url)
    with session_scope(engine) as session:
        chain_id = session.scalar(select(Chain.id))
        for stage in session.scalars(select(ChainStage)):
            stage.query = f"Stage {stage.idx} of {repo}."
    config, specs = era_stages(
        EnvironmentConfig(log_dir=str(log_dir)), engine, load_chain(engine, chain_id)
    )
    return DockerEnvironment(config, repo=repo, clone_path=str(clone), stages=specs)


def remove_repo_images(
    client: Any, repo: str, kinds: tuple[str, ...] = ("repo", "era"), volume: bool = True
) -> None:
    """The images labelled with `repo` of these kinds (an untagged one too: a test that
    recommitted its image under the same tag), and its builds' cache volume unless `volume` is
    False (every era build makes one; left behind, each run of the suite leaves one a module);
    never a toolchain or base layer, which other repositories share. `repo` must be the test's
    own, made per run."""
    for kind in kinds:
        for image in client.images({"prchain.repo": repo, "prchain.kind": kind}):
            for ref in image["tags"] or [image["id"]]:
                client.remove_image(ref)
    if volume:
        client.remove_volume(cache_volume(ErasConfig(), repo))


# ---- gold before attack: a room's gold patches resolve where the attacks are judged ------------

GOLD_END = "PRCHAIN_TEST_GOLD_PATCH_END"  # the heredoc's end: a line no patch holds


def mined_to_verified(work: Path, config: Path, repo: str, clone: Path) -> tuple[list[str], str]:
    """`mine` (from the clone), `chains build`, `env setup` and `tests verify` into a store under
    `work`, each asserted to succeed; the common arguments of the CLI and the store's URL."""
    url = f"sqlite:///{work / 'store.db'}"
    common = ["--config", str(config), "--db", url, "--set", "env_setup.enabled=false"]
    for args in (
        ("mine", "--source", "git", "--name", repo, str(clone)),
        ("chains", "build"),
        ("env", "setup"),
        ("tests", "verify"),
    ):
        ran = invoke(*args, *common)
        assert ran.exit_code == 0, f"prchain {' '.join(args)}:\n{ran.output}"
    return common, url


def gold_resolves_in_tasks_eval(common: list[str], work: Path) -> str:
    """`tasks export --runnable` of the store's chain, then `tasks eval` of its gold patches, each
    stage on the one before's carried patch, in the clean room; its summary line."""
    tasks = work / "tasks.jsonl"
    exported = invoke("tasks", "export", str(tasks), "--runnable", *common)
    assert exported.exit_code == 0, exported.output
    results = work / "tasks.gold.eval.jsonl"
    evaluated = invoke("tasks", "eval", str(tasks), "--results", str(results), *common)
    assert evaluated.exit_code == 0, evaluated.output
    return evaluated.output


def gold_rollout(
    common: list[str], url: str, llm: Any, fake_llm: Any
) -> list[tuple[int, bool | None, Any]]:
    """A rollout whose scripted agent applies each stage's gold code patch (`git apply`, as the
    agent) and submits, judged 1.0 and kept on judge and tests both: each stage's index, T(p̂)
    from the rollout's clean room, and the failing tests it names."""
    config = Path(common[common.index("--config") + 1])
    settings = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**settings, "llm": llm.model_dump(mode="json")}))
    with session_scope(make_engine(url)) as session:
        stages = list(session.scalars(select(ChainStage).order_by(ChainStage.idx)))
        for stage in stages:  # what `queries build` (an LLM) would write
            stage.query = f"Stage {stage.idx}: add what the tests ask for."
        golds = [stage.gold_patch for stage in stages]
    for gold in golds:
        command = f"git apply <<'{GOLD_END}'\n{gold.rstrip(chr(10))}\n{GOLD_END}\n"
        fake_llm.push(model="policy", tool_calls=[_call("bash", command=command)])
        fake_llm.push(model="policy", tool_calls=[_call("submit", summary="done")])
    judged = json.dumps({"score": 1.0, "comment": "It does what the task asks."})
    fake_llm.push(model="judge", content=judged, times=None)
    ran = invoke("rollout", "--keep-on", "both", "--keep", "prefix", *common)
    assert ran.exit_code == 0, ran.output
    with session_scope(make_engine(url)) as session:
        rows = session.scalars(select(RolloutStage).order_by(RolloutStage.stage_idx)).all()
        return [(r.stage_idx, r.tests_passed, (r.test_result or {}).get("failing")) for r in rows]


def _call(name: str, **arguments: str) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}
