"""Era images, in up to three layers: a Debian suite's base; the plan's toolchain (a compiler, a
language runtime), committed once and shared by every era and repository that asks for the same one
on the same suite; then the plan's commands (the era's dependencies), committed as the era image.

A build container has no network of its own, only prchain's registries-only proxy
(prchain/environments/egress.py; `eras.network_mode: host` is the host's network, for a local index, and
unproxied): a build backend runs as root and must reach nothing on the host or the LAN. It has uv
and the host's CA bundle mounted read-only, B_t's tracked files in a scratch directory (era builds only), and a download cache on a
named volume of its own repository (never shared across repositories: a build backend runs as root
and could rewrite what another repository later installs). None of those is in the committed image.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from prchain.core import git
from prchain.core.errors import GitError
from prchain.environments import cleanup
from prchain.environments.absent import whole_base
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import MANAGED_LABEL, DockerClient
from prchain.environments.egress import INSIDE, PROXIED, EgressProxy, endpoints, proxy_variables
from prchain.environments.eras import submodules
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.wheels import resolver_failure
from prchain.environments.images import Notify, ensure_base_image, recipe_hash

BUILD_VERSION = "4"  # bump when the build below changes what an image holds
# An era image's own build time, in seconds: a later `env setup` (--redo, another store) that finds
# the image instead of building it records the build that made it, not the second it took to look.
BUILD_SECONDS_LABEL = "prchain.build_seconds"
# What an era image stands on: its toolchain (or base) layer and the image's variables. An era
# grows only from an earlier era image of the same lineage (its plan's toolchain, its ENV).
LINEAGE_LABEL = "prchain.lineage"
GREW_FROM_LABEL = "prchain.grew_from"  # the earlier era image a thin build started from
# An era image with this many layers is no base to grow on: the era is built in full, and later
# eras grow from it (the chain starts again, and with it what earlier eras left behind).
MAX_LAYERS = 48
UV = "/opt/prchain/bin/uv"
CA = "/opt/prchain/build-ca.crt"
SRC = "/opt/prchain/src"
CACHE = "/opt/prchain/uv-cache"


@dataclass(frozen=True)
class EraImage:
    tag: str
    image_id: str
    built: bool  # False when an image of this plan existed
    seconds: float  # of the build that made the image (an existing one's as it records; else 0)
    log: str  # the build's output ("" when reused)
    exit_code: int = 0


def base_config(env: EnvironmentConfig, eras: ErasConfig, suite: str) -> EnvironmentConfig:
    """The sandbox config whose base image is `suite`'s, with what builds need added. Its name
    carries a digest of the package set: a config without the compiler (a test's) never takes
    the name of one with it."""
    packages = sorted({*env.base_packages, *eras.extra_base_packages})
    digest = recipe_hash("eras-base", packages, env.debian_mirror)[:8]
    return env.model_copy(
        update={
            "base_image": f"prchain/base:{suite}-eras-{digest}",
            "base_suite": suite,
            "base_packages": packages,
            "install_commands": {},
        }
    )


def plan_hash(
    repo: str,
    plan: Plan,
    snapshot_tree: str,
    base_id: str,
    variables: dict[str, str],
    linked: Sequence[tuple[str, str, str]] = (),
) -> str:
    """The image's identity: its inputs, the build's variables among them (a change such as
    compiling at install must not find the image built without it). `base_id` is the toolchain
    layer's image when the plan has one; `linked` the submodules read from mirrors (a mirror
    added later gives another tree)."""
    extra = [sorted(linked)] if linked else []  # the tags of trees without submodules unchanged
    return recipe_hash(
        "era-image",
        BUILD_VERSION,
        uv_version(),
        repo,
        base_id,
        snapshot_tree,
        plan.commands,
        plan.cutoff,
        sorted(plan.env.items()),
        sorted(variables.items()),
        *extra,
    )


def _slug(repo: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", repo.lower()).strip("-.") or "repo"


def era_tag(repo: str, recipe: str) -> str:
    return f"prchain/era-{_slug(repo)}:{recipe[:16]}"


def toolchain_tag(recipe: str) -> str:
    return f"prchain/toolchain:{recipe[:16]}"


def cache_volume(eras: ErasConfig, repo: str) -> str:
    """The download cache of one repository's builds (`eras.cache_volume` is its prefix)."""
    digest = recipe_hash("cache", repo)[:8]  # two slugs may collide, two repositories must not
    return f"{eras.cache_volume}-{_slug(repo)[:40]}-{digest}"


