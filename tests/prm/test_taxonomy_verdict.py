"""The taxonomy as data, the variant registry and the parsing of PRM replies into verdicts."""

from __future__ import annotations

import json

import pytest

from prchain.core.errors import PRMOutputInvalid, UnknownName
from prchain.prm.taxonomy import load_taxonomy
from prchain.prm.variants import VARIANTS, get_variant
from prchain.prm.verdict import TaskStatus, parse_verdict
from tests.support.prm import TABLE1, verdict_json

TOOL_NAMES = ["bash", "submit"]


def test_taxonomy_has_three_families_of_four_categories_each_with_definition_and_recovery() -> None:
    taxonomy = load_taxonomy()
    assert [f.key for f in taxonomy.families] == ["specification", "reasoning", "coordination"]
    assert [len(f.categories) for f in taxonomy.families] == [4, 4, 4]
    assert len(set(taxonomy.category_keys())) == 12
    for category in taxonomy.categories:
        assert category.definition.strip() and category.recovery.strip() and category.name.strip()
    assert taxonomy.get("step_repetition").family == "specification"
    assert taxonomy.get("verification_failure").family == "coordination"


def test_all_eight_table1_variants_are_registered_with_their_axes() -> None:
    assert VARIANTS.names() == sorted(["S", "C", "CG", "D", "DN", "DG", "DNG", "DR"])
    axes = {
        name: (v.style, v.example, v.reasoning_to_policy, v.recommend_action)
        for name in VARIANTS
        for v in [VARIANTS.get(name)]
    }
    assert axes == TABLE1
    assert get_variant("dng").name == "DNG"


def test_unknown_variant_lists_the_valid_names() -> None:
    with pytest.raises(UnknownName, match="valid names: C, CG, D, DG, DN, DNG, DR, S"):
        get_variant("X")


def test_taxonomy_verdict_is_typed_and_lenient_about_spelling() -> None:
    reply = (
        "Here is my analysis:\n```json\n"
        + json.dumps(
            {
                "errors": {
                    "Step Repetition": {
                        "detected": "Yes",
                        "evidence": "ls ran 3 times",
                        "recovery_action": "open ops.py",
                    },
                    "hallucinations": {"detected": "no"},
                    "not_a_category": {"detected": True},
                },
                "task_status": "Critical intervention required",
                "guidance": "Open calc/ops.py.",
            }
        )
        + "\n```"
    )
    verdict = parse_verdict(reply, get_variant("D"), load_taxonomy(), TOOL_NAMES)
    assert verdict.task_status is TaskStatus.CRITICAL
    assert len(verdict.findings) == 12
    assert [(f.category, f.evidence, f.recovery_action) for f in verdict.detected] == [
        ("step_repetition", "ls ran 3 times", "open ops.py")
    ]
    assert verdict.to_json()["task_status"] == "critical"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I think the agent is fine.", "expected a JSON object"),
        (json.dumps({"errors": {}, "guidance": "x"}), "task_status"),
        (
            json.dumps({"errors": {}, "task_status": "great", "guidance": "x"}),
            "task_status must be",
        ),
        (
            json.dumps(
                {
                    "errors": {"step_repetition": {"detected": "maybe"}},
                    "task_status": "on_track",
                    "guidance": "",
                }
            ),
            "yes/no",
        ),
        (json.dumps({"errors": {}, "task_status": "on_track"}), "guidance"),
    ],
)
def test_malformed_taxonomy_replies_say_what_is_wrong(reply: str, message: str) -> None:
    with pytest.raises(PRMOutputInvalid, match=message):
        parse_verdict(reply, get_variant("D"), load_taxonomy(), TOOL_NAMES)


def test_dr_requires_a_recommended_call_of_one_of_the_agents_tools() -> None:
    dr, taxonomy = get_variant("DR"), load_taxonomy()
    good = verdict_json(action={"tool": "bash", "arguments": {"command": "pytest -q"}})
    assert (
        parse_verdict(good, dr, taxonomy, TOOL_NAMES).recommended_action.render()
        == 'bash(command="pytest -q")'
    )
    with pytest.raises(PRMOutputInvalid, match="recommended_action"):
        parse_verdict(verdict_json(), dr, taxonomy, TOOL_NAMES)
    with pytest.raises(PRMOutputInvalid, match="not one of the agent's tools"):
        parse_verdict(
            verdict_json(action={"tool": "python", "arguments": {}}), dr, taxonomy, TOOL_NAMES
        )
    # Other variants ignore a recommended action even when the model volunteers one.
    assert parse_verdict(good, get_variant("D"), taxonomy, TOOL_NAMES).recommended_action is None


def test_simple_variant_reads_analysis_and_guidance_without_status() -> None:
    verdict = parse_verdict(
        '{"analysis": "loops on ls", "guidance": "read ops.py"}',
        get_variant("S"),
        load_taxonomy(),
        [],
    )
    assert (verdict.analysis, verdict.guidance, verdict.task_status, verdict.findings) == (
        "loops on ls",
        "read ops.py",
        None,
        (),
    )


def test_config_normalizes_the_variant_and_rejects_typos_when_loading() -> None:
    from prchain.app.config import load_config
    from prchain.core.errors import ConfigError

    assert load_config(None, ["prm.variant=dng"]).prm.variant == "DNG"
    assert load_config(None, ["prm.variant=none"]).prm.variant is None
    with pytest.raises(ConfigError, match="unknown PRM variant 'X'; valid names"):
        load_config(None, ["prm.variant=X"])
