"""Image lifecycle: `env prune` removes only this store's images that no recipe in use needs;
failed builds say what failed; the suite's guard over foreign Docker objects can fail."""

from __future__ import annotations

import io
import tarfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prchain.app.sandbox import store_images
from prchain.cli import main
from prchain.core.errors import BuildFailed, EnvironmentFailure
from prchain.environments import admin
from prchain.environments.buildlog import HINTS, diagnose
from prchain.environments.config import EnvironmentConfig
from prchain.environments.images import ensure_repo_image
from tests.support import foreign_docker

# ---- build-failure hints (pure) ---------------------------------------------------------------

PIP_RESOLUTION = """\
Step 9/12 : RUN pip install 'flask<1' 'werkzeug>=3'
 ---> Running in 4c1d
ERROR: Cannot install flask<1 and werkzeug>=3 because these package versions have conflicting dependencies.
ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
The command '/bin/bash -c pip install' returned a non-zero code: 1
"""
UV_RESOLUTION = """\
  × No solution found when resolving dependencies:
  ╰─▶ Because only attrs<=17.4.0 is available and you require attrs>=18, we can conclude that
      your requirements are unsatisfiable.
"""
PIP_PYTHON = """\
ERROR: Package 'markupsafe' requires a different Python: 3.13.1 not in '<3.10,>=3.7'
The command '/bin/bash -c pip install -e .' returned a non-zero code: 1
"""
OFFLINE = """\
WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(': Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/flask/
ERROR: Could not find a version that satisfies the requirement flask (from versions: none)
ERROR: No matching distribution found for flask
"""
GCC = """\
  building 'yaml._yaml' extension
  ext/_yaml.c:4:10: fatal error: yaml.h: No such file or directory
  error: command '/usr/bin/gcc' failed with exit code 1
  ERROR: Failed building wheel for pyyaml
"""
PLAIN = """\
Step 7/9 : RUN make install
 ---> Running in 77aa
make: *** No rule to make target 'install'.  Stop.
Error: something in the makefile went wrong
The command '/bin/bash -c make install' returned a non-zero code: 2
"""


@pytest.mark.parametrize(
    ("log", "kind", "root"),
    [
        (PIP_RESOLUTION, "resolution", "conflicting dependencies"),
        (UV_RESOLUTION, "resolution", "No solution found"),
        (PIP_PYTHON, "interpreter", "requires a different Python"),
        (OFFLINE, "network", "Temporary failure in name resolution"),
        (GCC, "compile", "fatal error: yaml.h"),
        (PLAIN, "command", "Error: something in the makefile went wrong"),
    ],
)
def test_a_failed_build_is_classified_from_its_log(log: str, kind: str, root: str) -> None:
    found = diagnose(log)
    assert found.kind == kind and root in found.root
    assert found.hint == HINTS[found.kind]
    assert "Docker engine running" not in found.hint


def test_an_empty_log_still_gives_one_line() -> None:
    found = diagnose("")
    assert found.kind == "command" and found.root


# ---- real builds and images ------------------------------------------------------------------


@pytest.mark.docker
def test_a_build_that_cannot_resolve_says_so_and_keeps_its_log(
    docker_client, base_image, calc_chain, tmp_path
) -> None:
    """The command prints what pip prints for an unsatisfiable set; the error is not the engine's."""
    repo = f"acme/unresolvable-{uuid.uuid4().hex[:8]}"
    lines = " ".join(repr(line) for line in PIP_RESOLUTION.splitlines()[2:4])
    command = f"printf '%s\\n' {lines} >&2; exit 1"
    config = EnvironmentConfig(install_commands={repo: [command]}, log_dir=str(tmp_path))
    with pytest.raises(BuildFailed) as caught:
        ensure_repo_image(docker_client, config, repo, calc_chain.path, notify=lambda _m: None)
    error = caught.value
    assert error.kind == "resolution" and "conflicting dependencies" in str(error)
    assert "\x1b" not in str(error) and not str(error).split("): ")[1].startswith("Step")
    assert error.hint == HINTS["resolution"] != EnvironmentFailure.hint
    logs = list(Path(tmp_path).glob("*.log"))
    assert len(logs) == 1 and "ResolutionImpossible" in logs[0].read_text()
    assert str(logs[0]) in str(error)


