"""Base and per-repo sandbox images, tagged by a hash of their recipe so nothing is rebuilt twice.

The base image (python3 + git) comes from the local engine, a registry, or, for `prchain/*` names
that no registry serves, a local `debootstrap` + `docker import`. A repo image adds a full mirror
of the local clone (root-only, so the agent cannot read future history), the per-repo install
commands, and a root-only seed copy of /work and the agent's home for sandboxes whose writable
places are tmpfs mounts (docs/sandbox.md).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from prchain.core import git
from prchain.core.errors import EnvironmentFailure, GitError
from prchain.environments.carry import ORIGIN_DIR, SEED_DIR, STATE_ROOT, WORKDIR
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import MANAGED_LABEL, DockerClient

Notify = Callable[[str], None]
RECIPE_VERSION = "4"  # bump when the build changes meaning beyond the two templates below

# The sandbox layer: the agent's and the tester's users, root's state, the clone's mirror. An era's
# strace is root's alone: it is root's witness of a hidden test's pass (clean_room.RUN_EACH), and a
# process it traces cannot trace a child of its own, so a test that runs strace would pass where
# the tests are verified and fail in every clean room (coreutils'
# test_dd::test_nocache_eof_fadvise_zero_length, which skips itself where strace cannot run).
# The build's step containers would inherit the base image's managed label, and an older
# `prchain env gc` (or any label-based cleanup) would kill them mid-build as owner-less sandboxes;
# the label is marked "building" until the final image gets its labels back at the end.
DOCKERFILE = """\
FROM {base}
LABEL {managed}=building
RUN set -e; id -u agent >/dev/null 2>&1 || useradd --create-home --uid 1000 --shell /bin/bash agent \\
    || useradd --create-home --shell /bin/bash agent; \\
    id -u tester >/dev/null 2>&1 || useradd --uid 1001 --shell /bin/bash tester \\
    || useradd --shell /bin/bash tester; \\
    mkdir -p /opt/prchain {state} {workdir}; chmod 0700 /opt/prchain; \\
    if tracer=$(command -v strace); then chmod 0700 "$tracer"; fi
COPY origin.git {origin}
COPY gitconfig /home/agent/.gitconfig
ENV LANG=C.UTF-8 HOME=/home/agent PYTHONDONTWRITEBYTECODE=1
WORKDIR {workdir}
{install}RUN find {workdir} -mindepth 1 -delete && chown -R agent:agent /work /home/agent \\
    && chmod -R go-rwx {origin} && mkdir -p {seed} && cp -a /work {seed}/work \\
    && cp -a /home/agent {seed}/home
