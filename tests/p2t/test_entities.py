"""The symbolic groundedness check on the worked example's mutated step and on leaks."""

from __future__ import annotations

import json

from prchain.p2t.entities import action_entities, check_entities, prose_entities, step_entities

ISSUE = (
    "ec2.describe_security_group_rules ignores Filters=[{'Name': 'group-id', 'Values': [sg_id]}] "
    "and returns rules of every security group."
)
EARLIER = [
    "grep -n 'def describe_security_group_rules' moto/ec2/responses/security_groups.py",
    "190     def describe_security_groups(self):\n191         filters = self._filters_from_querystring()\n"
    "197         filters = self._get_param('Filter')",
]
REASONING = (
    "Before going deeper into the model, let me check how the nearby sibling "
    "`describe_security_groups` in the same response file parses filters."
)
GREP = "grep -n 'def describe_security_groups\\|filters' moto/ec2/responses/security_groups.py | head -20"


def call(name: str, **args: object) -> dict[str, object]:
    return {"function": {"name": name, "arguments": json.dumps(args)}}


def test_the_worked_examples_mutation_is_grounded() -> None:
    ents = step_entities(REASONING, [call("bash", command=GREP)])
    assert {"describe_security_groups", "moto/ec2/responses/security_groups.py", "-n"} <= ents
    assert check_entities(ents, [ISSUE, *EARLIER]).passed


def test_ordinary_prose_words_are_not_entities() -> None:
    assert prose_entities("Before diving in, check the sibling handler nearby.") == set()


def test_an_unseen_helper_fails_the_gate() -> None:
    leak = "The fix is to call `_filters_from_querystring_v2` in the handler."
    result = check_entities(step_entities(leak, []), [ISSUE, *EARLIER])
    assert result.missing == {"_filters_from_querystring_v2"}


def test_unseen_path_line_and_error_fail() -> None:
    text = "ValueMismatchError at line 540 in moto/ec2/models/security_groups.py"
    result = check_entities(prose_entities(text), [ISSUE, *EARLIER])
    assert {"ValueMismatchError", "540", "moto/ec2/models/security_groups.py"} <= result.missing


def test_dotted_names_pass_on_a_seen_tail() -> None:
    ents = prose_entities("`responses.security_groups.describe_security_groups`")
    assert check_entities(ents, EARLIER).passed


def test_workspace_prefixes_are_normalised() -> None:
    ents = step_entities(
        "",
        [
            call(
                "str_replace_editor",
                command="view",
                path="/testbed/moto/ec2/responses/security_groups.py",
            )
        ],
    )
    assert check_entities(ents, EARLIER).passed


def test_authored_text_introduces_names_freely() -> None:
    ents = step_entities(
        "",
        [
            call(
                "str_replace_editor",
                command="create",
                path="repro.py",
                file_text="brand_new_name = 1\n",
            )
        ],
    )
    assert "brand_new_name" not in ents


def test_action_entities_of_an_unlocker() -> None:
    ents = action_entities("BASH(grep -rn _filters_from_querystring moto/ec2/responses/)")
    assert "_filters_from_querystring" in ents and "grep" not in ents
