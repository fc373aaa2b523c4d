"""What a build makes of the link vetter's stored verdicts (`prchain chains vet`, chains/vet.py).

A kept link whose verdict is weaker than `chains.vet_keep` is dropped (rule `vetter_rejected`).
A link dropped by one of the rules that only guess at shared code (`chains.vet_rescue`) and judged
`dependent` becomes an edge again: those rules read lines, names, file overlap and time, and miss
dependencies the wording states and the lines do not show ("Depends on #586" for a stack on a new
API, a fix after the code moved to another file). Both happen before the ancestry check, which a
rescued link must pass like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from sqlalchemy import Engine, select

from chains.config import ChainsConfig, VetKeep
from sql.models import LinkVerdict

if TYPE_CHECKING:
    from chains.graph import GraphReport, LinkDecision

REJECTED_RULE = "vetter_rejected"

Verdict = Literal["dependent", "borderline", "independent"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
# How strong each verdict is; a build keeps a link whose verdict reaches `vet_keep`.
STRENGTH = {"independent": 0, "borderline": 1, "dependent": 2}
RESCUED_AT = "dependent"  # a dropped link becomes an edge again only at the strongest verdict

Verdicts = dict[tuple[int, int], tuple[str, str]]


def keeps(verdict: str, keep: VetKeep) -> bool:
    return STRENGTH.get(verdict, 0) >= STRENGTH[keep]


def rescuable(rule: str | None, config: ChainsConfig) -> bool:
    """Whether `chains vet` asks about a link this rule dropped."""
    return rule is not None and rule in config.vet_rescue


def load_verdicts(engine: Engine) -> Verdicts:
    """(newer, older) → (verdict, reason) of every stored verdict."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                LinkVerdict.newer_pr_id,
                LinkVerdict.older_pr_id,
                LinkVerdict.verdict,
                LinkVerdict.reason,
            )
        )
        return {(newer, older): (verdict, reason) for newer, older, verdict, reason in rows}


def apply_verdicts(
    candidates: dict[tuple[int, int], dict[str, Any]],
    report: GraphReport,
    verdicts: Verdicts,
    config: ChainsConfig,
) -> None:
    """Drop the candidate edges the vetter rejected and add back the rescuable drops it judged
    dependent, recording both on their links and in the report's counts."""
    for link in report.links:
        said = verdicts.get((link.newer, link.older))
        if said is None:
            continue
        verdict, reason = said
        link.attrs["vetted"] = verdict  # the rules after lexing read it (`incidental_code_link`)
        if link.rule is None and not keeps(verdict, config.vet_keep):
            candidates.pop((link.newer, link.older), None)
            _record(link, REJECTED_RULE, verdict, reason, "the rules had kept it")
            report.dropped[REJECTED_RULE] += 1
        elif rescuable(link.rule, config) and verdict == RESCUED_AT:
            rule = str(link.rule)
            report.dropped[rule] -= 1
            if not report.dropped[rule]:
                del report.dropped[rule]
            link.attrs["rescued_from"] = rule
            _record(link, None, verdict, reason, f"the rules had dropped it as {rule}")
            candidates[(link.newer, link.older)] = link.attrs
            report.rescued += 1
        elif rescuable(link.rule, config):
            _record(link, link.rule, verdict, reason, "the rules dropped it")


def _record(link: LinkDecision, rule: str | None, verdict: str, reason: str, before: str) -> None:
    """The link's new rule, and a `why` that puts the vetter's verdict before the rules' reading."""
    said = f"the link vetter judged it {verdict}: {reason}".rstrip(": ")
    rules = link.attrs.get("why")
    link.attrs["why"] = f"{said}; {before}" + (f" ({rules})" if rules else "")
    link.rule = rule