def add_to_cache(
    source: str, cached: str, *, skip: Sequence[str] = (), what: str, before: str = ""
) -> str:
    """A build command adding to the cache volume's `cached` the files of `source` it lacks
    (never those whose name matches a `skip` pattern, nor, given `before`, those dated after that
    file, a lower layer's that every image below holds). Only the missing files are staged, beside
    `cached` (so on the same volume), and each appears whole by a hard link from there: a
    concurrent build of the repository, reading the cache, never reads half a file. A cache that
    cannot be written (a full volume) costs the next build time, not this one: `what` names it
    in the line that says so."""
    names = "".join(f" ! -name {shlex.quote(pattern)}" for pattern in skip)
    if before:
        names += f" ! -newer {shlex.quote(before)}"
    staging = shlex.quote(f"{cached}.incoming")
    source, cached = shlex.quote(source), shlex.quote(cached)
    missing = (
        f"find . -type f{names} -print0 | while IFS= read -r -d '' f; do "
        f'[ -e {cached}/"$f" ] || printf \'%s\\0\' "$f"; done'
    )
    return (
        f"{{ mkdir -p {cached} {staging} && s=$(mktemp -d {staging}/XXXXXX) && "
        f'(cd {source} && {missing}) | tar -C {source} --null -T - -cf - | tar -C "$s" -xf - && '
        f'cp -rln "$s"/. {cached}/ && rm -rf "$s"; }} || echo \'{what} cache: not updated\''
    )


def uv_version() -> str:
    """The resolver that builds: another uv may resolve the same inputs to other packages."""
    from importlib.metadata import version

    return version("uv")


def uv_binary() -> str:
    from uv import find_uv_bin  # the uv wheel prchain depends on ships the binary

    return str(find_uv_bin())


