"""All tables of the store. Import from here; each area keeps its tables in its own module."""

from prchain.store.models.base import Base
from prchain.store.models.environment import EnvTransition
from prchain.store.models.eras import EnvRecipe, StageEra
from prchain.store.models.leases import WorkLease
from prchain.store.models.llm import LLMCacheEntry, LLMCall, LLMRepair
from prchain.store.models.mining import (
    Comment,
    Issue,
    MineRun,
    PRCommit,
    PRFile,
    PRPatch,
    PullRequest,
    Reference,
    Repo,
    SyncCursor,
)
from prchain.store.models.p2t import P2TGraph, P2TStage
from prchain.store.models.prm import PRMCall
from prchain.store.models.rollouts import Judgement, Rollout, RolloutStage, Step
from prchain.store.models.tasks import (
    Chain,
    ChainBuild,
    ChainLink,
    ChainStage,
    LinkVerdict,
    PairEvidence,
)
from prchain.store.models.verdicts import StageVerification

__all__ = [
    "Base",
    "Chain",
    "ChainBuild",
    "ChainLink",
    "ChainStage",
    "Comment",
    "EnvRecipe",
    "EnvTransition",
    "Issue",
    "Judgement",
    "LLMCacheEntry",
    "LLMCall",
    "LLMRepair",
    "LinkVerdict",
    "PairEvidence",
    "MineRun",
    "PRCommit",
    "PRFile",
    "P2TGraph",
    "P2TStage",
    "PRMCall",
    "PRPatch",
    "PullRequest",
    "Reference",
    "Repo",
    "Rollout",
    "RolloutStage",
    "StageEra",
    "StageVerification",
    "Step",
    "SyncCursor",
    "WorkLease",
]
