"""Configuration of era planning and era image builds (`eras` section)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ErasConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index_url: str = Field(
        default="https://pypi.org/simple",
        description="Package index the era builds resolve against (it must give upload times: "
        "PyPI's JSON simple API, PEP 700, does).",
    )
    go_proxy: str = Field(
        default="https://proxy.golang.org",
        description="GOPROXY of Go era builds (their modules and Go's toolchain modules); a list "
        "in GOPROXY's syntax is tried in order. Sandboxes are offline (GOPROXY=off).",
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
    verify_timeout: float = Field(
        default=900.0,
        gt=0,
        description="Seconds for the whole suite's run when a recipe is verified.",
    )
    cache_volume: str = Field(
        default="prchain-build-cache",
        description="Prefix of the Docker volumes holding each repository's download caches "
        "(one volume per repository: no build state crosses repositories).",
    )
    network_mode: str = Field(
        default="bridge",
        description="Network of the build containers (host: reach an index on the host's 127.0.0.1).",
    )