def ensure_era_image(
    client: DockerClient,
    env: EnvironmentConfig,
    eras: ErasConfig,
    *,
    repo: str,
    clone: str | Path,
    sha: str,
    plan: Plan,
    era_key: str,
    notify: Notify = print,
    fetch: Callable[[str], bool] | None = None,
) -> EraImage:
    """The era image of `plan` for commit `sha`, built unless an image of the same recipe exists
    (in the engine, or where `fetch` of its tag brings it: a registry another node pushed it to).
    With `plan.on`, built on that earlier era image instead of the toolchain layer, provided it
    has the plan's lineage (else the build fails in one line, and the caller builds in full)."""
    started = time.monotonic()
    base = ensure_base_image(client, base_config(env, eras, plan.suite), notify)
    if plan.toolchain:
        base, code, log = ensure_toolchain_image(client, env, eras, repo, base, plan, notify)
        if not base:
            return EraImage("", "", False, time.monotonic() - started, log, code)
    lineage = recipe_hash("lineage", base, sorted(plan.env.items()))
    if plan.on:
        why = _not_to_grow_on(client, plan.on, lineage)
        if why:
            return EraImage("", "", False, time.monotonic() - started, f"{plan.on} {why}\n", 1)
        base = client.image_id(plan.on) or base
    whole = whole_base(clone, sha)  # B_t, or its stand-in where the clone lacks some blobs
    tree = git.output(clone, "rev-parse", f"{whole.sha}^{{tree}}").strip()
    linked = submodules.resolved(clone, sha, eras.git_mirrors)
    variables = build_environment(env, eras, repo)[1]
    recipe = plan_hash(repo, plan, tree, base, variables, linked)
    tag = era_tag(repo, recipe)
    found = client.image_id(tag)
    if not found and fetch is not None and fetch(tag):
        found = client.image_id(tag)
    if found and found != base:  # a tag on the bare base is no era image (built again)
        return EraImage(tag, found, False, recorded_seconds(client, tag), "")
    notify(f"building {tag} ({plan.notes[0] if plan.notes else plan.suite})")
    tmp = tempfile.mkdtemp(prefix="prchain-era-")
    try:
        _export_tree(clone, whole.sha, Path(tmp) / "src")
        said = ([whole.note()] if whole.absent else []) + submodules.populate(
            Path(tmp) / "src", linked
        )
        for line in said:
            notify(line)
        labels = {
            MANAGED_LABEL: "1",
            "prchain.kind": "era",
            "prchain.repo": repo,
            "prchain.era": era_key,
            "prchain.recipe": recipe,
            LINEAGE_LABEL: lineage,
            **({GREW_FROM_LABEL: plan.on} if plan.on else {}),
        }
        image_id, code, log = _run_and_commit(
            client,
            env,
            eras,
            base,
            plan.commands,
            repo,
            tag,
            labels,
            plan.env,
            Path(tmp) / "src",
            plan.mounts,
            since=started,
        )
    finally:
        cleanup.discard(Path(tmp))
    log = "".join(f"{line}\n" for line in said) + log
    # The built image's time is the one it records, so a later run that finds it says the same.
    seconds = (recorded_seconds(client, tag) if image_id else 0) or time.monotonic() - started
    return EraImage(tag, image_id, bool(image_id), seconds, log, code)


def _not_to_grow_on(client: DockerClient, image: str, lineage: str) -> str:
    """Why an era image cannot grow on `image` ("" : it can)."""
    info = client.image_info(image)
    if info is None:
        return "is not in the engine"
    if client.image_labels(image).get(LINEAGE_LABEL) != lineage:
        return "has another toolchain or ENV"
    if len(info.layers) >= MAX_LAYERS:  # overlayfs stacks at most 128 lower layers
        return f"has {len(info.layers)} layers (at most {MAX_LAYERS - 1} to grow on)"
    return ""


def ensure_toolchain_image(
    client: DockerClient,
    env: EnvironmentConfig,
    eras: ErasConfig,
    repo: str,
    base: str,
    plan: Plan,
    notify: Notify = print,
) -> tuple[str, int, str]:
    """(image id, exit code, log) of the plan's toolchain layer on `base`, built unless it
    exists. Its identity is the base and the commands only: eras and repositories asking for the
    same toolchain share it, so its build gets no tree and no repository's cache volume (issue 52:
    a cache another repository's build backend had written would reach every repository)."""
    recipe = recipe_hash(
        "toolchain", BUILD_VERSION, uv_version(), base, plan.toolchain, sorted(plan.env.items())
    )
    tag = toolchain_tag(recipe)
    found = client.image_id(tag)
    if found and found != base:
        return found, 0, ""
    notify(f"building {tag} (toolchain: {plan.notes[0] if plan.notes else plan.suite})")
    labels = {MANAGED_LABEL: "1", "prchain.kind": "toolchain", "prchain.recipe": recipe}
    # Shared by every repository, so built from no repository's state: no cache volume.
    commands = [*plan.toolchain, f"rm -rf {CACHE}"]
    return _run_and_commit(client, env, eras, base, commands, None, tag, labels, plan.env)


def _export_tree(clone: str | Path, sha: str, target: Path) -> None:
    """B_t's tracked files into `target`; a clone that cannot give them (objects missing from a
    partial clone) fails this era in one line, not the whole `env setup`."""
    target.mkdir()
    archive = git.stream(clone, "archive", sha)
    unpacked = subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout)
    code = archive.wait()
    if code != 0 or unpacked.returncode != 0:
        raise GitError(
            f"cannot export {sha[:12]} of {clone} (git archive exit {code}, tar exit "
            f"{unpacked.returncode}): are objects missing? `git fsck` says which"
        )
    target.chmod(0o777)


