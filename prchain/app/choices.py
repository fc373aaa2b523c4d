"""Every closed set of values the CLI offers, re-exported from where each is defined once.

Light on purpose: the CLI imports this at start-up to build its `--help`, so nothing here may pull in
openai, docker, networkx or the store.
"""

from __future__ import annotations

from prchain.agent.choices import ACTION_FORMATS, KEEP_POLICIES, KEEP_SIGNALS, SCAFFOLDS
from prchain.chains.config import DROP_KINDS, STRATEGY_NAMES
from prchain.chains.rulebook import RULE_NAMES
from prchain.environments.config import CONFLICT_POLICIES
from prchain.export.registry import choice_help, get, names
from prchain.miner.config import SOURCE_NAMES
from prchain.p2t.choices import ETA_MODES, LEN_MODES, OOO_MODES
from prchain.prm.variants import VARIANTS
from prchain.scale.config import BACKEND_NAMES

PRM_VARIANTS: tuple[str, ...] = tuple(VARIANTS.names())
EXPORT_FORMATS = names("trajectories")  # `prchain export --format`
EXPORT_FORMATS_HELP = choice_help("trajectories")
TASK_FORMATS = names("harness")  # `prchain tasks convert --to`


def written_noun(format_: str) -> tuple[str, str]:
    """What a format's command counts, singular and plural (`wrote 2 task directories`)."""
    return get(format_).written


GRAPH_FORMATS = ("tree", "text", "json")
ABLATIONS = ("none", "no-gate", "random-pick")  # P2T ablations of the paper's §5.4

__all__ = [
    "ACTION_FORMATS",
    "BACKEND_NAMES",
    "DROP_KINDS",
    "CONFLICT_POLICIES",
    "ETA_MODES",
    "GRAPH_FORMATS",
    "ABLATIONS",
    "LEN_MODES",
    "TASK_FORMATS",
    "OOO_MODES",
    "EXPORT_FORMATS",
    "EXPORT_FORMATS_HELP",
    "written_noun",
    "KEEP_POLICIES",
    "KEEP_SIGNALS",
    "PRM_VARIANTS",
    "RULE_NAMES",
    "SCAFFOLDS",
    "SOURCE_NAMES",
    "STRATEGY_NAMES",
]
