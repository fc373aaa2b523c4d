"""The closed value sets of P2T, each defined once; the config and the CLI derive from these.

Several of them exist because the paper disagrees with itself; docs/p2t.md says which way each
default goes and why.
"""

from __future__ import annotations

from typing import Literal, get_args

NodeType = Literal[
    "fact", "reproduce_script", "issue_analysis", "fix_plan", "code_edit", "validation"
]
NODE_TYPES: tuple[str, ...] = get_args(NodeType)
# Milestones in the order a developer reaches them; an artifact depends on every earlier kind.
ARTIFACT_ORDER: tuple[str, ...] = NODE_TYPES[1:]

FactKind = Literal["static", "dynamic"]
FACT_KINDS: tuple[str, ...] = get_args(FactKind)

EtaMode = Literal["const", "frontier_scaled"]
"""const: the floor is `eta` (worked example); frontier_scaled: eta · max(1, |A|) (hyper-parameter table)."""
ETA_MODES: tuple[str, ...] = get_args(EtaMode)

OutOfOrderMode = Literal["drop", "strict"]
"""drop: credit the in-order part of a step, block the rest (worked example);
strict: any out-of-order node zeroes the whole step (the Prog formula)."""
OOO_MODES: tuple[str, ...] = get_args(OutOfOrderMode)

LenMode = Literal["response_tokens", "response_plus_observation_tokens", "steps"]
LEN_MODES: tuple[str, ...] = get_args(LenMode)

FallbackMode = Literal["seed", "pool"]
"""When nothing clears the floor: seed = the pure seed with the highest Eff (App H);
pool = the highest Eff of the whole pool (Algorithm 1)."""
FALLBACK_MODES: tuple[str, ...] = get_args(FallbackMode)

PickMode = Literal["shortest", "random"]
"""shortest: shortest above the floor; random: the ablation picking uniformly above the floor."""
PICK_MODES: tuple[str, ...] = get_args(PickMode)

Verdict = Literal["keep", "prune", "revise"]
VERDICTS: tuple[str, ...] = get_args(Verdict)

HardCheck = Literal[
    "patch_leakage", "unreplayable", "unverified", "premature", "compound", "edit_drift"
]
"""The critic's pruning reasons (H1..H6 of the paper)."""
HARD_CHECKS: tuple[str, ...] = get_args(HardCheck)

PrefilterMode = Literal["entities", "none"]
"""Which pending nodes the establishment verifier is asked about after a step: entities = only
those the step could have surfaced (tool type + entity overlap, prchain/p2t/prefilter.py);
none = every pending node (the paper's App H, as written)."""
PREFILTER_MODES: tuple[str, ...] = get_args(PrefilterMode)