def _tar(text: str, pad: int = 0) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = text.encode() + bytes(pad)
        info = tarfile.TarInfo("content.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return io.BytesIO(buffer.getvalue())


class Made:
    """Images and containers this test makes, all removed at the end (and nothing else)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.images: list[str] = []
        self.containers: list[str] = []

    def image(self, tag: str, labels: dict[str, str], pad: int = 0) -> str:
        image = self.client.import_tar(iter([_tar(tag, pad).getvalue()]), tag, labels)
        self.images.append(tag)
        return str(image)

    def child(self, tag: str, parent: str, labels: dict[str, str], ctx: Path) -> str:
        ctx.mkdir()
        (ctx / "Dockerfile").write_text(f"FROM {parent}\nLABEL child=1\n")
        image, _log = self.client.build(str(ctx), tag, labels)
        self.images.append(tag)
        return image

    def container(self, image: str) -> str:
        created = self.client.api.create_container(image, ["/nonexistent"])
        self.containers.append(str(created["Id"]))
        return str(created["Id"])

    def close(self) -> None:
        for cid in self.containers:
            self.client.remove_container(cid)
        for tag in reversed(self.images):
            self.client.remove_image(tag)


@pytest.mark.docker
def test_prune_removes_only_what_no_recipe_of_this_store_needs(
    docker_client, base_image, tmp_path, foreign_docker_objects
) -> None:
    from prchain.dev.repos import make_chain_repo
    from prchain.store.db import session_scope
    from prchain.store.models import EnvRecipe, Repo
    from prchain.store.opener import make_engine

    slug = uuid.uuid4().hex[:8]
    repo = f"acme/prune-{slug}"  # only this test's images carry this repository's label
    clone = make_chain_repo(tmp_path / "clone").path
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = make_engine(url)
    with session_scope(engine) as session:
        row = Repo(full_name=repo, source="git", clone_path=str(clone))
        session.add(row)
        session.flush()
        for era, status in (("py311", "verified"), ("py39", "unverified")):
            session.add(
                EnvRecipe(
                    repo_id=row.id,
                    era_key=era,
                    ecosystem="python",
                    era_date="2024-01-01",
                    base_sha="0" * 40,
                    status=status,
                    method="planner",
                    image=f"prchain/era-prune-{slug}:{era}",
                )
            )
    engine.dispose()
    config = EnvironmentConfig()
    ours = {"prchain.managed": "1", "prchain.repo": repo}
    current = admin.default_image(docker_client, config, repo, clone)
    assert current is not None
    made = Made(docker_client)
    try:
        made.image(current, {**ours, "prchain.kind": "repo"})
        # 3 MB of its own: what removing it frees, by the accounting of `tasks images save`
        made.image(
            f"prchain/repo-prune-{slug}:superseded", {**ours, "prchain.kind": "repo"}, 3_000_000
        )
        era = made.image(f"prchain/era-prune-{slug}:py39", {**ours, "prchain.kind": "era"})
        # A verified recipe's era image, and the sandbox layer a stage of it opens: both in use.
        verified = made.image(f"prchain/era-prune-{slug}:py311", {**ours, "prchain.kind": "era"})
        layer = admin.sandbox_image(docker_client, repo, clone, verified)
        assert layer is not None
        made.child(layer, verified, {**ours, "prchain.kind": "repo"}, tmp_path / "layer")
        sandbox = made.child(
            f"prchain/repo-prune-{slug}:on-era",
            era,
            {**ours, "prchain.kind": "repo"},
            tmp_path / "c",
        )
        busy = made.image(f"prchain/repo-prune-{slug}:busy", {**ours, "prchain.kind": "repo"})
        made.container(busy)
        unlabelled = made.image(f"prchain-test-foreign/prune-{slug}:x", {})

        dry = CliRunner().invoke(main, ["env", "prune", "--dry-run", "--db", url])
        assert dry.exit_code == 0, dry.output
        assert f"would remove prchain/repo-prune-{slug}:superseded (3 MB of its own)" in dry.output
        assert "image(s) would remove (3 MB of their own layers)" in dry.output  # the rest: 0 MB
        assert f"prchain/era-prune-{slug}:py311" not in dry.output and layer not in dry.output
        assert current not in dry.output  # the repository's current image is in use
        assert docker_client.image_id(f"prchain/repo-prune-{slug}:superseded")  # dry run

        plan = admin.prune(config, store_images(url), needed=[f"prchain/repo-prune-{slug}:on-era"])
        assert plan.removed == [f"prchain/repo-prune-{slug}:superseded"]
        assert plan.busy == [f"prchain/repo-prune-{slug}:busy"]
        assert sorted(c.name for c in plan.needed) == sorted(
            [
                current,
                f"prchain/era-prune-{slug}:py39",  # under the sandbox image `needed` names
                f"prchain/repo-prune-{slug}:on-era",
                f"prchain/era-prune-{slug}:py311",  # a verified recipe's (py39's is unverified)
                layer,
            ]
        )
        assert plan.other_repos >= 2  # at least the session's "someone/elses" images
        made.images.remove(f"prchain/repo-prune-{slug}:superseded")
        for tag in made.images:
            assert docker_client.image_id(tag), tag
        assert docker_client.image_id(sandbox) and docker_client.image_id(unlabelled)
        assert foreign_docker_objects is None or not foreign_docker.missing(
            docker_client, foreign_docker_objects
        )
    finally:
        made.close()


@pytest.mark.docker
def test_prune_removes_this_stores_cache_volumes_over_the_limit(
    docker_client, base_image, tmp_path
) -> None:
    """A repository's cache volume grows with every era built (gin's Go cache held 1.3 GB after
    eight eras) and nothing trimmed it. `env prune` removes the store's volumes over
    `eras.cache_limit_gb`; a volume under it, one a running build mounts, and another store's
    repository's volume stay."""
    from prchain.environments.eras.build import cache_volume
    from prchain.environments.eras.config import ErasConfig
    from prchain.store.db import session_scope
    from prchain.store.models import Repo
    from prchain.store.opener import make_engine

    slug = uuid.uuid4().hex[:8]
    prefix = f"test-prune-cache-{slug}"  # no volume the product or another test names
    eras = ErasConfig(cache_volume=prefix)
    big, small, busy, foreign = (f"acme/{n}-{slug}" for n in ("big", "small", "busy", "other"))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = make_engine(url)
    with session_scope(engine) as session:
        session.add_all(Repo(full_name=r, source="git") for r in (big, small, busy))
    engine.dispose()
    config = tmp_path / "prchain.yaml"
    config.write_text(f"eras:\n  cache_volume: {prefix}\n  cache_limit_gb: 0.001\n")
    sizes = {big: 3_000_000, small: 10_000, busy: 3_000_000, foreign: 3_000_000}
    volumes = {repo: cache_volume(eras, repo) for repo in sizes}
    holder = ""
    try:
        for repo, size in sizes.items():
            _id, code, log = docker_client.run_to_end(
                base_image,
                ["bash", "-c", f"head -c {size} /dev/urandom > /cache/blob"],
                name=f"test-prune-fill-{slug}-{repo.split('/')[1]}",
                labels={"prchain.test_run": slug},
                environment={},
                binds={volumes[repo]: ("/cache", "rw")},
                network_mode="none",
                timeout=120,
            )
            docker_client.remove_container(_id)
            assert code == 0, log
        holder = docker_client.api.create_container(
            base_image,
            ["/nonexistent"],
            host_config=docker_client.api.create_host_config(binds=[f"{volumes[busy]}:/cache"]),
        )["Id"]

        wide = {"COLUMNS": "400"}  # one line per volume
        dry = CliRunner().invoke(
            main, ["env", "prune", "--dry-run", "--db", url, "--config", str(config)], env=wide
        )
        assert dry.exit_code == 0, dry.output
        assert f"would remove cache volume {volumes[big]} (3 MB; the limit is 1 MB)" in dry.output
        assert volumes[small] not in dry.output and volumes[foreign] not in dry.output
        assert set(docker_client.volume_sizes()) >= set(volumes.values())  # a dry run

        done = CliRunner().invoke(
            main, ["env", "prune", "--db", url, "--config", str(config)], env=wide
        )
        assert done.exit_code == 0, done.output
        assert f"removed cache volume {volumes[big]}" in done.output
        assert f"kept cache volume {volumes[busy]}" in done.output
        left = set(docker_client.volume_sizes())
        assert volumes[big] not in left
        assert {volumes[small], volumes[busy], volumes[foreign]} <= left
    finally:
        if holder:
            docker_client.remove_container(holder)
        for name in volumes.values():
            docker_client.remove_volume(name)