"""

# The agent's own git identity. No `safe.directory`: root never works in the agent's repository and
# the agent never in root's, so no repository needs to be trusted across owners.
GITCONFIG = """\
[user]
\tname = prchain agent
\temail = agent@prchain.invalid
[advice]
\tdetachedHead = false
[init]
\tdefaultBranch = main
[core]
\tpager = cat
[gc]
\tauto = 0
"""


@dataclass(frozen=True)
class RepoImage:
    repo: str
    tag: str
    image_id: str
    built: bool  # False when the recipe was already built
    log_path: Path | None = None


def recipe_hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _labels(kind: str, recipe: str, **extra: str) -> dict[str, str]:
    return {MANAGED_LABEL: "1", "prchain.kind": kind, "prchain.recipe": recipe, **extra}


def _log_file(config: EnvironmentConfig, name: str) -> Path:
    target = Path(config.log_dir) / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".log")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


# The install commands run with the network on; pip, requests, curl and git are pointed at the
# host's CA bundle (copied in for the build only) so they work behind a TLS-re-signing proxy.
BUILD_CA = "/opt/prchain/build-ca.crt"
CA_VARIABLES = (
    "SSL_CERT_FILE",
    "PIP_CERT",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
)


def install_steps(commands: list[str], with_ca: bool) -> str:
    """The Dockerfile lines that run the install commands (as root, in an empty /work/repo: the
    image holds no worktree, so they install dependencies, never the project built from HEAD)."""
    if not commands:
        return ""
    prefix = "".join(f"export {name}={BUILD_CA}; " for name in CA_VARIABLES) if with_ca else ""
    steps = "".join(f"RUN {json.dumps(['/bin/bash', '-c', prefix + cmd])}\n" for cmd in commands)
    if not with_ca:
        return steps
    return f"COPY build-ca.crt {BUILD_CA}\n{steps}RUN rm -f {BUILD_CA}\n"


# ---- base image -------------------------------------------------------------------------------


def base_recipe(config: EnvironmentConfig) -> str:
    return recipe_hash(
        "base",
        RECIPE_VERSION,
        config.base_suite,
        sorted(config.base_packages),
        config.debian_mirror,
    )


BASE_NAMES = "prchain/base:"  # the only prchain images ensure_base_image builds


def ensure_base_image(
    client: DockerClient, config: EnvironmentConfig, notify: Notify = print
) -> str:
    """The id of `config.base_image`, pulling or building it when the engine does not have it.

    A prchain/base: name is prchain's to build: the image under it is used only when its recipe
    label is this config's (its suite and packages), else the image of this recipe is found or
    built and takes the name. Whatever else was tagged there (by hand, by a run with other
    packages) is never taken for it. Other prchain/ names (an era image a sandbox starts from) are
    content-addressed by their own tags."""
    found = client.image_id(config.base_image)
    if found and not config.base_image.startswith(BASE_NAMES):
        return found
    recipe = base_recipe(config)
    if found and client.image_labels(found).get("prchain.recipe") == recipe:
        return found
    if not config.base_image.startswith("prchain/"):
        pulled = client.pull(config.base_image)
        if pulled:
            return pulled
        raise EnvironmentFailure(
            f"base image {config.base_image} is not present and could not be pulled",
            hint="load it with `docker load`, or use a prchain/* name so prchain builds one with debootstrap",
        )
    if not config.base_image.startswith(BASE_NAMES):
        # An era, toolchain or repository image that is gone (pruned) is no candidate: building
        # the bare base under its name would run a stage without its dependencies.
        raise EnvironmentFailure(
            f"image {config.base_image} is not present; it is no base image prchain can rebuild",
            hint="run `prchain env setup` again to build the era's image",
        )
    cached = f"prchain/base:recipe-{recipe[:16]}"
    image = client.image_id(cached) or _debootstrap_import(client, config, cached, recipe, notify)
    client.tag(image, config.base_image)
    return image


def _debootstrap_import(
    client: DockerClient, config: EnvironmentConfig, tag: str, recipe: str, notify: Notify
) -> str:
    if shutil.which("debootstrap") is None:
        raise EnvironmentFailure(
            f"base image {config.base_image} is missing and debootstrap is not installed",
            hint="apt-get install debootstrap (scripts/setup-system.sh does), then rerun `prchain env base`",
        )
    notify(
        f"base image {config.base_image} not found and no registry is used: building it locally with "
        f"debootstrap ({config.base_suite}, {', '.join(config.base_packages)}); this takes about a minute"
    )
    log = _log_file(config, f"base-{recipe[:16]}")
    with tempfile.TemporaryDirectory(prefix="prchain-rootfs-") as tmp:
        root = Path(tmp) / "root"
        cmd = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(config.base_packages)}",
            config.base_suite,
            str(root),
            config.debian_mirror,
        ]
        with log.open("w") as out:
            if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                raise EnvironmentFailure(f"debootstrap failed; see {log}")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            shutil.rmtree(root / junk, ignore_errors=True)
        tar = subprocess.Popen(
            ["tar", "-C", str(root), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE
        )
        image = client.import_tar(tar.stdout, tag, _labels("base", recipe))
        if tar.wait() != 0:
            raise EnvironmentFailure(f"tar of the root filesystem failed; see {log}")
    notify(f"built base image {tag} ({image[:19]}), tagged {config.base_image}; log: {log}")
    return image


# ---- repo images ------------------------------------------------------------------------------


def clone_state(clone: Path) -> str:
    """A digest of every ref and HEAD: any new commit or ref in the clone changes it."""
    if not (clone / ".git").exists() and not (clone / "HEAD").exists():
        raise GitError(f"{clone} is not a git clone")
    refs = git.output(clone, "for-each-ref", "--format=%(objectname) %(refname)")
    head = git.resolve(clone, "HEAD") or ""
    return recipe_hash(refs, head)


def repo_image_tag(repo: str, recipe: str) -> str:
    slug = re.sub(r"[^a-z0-9_.-]+", "-", repo.lower()).strip("-.") or "repo"
    return f"prchain/repo-{slug}:{recipe[:16]}"


def repo_recipe(base_id: str, clone: Path, commands: list[str]) -> str:
    # The templates are part of the recipe: two versions of this file never share an image tag.
    return recipe_hash(
        "repo", RECIPE_VERSION, DOCKERFILE, GITCONFIG, base_id, clone_state(clone), commands
    )


def ensure_repo_image(
    client: DockerClient,
    config: EnvironmentConfig,
    repo: str,
    clone_path: str | Path,
    notify: Notify = print,
    *,
    base_image: str | None = None,
    commands: list[str] | None = None,
) -> RepoImage:
    """The repo's image for the current clone and install commands, built only if that recipe is new.

    `base_image` (an era's image: a Debian suite's interpreter plus the recipe's dependencies)
    replaces `config.base_image` as the FROM; `commands` replaces `config.install_commands[repo]`.
    None keeps the configured value."""
    clone = Path(clone_path).resolve()
    base_name = base_image or config.base_image
    base = (
        _era_base(client, base_image) if base_image else ensure_base_image(client, config, notify)
    )
    if commands is None:
        commands = config.install_commands.get(repo, [])
    recipe = repo_recipe(base, clone, commands)
    tag = repo_image_tag(repo, recipe)
    found = client.image_id(tag)
    if found:
        return RepoImage(repo, tag, found, built=False)
    notify(f"building {tag} from {clone}")
    log = _log_file(config, tag)
    with tempfile.TemporaryDirectory(prefix="prchain-build-") as tmp:
        _write_context(Path(tmp), clone, base_name, commands, config.build_ca_bundle)
        image, _text = client.build(
            tmp, tag, _labels("repo", recipe, **{"prchain.repo": repo}), log_path=log
        )
    return RepoImage(repo, tag, image, built=True, log_path=log)


def _era_base(client: DockerClient, name: str) -> str:
    """The id of an explicitly given base image: present in the engine, or pulled."""
    found = client.image_id(name) or (None if name.startswith("prchain/") else client.pull(name))
    if not found:
        raise EnvironmentFailure(
            f"base image {name} is not present and could not be pulled",
            hint="build the era's image first (`prchain env setup`), or load it with `docker load`; "
            "`tasks images load` brings only a task file's stage images, which `tasks eval` runs "
            "but a rollout does not (it layers its sandbox on the era image and the clone)",
        )
    return found


def _write_context(
    ctx: Path, clone: Path, base: str, commands: list[str], ca_bundle: str = ""
) -> None:
    origin = ctx / "origin.git"
    git.run(None, "clone", "-q", "--mirror", "--no-hardlinks", str(clone), str(origin))
    # Stages fetch B_t by sha from this mirror; it must not point back at the host path.
    git.run(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    git.run(origin, "config", "--remove-section", "remote.origin")
    (ctx / "gitconfig").write_text(GITCONFIG)
    with_ca = bool(commands and ca_bundle and Path(ca_bundle).is_file())
    if with_ca:
        shutil.copyfile(ca_bundle, ctx / "build-ca.crt")
    install = install_steps(commands, with_ca)
    (ctx / "Dockerfile").write_text(
        DOCKERFILE.format(
            base=base,
            managed=MANAGED_LABEL,
            state=STATE_ROOT,
            origin=ORIGIN_DIR,
            workdir=WORKDIR,
            install=install,
            seed=SEED_DIR,
        )
    )


# ---- housekeeping -----------------------------------------------------------------------------


def list_images(client: DockerClient) -> list[dict[str, object]]:
    return sorted(
        client.images({MANAGED_LABEL: "1"}), key=lambda i: str(i["created"]), reverse=True
    )