# Every build's variable naming the Go proxies (eras.go_proxy) Go's toolchain modules come from.
# Where a toolchain is fetched is not what it is: its layer's identity (its commands) leaves the
# proxy out, so a proxy of one's own (a test's, on a port of its run) shares the layer.
GO_PROXY_VARIABLE = "PRCHAIN_GO_PROXY"


def build_environment(
    env: EnvironmentConfig, eras: ErasConfig, repo: str | None
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """The mounts (uv, the CA bundle, `repo`'s cache; not the tree) and variables of a build
    container; the setup agent's sandbox uses the same, so its recipes replay here. `repo` None:
    a layer shared by every repository (a toolchain) gets no cache volume at all, only a scratch
    cache inside the build that is deleted before the commit."""
    binds = {uv_binary(): (UV, "ro")}
    if repo is not None:
        binds[cache_volume(eras, repo)] = (CACHE, "rw")
    variables = {
        "PATH": "/opt/prchain/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "UV_PYTHON": "/opt/venv/bin/python",
        "UV_INDEX_URL": eras.index_url,
        "UV_CACHE_DIR": CACHE,
        "UV_LINK_MODE": "copy",
        "UV_NO_PROGRESS": "1",
        "UV_HTTP_TIMEOUT": "120",
        # pip compiles what it installs; uv does not by default. Without the .pyc files, an old
        # dependency's source is compiled at import time inside the suite, where a project's
        # `filterwarnings = error` turns its invalid escapes into SyntaxErrors (blinker 1.4 under
        # flask 2020).
        "UV_COMPILE_BYTECODE": "1",
        "LANG": "C.UTF-8",
        GO_PROXY_VARIABLE: eras.go_proxy,
    }
    ca = env.build_ca_bundle
    if ca and Path(ca).is_file():
        binds[str(Path(ca).resolve())] = (CA, "ro")
        variables["SSL_CERT_FILE"] = CA
    return binds, variables


def egress(eras: ErasConfig) -> AbstractContextManager[EgressProxy | None]:
    """The registries-only proxy of era builds and the setup agent's box; none when the
    configuration asks for the host's network."""
    if eras.network_mode == "host":
        return nullcontext()
    urls = [eras.index_url, eras.npm_registry, *re.split(r"[,|]", eras.go_proxy)]
    hosts = [*eras.registries, *(urlsplit(u.strip()).hostname or "" for u in urls)]
    return EgressProxy(hosts, endpoints(urls))


def _run_and_commit(
    client: DockerClient,
    env: EnvironmentConfig,
    eras: ErasConfig,
    base: str,
    commands: list[str],
    repo: str | None,
    tag: str,
    labels: dict[str, str],
    image_env: dict[str, str],
    src: Path | None = None,
    mounts: dict[str, str] | None = None,
    since: float | None = None,
) -> tuple[str, int, str]:
    """Run the commands in a build container and commit it as `tag`; with `since` (when the build
    started, time.monotonic), the image carries its build time (BUILD_SECONDS_LABEL)."""
    binds, variables = build_environment(env, eras, repo)
    if src is not None:
        binds[str(src)] = (SRC, "rw")
    for inside, host in (mounts or {}).items():  # local git mirrors, read-only
        binds[str(Path(host).resolve())] = (inside, "ro")
    with egress(eras) as proxy:
        if proxy is not None:
            binds[proxy.directory] = (INSIDE, "ro")
            variables = {**variables, **proxy_variables()}
        # Exported in the script, not given to the container: a commit keeps a container's
        # variables, and none of these (the CA file, uv's cache and index, the proxy) belongs in
        # the image. The plan's own variables do (a toolchain's PATH), and the build sees them as
        # the image will.
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in variables.items())
        exports += "".join(f"export {k}={shlex.quote(v)}\n" for k, v in image_env.items())
        script = "set -euo pipefail\n" + (PROXIED if proxy else "") + exports
        script += "set -x\n" + "\n".join(commands) + "\n"
        cleanup.watch(client)
        container, code, log = client.run_to_end(
            base,
            ["/bin/bash", "-c", script],
            name=f"prchain-era-build-{secrets.token_hex(4)}",
            labels={**labels, "prchain.kind": "era-build", **_owner()},
            environment={},
            binds=binds,
            network_mode="none" if proxy else eras.network_mode,
            timeout=eras.build_timeout,
            # Ctrl-C or SIGTERM of `env setup` removes the build container (SIGKILL: gc).
            on_start=lambda cid: cleanup.register(cid, lambda: _remove(client, cid)),
        )
    try:
        if code != 0:
            return "", code, log
        variables = {"VIRTUAL_ENV": "/opt/venv", **image_env}
        changes = [f"ENV {k}={json.dumps(v)}" for k, v in variables.items()]
        changes += ['CMD ["/bin/bash"]', "WORKDIR /"]
        if since is not None:
            labels = {**labels, BUILD_SECONDS_LABEL: f"{time.monotonic() - since:.1f}"}
        return client.commit_image(container, tag, labels, changes), code, log
    finally:
        cleanup.unregister(container)
        client.remove_container(container)