@pytest.mark.docker
def test_the_foreign_object_guard_notices_a_removal(docker_client) -> None:
    """The session guard is only worth something if it can fail: remove one of a private set."""
    made = foreign_docker.create(docker_client, f"guard-{uuid.uuid4().hex[:8]}")
    try:
        assert foreign_docker.missing(docker_client, made) == []
        orphan = next(name for name in made.containers if "orphan" in name)
        docker_client.remove_container(made.containers[orphan])
        old = next(tag for tag in made.images if tag.endswith("-old"))
        docker_client.remove_image(old)
        assert sorted(foreign_docker.missing(docker_client, made)) == sorted([old, orphan])
    finally:
        foreign_docker.remove(docker_client, made)


@pytest.mark.docker
def test_env_ls_reads_its_config_and_marks_what_prune_would_do_for_that_store(
    docker_client, base_image, tmp_path
) -> None:
    """`env ls --config FILE` as its siblings take it (issue 50): the config's store decides the
    `store` column, the same decision `env prune` makes."""
    from prchain.store.db import session_scope
    from prchain.store.models import EnvRecipe, Repo
    from prchain.store.opener import make_engine

    slug = uuid.uuid4().hex[:8]
    repo = f"acme/ls-{slug}"  # only this test's images carry this repository's label
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = make_engine(url)
    with session_scope(engine) as session:
        row = Repo(full_name=repo, source="git", clone_path=str(tmp_path / "no-clone"))
        session.add(row)
        session.flush()
        session.add(
            EnvRecipe(
                repo_id=row.id,
                era_key="py311",
                ecosystem="python",
                era_date="2024-01-01",
                base_sha="0" * 40,
                status="verified",
                method="planner",
                image=f"prchain/era-ls-{slug}:py311",
            )
        )
    engine.dispose()
    config = tmp_path / "prchain.yaml"
    config.write_text(f"store:\n  url: {url}\n")
    ours = {"prchain.managed": "1", "prchain.repo": repo}
    made = Made(docker_client)
    try:
        made.image(f"prchain/era-ls-{slug}:py311", {**ours, "prchain.kind": "era"})
        made.image(f"prchain/era-ls-{slug}:py39", {**ours, "prchain.kind": "era"})
        listed = CliRunner().invoke(
            main, ["env", "ls", "--config", str(config)], env={"COLUMNS": "400"}
        )
        assert listed.exit_code == 0, listed.output
        cells = [[c.strip() for c in line.split("│")[1:5]] for line in listed.output.splitlines()]
        rows = {c[0]: c[1:] for c in cells if c and f"era-ls-{slug}" in c[0]}
        assert rows == {
            f"prchain/era-ls-{slug}:py311": ["era", repo, "needed"],  # a verified recipe's
            f"prchain/era-ls-{slug}:py39": ["era", repo, "unneeded"],  # what prune removes
        }
        # Another store, one that does not exist: nothing is said of them, and nothing is made.
        none = tmp_path / "none.db"
        elsewhere = CliRunner().invoke(
            main, ["env", "ls", "--db", f"sqlite:///{none}"], env={"COLUMNS": "400"}
        )
        assert elsewhere.exit_code == 0, elsewhere.output
        cells = [
            [c.strip() for c in line.split("│")[1:5]] for line in elsewhere.output.splitlines()
        ]
        assert [c[3] for c in cells if c and f"era-ls-{slug}" in c[0]] == ["", ""]
        assert not none.exists()
    finally:
        made.close()
