"""The grader's layer: what a stage's hidden side needs installed, on its era image, for the rooms
that run hidden tests only.

`hidden_requirements` says what the stage's build part (its gold patch's manifests) adds to what
its era installs (python/hidden_needs.py; other ecosystems: none yet). `ensure_hidden_layer`
installs them on the era image in a build container (the era's registries, its download cache, the
era's packages held at their versions by constraints, dated at B_t as the era is) and commits the
result under the era's own name with a `hidden-` tag. `tests verify`, the clean room of a rollout's
T(p̂) check and `tasks eval` run the stage's hidden tests on it; the agent's sandbox never does, so
nothing the gold patch added is in reach of the agent.
"""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import replace
from pathlib import Path

from prchain.core import git
from prchain.core.errors import EnvironmentFailure
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import MANAGED_LABEL, DockerClient
from prchain.environments.eras.build import _run_and_commit, _slug
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.manifests import MANIFEST, REQUIREMENTS_FILE, Snapshot, snapshot
from prchain.environments.eras.python.hidden_needs import added_requirements
from prchain.environments.eras.wheels import resolver_failure
from prchain.environments.images import recipe_hash
from prchain.environments.stage_entry import patch_paths

VERSION = "1"  # bump when the layer's commands change what it holds
HELD = "/tmp/prchain-held.txt"
WANTED = "/tmp/prchain-wanted.txt"
# The requirements (arguments) whose package the interpreter running it does not hold, one a line.
_ABSENT = """
import importlib.metadata as m, re, sys
held = {re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() for d in m.distributions()}
for r in sys.argv[1:]:
    name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r).group(0)).lower()
    if name not in held:
        print(r)
"""


class Unresolvable(EnvironmentFailure):
    """The hidden side's requirements have no solution beside the era's packages (a property of
    the stage and the index, not of this run: `tests verify` stores the stage unusable)."""


def hidden_requirements(
    clone: str | Path, base_sha: str, hidden_side: str, ecosystem: str, interpreter: str
) -> list[str]:
    """What stage base `base_sha` with `hidden_side` applied (the gold patch's build part and its
    test patch) asks to install that the base does not ([] for an ecosystem whose needs are not
    read, or a hidden side that touches no manifest)."""
    if ecosystem != "python" or not interpreter or not manifests_of(hidden_side):
        return []
    base = snapshot(clone, base_sha)
    return added_requirements(base, patched(base, clone, hidden_side), interpreter)


def manifests_of(patch: str) -> list[str]:
    """The paths of `patch` an era reads: manifests, and requirement files wherever they are
    (`tests/requirements.txt` is in a test patch)."""
    return sorted(p for p in patch_paths(patch) if MANIFEST.match(p) or REQUIREMENTS_FILE.search(p))


def patched(snap: Snapshot, clone: str | Path, patch: str) -> Snapshot:
    """`snap` with the sections of `patch` that change its manifests applied (a manifest the
    patch creates included, one it deletes gone); a patch that does not apply raises
    EnvironmentFailure."""
    paths = manifests_of(patch)
    with tempfile.TemporaryDirectory(prefix="prchain-hidden-") as tmp:
        root = Path(tmp)
        for path in paths:
            found = git.run(clone, "show", f"{snap.sha}:{path}", check=False)
            if found.ok:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(found.stdout)
        applied = git.run(
            root,
            "apply",
            "--whitespace=nowarn",
            *(f"--include={p}" for p in paths),
            "-",
            input=patch.encode() if patch.endswith("\n") else (patch + "\n").encode(),
            check=False,
        )
        if not applied.ok:
            said = applied.stderr.decode(errors="replace").strip()[-300:]
            raise EnvironmentFailure(f"the build part does not apply to its stage base: {said}")
        files = dict(snap.files)
        for path in paths:
            target = root / path
            if target.is_file():
                files[path] = target.read_text(errors="replace")
            else:
                files.pop(path, None)
    return replace(snap, files=files)


def hidden_tag(repo: str, era_image_id: str, requirements: list[str], cutoff: str) -> str:
    recipe = recipe_hash("hidden", VERSION, era_image_id, sorted(requirements), cutoff)
    return f"prchain/era-{_slug(repo)}:hidden-{recipe[:16]}"


def ensure_hidden_layer(
    client: DockerClient,
    env: EnvironmentConfig,
    eras: ErasConfig,
    repo: str,
    era_image: str,
    requirements: list[str],
    cutoff: str,
) -> str:
    """The tag of `era_image` with `requirements` installed into its venv, built once (an image of
    the same era, requirements and cutoff is reused). The era's packages stay at their versions;
    requirements with no solution beside them raise Unresolvable with the resolver's reason, any
    other failed build EnvironmentFailure with its last lines."""
    era_id = client.image_id(era_image)
    if not era_id:
        raise EnvironmentFailure(f"the era image {era_image} is not in the Docker engine")
    tag = hidden_tag(repo, era_id, requirements, cutoff)
    if client.image_id(tag):
        return tag
    wanted = " ".join(shlex.quote(r) for r in requirements)
    commands = [
        f"uv pip freeze --exclude-editable | {{ grep -E '^[A-Za-z0-9._-]+==' || true; }} > {HELD}",
        # a package the era holds already keeps the era's version (botocore, pinned by strawberry
        # #2569 beside typer, is the era's dependency too): only new packages are asked for
        f"$UV_PYTHON -c {shlex.quote(_ABSENT)} {wanted} > {WANTED}",
        f"if [ -s {WANTED} ]; then uv pip install --exclude-newer {shlex.quote(cutoff)} "
        f"-c {HELD} -r {WANTED}; fi",
        f"rm -f {HELD} {WANTED}",
    ]
    labels = {MANAGED_LABEL: "1", "prchain.kind": "hidden-layer", "prchain.repo": repo}
    labels["prchain.era-image"] = era_id
    made, code, log = _run_and_commit(client, env, eras, era_image, commands, repo, tag, labels, {})
    if not made:
        said = ", ".join(requirements)
        unresolved = resolver_failure(log)
        if unresolved is not None:  # what the index holds decides it: the stage cannot be judged
            raise Unresolvable(
                f"its hidden side's requirements ({said}) do not resolve beside its era's "
                f"packages as of {cutoff[:10]}: {unresolved[1]}"
            )
        last = " / ".join(x.strip() for x in log.strip().splitlines()[-6:])
        raise EnvironmentFailure(
            f"the hidden side's requirements ({said}) did not install (exit {code}): {last[-400:]}"
        )
    return tag