def recorded_seconds(client: DockerClient, image: str) -> float:
    """How long the build that made `image` took, as the image records it (0: it does not)."""
    try:
        return float(client.image_labels(image).get(BUILD_SECONDS_LABEL, 0))
    except ValueError:
        return 0.0


def _remove(client: DockerClient, container: str) -> None:
    client.remove_container(container)


def _owner() -> dict[str, str]:
    return cleanup.owner_labels()  # a build killed with SIGKILL is gc'd like a sandbox


# rustc's error with its code (`error[E0310]: the parameter type `T` may not live long enough`):
# the `error: aborting due to previous error` and cargo's `could not compile` come after it.
_RUSTC_ERROR = re.compile(r"^error\[E\d{4}\]: ")


def build_failure(log: str, code: int) -> str:
    """One line that says why a build failed: uv's `error:` line with the reason under it."""
    if code == -1:
        return "the build ran past its time limit"
    unresolved = resolver_failure(log)
    if unresolved is not None:  # the package and why, however long uv's explanation
        return f"no solution for `{unresolved[0]}`: {unresolved[1]}"
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if _RUSTC_ERROR.match(line):  # rustc's coded error, where, before its `aborting due to`
            where = [n.removeprefix("--> ") for n in lines[i + 1 : i + 2] if n.startswith("--> ")]
            return " ".join([line, *(f"({w})" for w in where)])[:400]
        if line.startswith(("error:", "ERROR:")):
            causes = _cause_chain(lines[i + 1 :])
            if causes:  # cargo's: the first cause and the deepest (a host that cannot be reached)
                return " ".join([line, causes[0], *(["…", causes[-1]] if len(causes) > 1 else [])])[
                    :400
                ]
            follow = [
                n.lstrip("╰─▶ ").strip()
                for n in lines[i + 1 : i + 3]
                if n.startswith(("╰─▶", "Caused by", "cause:"))
            ]
            return " ".join([line, *follow])[:400]
    # npm's own lines end with where its log is, yarn's with a docs link: their first error says why
    for pattern in (_NPM_ERROR, _YARN_PNPM_ERROR):
        first = next((n for n in lines if pattern.match(n)), "")
        if first:
            return first.replace("\u2009", " ")[:300]
    for i, line in enumerate(lines):  # Maven's goal, and what javac said under it
        if line.startswith(_MAVEN_GOAL):
            said = [
                n for n in lines[i + 1 : i + 2] if n.startswith("[ERROR] ") and "[Help" not in n
            ]
            goal = _MAVEN_EXECUTION.sub("", line.removesuffix(" -> [Help 1]"))
            return " ".join([goal, *said])[:400]
    maven = _maven_error(lines)
    if maven:
        return maven[:400]
    for i, line in enumerate(lines):  # go's: `go: m@v1.2.3: reading …: 403 Forbidden`
        if _GO_ERROR.match(line):
            said = lines[i + 1 : i + 2]
            return " ".join([line, *(n for n in said if n.startswith("server response:"))])[:400]
    # the last line the build printed; the script's own trace (`+ rmdir …` of its exit trap) is
    # not what failed
    printed = [n for n in lines if not n.startswith("+ ")] or lines
    return (printed[-1] if printed else f"exit code {code}")[:300]


