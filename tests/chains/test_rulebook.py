"""The rulebook is the one place a link rule is named: the docs table, the CLI's `--rule` choices
and every rule set the build and the vetter use are read off it, and a name outside it is refused."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from click.testing import CliRunner

from prchain.chains import rulebook
from prchain.chains.config import ChainsConfig
from prchain.chains.record import EVIDENCE_FIELDS
from prchain.cli import main
from tests.cli.test_errors import one_line_error

ROOT = Path(__file__).resolve().parents[2]


def _table_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rule_table", ROOT / "scripts" / "rule_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_table_is_the_rulebook() -> None:
    script = _table_script()
    doc = (ROOT / "docs" / "chains.md").read_text()
    assert script.with_table(doc) == doc, "run `python scripts/rule_table.py`"
    for rule in rulebook.RULES:
        assert f"| `{rule.name}` | {rule.phase} |" in doc


def test_the_rule_sets_are_the_ones_the_rules_always_had() -> None:
    """Moving the sets into the table changed no decision: each is the set it was by hand."""
    assert {"pr_filtered_or_not_mined", "stage_below_substance"} == rulebook.STAGE_RULES
    by_lines = {
        "code_link_unbacked", "issue_only_uncorroborated", "plain_mention_without_shared_lines",
        "plain_mention_little_contact", "too_little_file_overlap", "gap_too_long",
        "wording_without_shared_code",
    }  # fmt: skip
    assert by_lines | {"parallel_wording"} == rulebook.LINEAGE_CAN_RESCUE
    assert by_lines == rulebook.SYMBOLS_CAN_RESCUE
    assert set(rulebook.VET_RESCUABLE) == {
        "wording_without_shared_code", "too_little_file_overlap", "gap_too_long",
        "plain_mention_without_shared_lines", "plain_mention_little_contact",
        "code_link_incidental", "uncorroborated",
    }  # fmt: skip
    assert set(ChainsConfig().vet_rescue) == {
        "wording_without_shared_code", "too_little_file_overlap", "gap_too_long",
        "code_link_incidental", "uncorroborated",
    }  # fmt: skip


def test_every_rule_has_one_row_and_a_phase_in_build_order() -> None:
    names = [rule.name for rule in rulebook.RULES]
    assert names == list(rulebook.RULE_NAMES) and len(set(names)) == len(names)
    order = [rulebook.PHASES.index(rule.phase) for rule in rulebook.RULES]
    assert order == sorted(order), "the table lists the rules in the order the build runs them"
    assert all(rule.reads and rule.why and rule.example for rule in rulebook.RULES)


def test_a_rule_the_vetter_may_not_lift_is_refused_in_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prchain.db'}"
    for wrong in ("not_an_ancestor", "gap_to_long"):
        result = CliRunner().invoke(
            main, ["chains", "build", "--db", url, "--set", f"chains.vet_rescue=[{wrong}]"]
        )
        one_line_error(result, "invalid configuration", "config show", status=2)
        said = f"{wrong} is no rule the vetter may lift; choose from "
        assert said + ", ".join(rulebook.VET_RESCUABLE) in result.output


def test_an_unknown_rule_is_refused_by_the_cli_with_the_valid_ones(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prchain.db'}"
    result = CliRunner().invoke(main, ["chains", "links", "--db", url, "--rule", "gap_to_long"])
    assert result.exit_code == 2
    assert "'gap_to_long' is not one of" in result.output and "'gap_too_long'" in result.output


def test_each_rule_names_the_fields_of_the_record_it_reads() -> None:
    """A rule that judges the pair's record names the fields it reads; one that reads the PRs
    themselves (their times, files, substance) or git names none."""
    on_the_record = {"pair", "vetter", "code_link", "corroboration"}
    for rule in rulebook.RULES:
        assert set(rule.fields) <= set(EVIDENCE_FIELDS), rule.name
        assert len(set(rule.fields)) == len(rule.fields), rule.name
        assert bool(rule.fields) == (rule.phase in on_the_record), rule.name
    doc = (ROOT / "docs" / "chains.md").read_text()
    for rule in rulebook.RULES:
        for name in rule.fields:
            assert f"`{name}`" in doc
