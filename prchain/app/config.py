"""The one typed configuration of a prchain run.

Each component owns its section (defined beside the component); this module composes them, loads
one YAML file, applies `--set key=value` overrides and saves the result beside a run's output.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prchain.agent.config import AgentConfig
from prchain.chains.config import ChainsConfig
from prchain.core.errors import ConfigError
from prchain.core.files import write_text_atomically
from prchain.core.secrets import Redactor
from prchain.environments.config import EnvironmentConfig
from prchain.environments.eras.config import ErasConfig
from prchain.llm.config import LLMConfig
from prchain.miner.config import MinerConfig
from prchain.p2t.config import P2TConfig
from prchain.prm.config import PRMConfig
from prchain.report.config import ReportConfig
from prchain.scale.config import ScaleConfig
from prchain.setup.config import SetupAgentConfig
from prchain.store.config import StoreConfig
from prchain.verdicts.config import VerdictsConfig

DEFAULT_CONFIG_FILE = "prchain.yaml"


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    store: StoreConfig = Field(default_factory=StoreConfig)
    miner: MinerConfig = Field(default_factory=MinerConfig)
    chains: ChainsConfig = Field(default_factory=ChainsConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    eras: ErasConfig = Field(default_factory=ErasConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    prm: PRMConfig = Field(default_factory=PRMConfig)
    verdicts: VerdictsConfig = Field(default_factory=VerdictsConfig)
    p2t: P2TConfig = Field(default_factory=P2TConfig)
    scale: ScaleConfig = Field(default_factory=ScaleConfig)
    report: ReportConfig = Field(default_factory=ReportConfig)
    env_setup: SetupAgentConfig = Field(default_factory=SetupAgentConfig)


def parse_override(item: str) -> tuple[list[str], Any]:
    """`a.b.c=value` → (["a","b","c"], value); the value is read as YAML so numbers and lists work."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set expects key=value, got {item!r}")
    try:
        return key.strip().split("."), yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError:
        raise ConfigError(f"--set {key.strip()}: {raw!r} is not a YAML value") from None


def _apply(tree: dict[str, Any], path: list[str], value: Any) -> None:
    node = tree
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"cannot set {'.'.join(path)}: {part} is not a section")
    node[path[-1]] = value


def _read_yaml(file: Path) -> Any:
    try:
        return yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{file} is not valid YAML ({problem}{where})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {file}: {exc}") from None


def load_config(
    path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()
) -> Config:
    """Defaults ← the YAML file (if given or ./prchain.yaml exists) ← each override in order."""
    tree: dict[str, Any] = {}
    file = Path(path) if path else Path(DEFAULT_CONFIG_FILE)
    if path and not file.exists():
        raise ConfigError(f"config file {file} does not exist")
    if file.exists():
        loaded = _read_yaml(file)
        if not isinstance(loaded, dict):
            raise ConfigError(f"{file} must hold a mapping at the top level")
        tree = loaded
    for item in overrides:
        _apply(tree, *parse_override(item))
    try:
        return Config.model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from None


def configured_secrets(config: Config) -> tuple[str, ...]:
    """Every secret the config points at: the values of its token/key variables (each token of a
    comma-separated list) and the store's password. The recogniser redacts them wherever they
    appear, whichever shell later reads the store."""
    from sqlalchemy.engine import make_url  # not at import: `--help` stays free of SQLAlchemy
    from sqlalchemy.exc import ArgumentError

    names = (config.llm.api_key_env, config.miner.github.token_env)
    values = [part.strip() for name in names for part in os.environ.get(name, "").split(",")]
    try:
        password = make_url(config.store.url).password
    except ArgumentError:
        password = None
    return tuple(v for v in (*values, str(password or "")) if v)


def masked_config(config: Config) -> dict[str, Any]:
    """The config as stored with a rollout, saved beside an output or shown: no credential in it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    data = config.model_dump(mode="json")
    # A URL SQLAlchemy cannot read stays as written: the recogniser below still masks its password.
    with contextlib.suppress(ArgumentError):
        data["store"]["url"] = make_url(config.store.url).render_as_string(hide_password=True)
    masked: dict[str, Any] = Redactor(configured_secrets(config)).value(data)
    return masked


def save_config(config: Config, directory: str | Path, name: str = "config.json") -> Path:
    """Write the config a run used (credentials masked) beside its output, so every result can be
    traced to it."""
    target = Path(directory) / name
    write_text_atomically(target, json.dumps(masked_config(config), indent=2) + "\n")
    return target
