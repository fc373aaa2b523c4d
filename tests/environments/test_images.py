"""Images: content-addressed, built once per recipe, with logs; install commands baked in."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from prchain.cli import main
from prchain.environments.config import EnvironmentConfig
from prchain.environments.images import ensure_base_image, ensure_repo_image, repo_recipe

pytestmark = pytest.mark.docker


def test_base_image_is_reused(docker_client, base_image) -> None:
    assert ensure_base_image(docker_client, EnvironmentConfig()) == base_image
    result = CliRunner().invoke(main, ["env", "base"])
    assert result.exit_code == 0 and "is ready" in result.output


def test_unchanged_recipe_is_not_rebuilt(docker_client, calc_image, calc_chain) -> None:
    again = ensure_repo_image(docker_client, EnvironmentConfig(), "acme/calc", calc_chain.path)
    assert not again.built and again.tag == calc_image.tag and again.image_id == calc_image.image_id


def test_a_new_commit_changes_the_recipe(tmp_path, base_image, calc_chain) -> None:
    from prchain.dev.repos import git, make_chain_repo

    clone = make_chain_repo(tmp_path / "calc")
    before = repo_recipe(base_image, clone.path, [])
    (clone.path / "x.txt").write_text("x\n")
    git(clone.path, "add", "-A")
    git(clone.path, "commit", "-qm", "x")
    assert repo_recipe(base_image, clone.path, []) != before
    assert repo_recipe(base_image, clone.path, ["true"]) != repo_recipe(base_image, clone.path, [])


def test_install_commands_are_baked_in_and_logged(
    docker_client, base_image, calc_chain, tmp_path
) -> None:
    from prchain.environments.docker_env import DockerEnvironment

    # A name of this run's own: the tag is shared by recipe, and an image another run left under
    # it (a run stopped before its cleanup) would be taken as built.
    repo = f"acme/calc-install-{uuid.uuid4().hex[:8]}"
    config = EnvironmentConfig(
        install_commands={
            repo: ["echo installed > /home/agent/marker", "python3 -c 'print(40 + 2)'"]
        },
        log_dir=str(tmp_path / "logs"),
    )
    image = ensure_repo_image(docker_client, config, repo, calc_chain.path)
    assert image.built and image.log_path and "42" in Path(image.log_path).read_text()
    with DockerEnvironment(
        config, repo=repo, clone_path=str(calc_chain.path), stages=calc_chain.stages
    ) as env:
        assert env.execute("cat /home/agent/marker").output == "installed\n"
    newer = EnvironmentConfig(install_commands={repo: ["true"]}, log_dir=str(tmp_path / "logs"))
    second = ensure_repo_image(docker_client, newer, repo, calc_chain.path)
    assert second.tag != image.tag
    for built in (image, second):  # only what this test built: the tags are shared by recipe
        if built.built:
            docker_client.remove_image(built.tag)


def test_env_build_and_ls_commands(calc_chain, calc_image, sqlite_url) -> None:
    result = CliRunner().invoke(
        main, ["env", "build", "acme/calc", "--clone", str(calc_chain.path), "--db", sqlite_url]
    )
    assert result.exit_code == 0 and "up to date" in result.output
    missing = CliRunner().invoke(main, ["env", "build", "acme/unknown", "--db", sqlite_url])
    assert missing.exit_code == 1 and "not in the store" in missing.output
    listing = CliRunner().invoke(main, ["env", "ls"])
    assert listing.exit_code == 0 and "acme/calc" in listing.output


def test_env_build_finds_the_clone_in_the_store(calc_chain, calc_image, sqlite_url) -> None:
    from prchain.store.db import session_scope
    from prchain.store.models import Repo
    from prchain.store.opener import make_engine

    engine = make_engine(sqlite_url)
    with session_scope(engine) as session:
        session.add(Repo(full_name="acme/calc", source="git", clone_path=str(calc_chain.path)))
        session.add(Repo(full_name="acme/noclone", source="github", clone_path=None))
    engine.dispose()
    result = CliRunner().invoke(main, ["env", "build", "acme/calc", "--db", sqlite_url])
    assert (
        result.exit_code == 0 and calc_image.tag in result.output and "up to date" in result.output
    )
    result = CliRunner().invoke(main, ["env", "build", "acme/noclone", "--db", sqlite_url])
    assert result.exit_code == 1 and "no local clone" in result.output


def test_an_explicit_base_image_and_commands_replace_the_configured_ones(
    docker_client, calc_image, calc_chain
) -> None:
    from prchain.core.errors import EnvironmentFailure

    config = EnvironmentConfig()
    same = ensure_repo_image(
        docker_client,
        config,
        "acme/calc",
        calc_chain.path,
        base_image=config.base_image,
        commands=[],
    )
    assert not same.built and same.tag == calc_image.tag  # the defaults, spelt out
    with pytest.raises(EnvironmentFailure, match="prchain/no-such-era"):
        ensure_repo_image(
            docker_client, config, "acme/calc", calc_chain.path, base_image="prchain/no-such-era:x"
        )