_NPM_ERROR = re.compile(r"^npm (error|ERR!) (?!code |errno |A complete log|Log files)\S")
# pnpm sets its error code off with a thin space (U+2009): `ERR_PNPM_FETCH_403\u2009 GET …: Forbidden`
_YARN_PNPM_ERROR = re.compile(r"^(error (?!Command failed with exit code)\S|ERR_PNPM_\w+\s)")
# Maven closes a failed build with help links and `mvn <args> -rf :module`; the goal that failed
# says why ("… could not be resolved: Could not find artifact …", "Compilation failure").
_MAVEN_GOAL = "[ERROR] Failed to execute goal "
# What Maven prints under its error on every failure: how to learn more, never why it failed; and
# what a forked JVM or javadoc says on stderr, which Maven relays as `[ERROR]` (pmd's 2021 eras:
# `Picked up JAVA_TOOL_OPTIONS: …`, javadoc's `Error fetching link: …. Ignored it.`).
_MAVEN_BOILERPLATE = (
    "To see the full stack trace", "Re-run Maven", "For more information", "[Help ",
    "Some problems were encountered", "The build could not read", "Picked up JAVA_TOOL_OPTIONS",
    "Picked up _JAVA_OPTIONS", "Error fetching link", "The given File link",
)  # fmt: skip


def _maven_error(lines: list[str]) -> str:
    """Maven's `[FATAL]` line (a project it cannot read: a parent POM it cannot fetch), else the
    first `[ERROR]` line that is not advice or a JVM's notice, from its summary after `BUILD
    FAILURE` first (what failed the build: `Unable to get dependency information for …`), then
    from the whole log; "" when it printed none."""
    fatal = next((n for n in lines if n.startswith("[FATAL] ")), "")
    if fatal:
        return fatal
    summary = max((i for i, n in enumerate(lines) if n.endswith("BUILD FAILURE")), default=0)
    for line in [*lines[summary:], *lines[:summary]]:
        said = line.removeprefix("[ERROR]").strip() if line.startswith("[ERROR] ") else ""
        while said.startswith("[ERROR]"):
            said = said.removeprefix("[ERROR]").strip()
        if said and not said.startswith(_MAVEN_BOILERPLATE):
            return line
    return ""


_MAVEN_EXECUTION = re.compile(r"Execution \S+ of goal \S+ failed: ")  # the goal, said again
# A module a `replace` directive points elsewhere is named with its stand-in: `go: m@v (replaced by
# r@v): reading …` (cloudquery's cli of 2026 replaced invopop/jsonschema by its own fork).
_GO_ERROR = re.compile(
    r"^go: (?!downloading |finding |extracting |found |to add )\S+@\S+(?: \(replaced by \S+\))?: "
)


def _cause_chain(lines: list[str]) -> list[str]:
    """The messages of an error's `Caused by:` chain (cargo's), each the line after its header."""
    causes = []
    for i, line in enumerate(lines):
        if line == "Caused by:" and i + 1 < len(lines):
            causes.append(lines[i + 1])
        elif i and lines[i - 1] != "Caused by:" and line.startswith(("error", "+ ")):
            break  # the next error, or the build script's next command
    return causes
