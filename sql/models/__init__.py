"""All tables of the store. Import from here; each area keeps its tables in its own module."""

from sql.models.base import Base
from sql.models.environment import EnvTransition
from sql.models.eras import EnvRecipe, StageEra
from sql.models.leases import WorkLease
from sql.models.llm import LLMCacheEntry, LLMCall, LLMRepair
from sql.models.mining import (
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
from sql.models.p2t import P2TGraph, P2TStage
from sql.models.prm import PRMCall
from sql.models.rollouts import Judgement, Rollout, RolloutStage, Step
from sql.models.tasks import (
    Chain,
    ChainBuild,
    ChainLink,
    ChainStage,
    LinkVerdict,
    PairEvidence,
)
from sql.models.verdicts import StageVerification

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
