"""The one typed configuration of a prchain run.

Each component owns its section (defined beside the component); this module composes them, loads
one YAML file, applies `--set key=value` overrides and saves the result beside a run's output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chains.config import ChainsConfig
from environments.config import EnvironmentConfig
from miner.config import MinerConfig
from prchain.agent.config import AgentConfig
from prchain.core.errors import ConfigError
from prchain.llm.config import LLMConfig
from prchain.p2t.config import P2TConfig
from prchain.prm.config import PRMConfig
from prchain.report.config import ReportConfig
from prchain.scale.config import ScaleConfig
from prchain.verdicts.config import VerdictsConfig
from sql.config import StoreConfig

DEFAULT_CONFIG_FILE = "prchain.yaml"


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    store: StoreConfig = Field(default_factory=StoreConfig)
    miner: MinerConfig = Field(default_factory=MinerConfig)
    chains: ChainsConfig = Field(default_factory=ChainsConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    prm: PRMConfig = Field(default_factory=PRMConfig)
    verdicts: VerdictsConfig = Field(default_factory=VerdictsConfig)
    p2t: P2TConfig = Field(default_factory=P2TConfig)
    scale: ScaleConfig = Field(default_factory=ScaleConfig)
    report: ReportConfig = Field(default_factory=ReportConfig)


def parse_override(item: str) -> tuple[list[str], Any]:
    """`a.b.c=value` → (["a","b","c"], value); the value is read as YAML so numbers and lists work."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set expects key=value, got {item!r}")
    return key.strip().split("."), yaml.safe_load(raw) if raw else ""


def _apply(tree: dict[str, Any], path: list[str], value: Any) -> None:
    node = tree
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"cannot set {'.'.join(path)}: {part} is not a section")
    node[path[-1]] = value


def load_config(
    path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()
) -> Config:
    """Defaults ← the YAML file (if given or ./prchain.yaml exists) ← each override in order."""
    tree: dict[str, Any] = {}
    file = Path(path) if path else Path(DEFAULT_CONFIG_FILE)
    if path and not file.exists():
        raise ConfigError(f"config file {file} does not exist")
    if file.exists():
        loaded = yaml.safe_load(file.read_text()) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{file} must hold a mapping at the top level")
        tree = loaded
    for item in overrides:
        _apply(tree, *parse_override(item))
    try:
        return Config.model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from None


def save_config(config: Config, directory: str | Path, name: str = "config.json") -> Path:
    """Write the config a run used beside its output, so every result can be traced to it."""
    target = Path(directory) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(config.model_dump(mode="json"), indent=2) + "\n")
    return target
