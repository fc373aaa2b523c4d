"""A stage whose PR changes no test borrows the tests of a later stage of its chain
(prchain/chains/building/lent.py), on a real git history made here.

Issue 78: of the held-out chains, half held a stage whose PR changes no test file, so the chain
could not run whole; of the chains whose every PR changes tests, 60% did."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import ChainRepo, git, make_lending_repo
from prchain.llm.config import LLMConfig
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, PullRequest, StageVerification
from prchain.store.opener import make_engine
from prchain.verdicts.classify import classify

REPO = "acme/tally"
TEST_COMMAND = "python3 -m pytest -p no:cacheprovider {files}"
OPS_TESTS = "tests/test_ops.py"


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, f"prchain {' '.join(args)} failed:\n{result.output}"
    return result.output


@pytest.fixture
def tally(tmp_path: Path) -> ChainRepo:
    return make_lending_repo(tmp_path / "tally")


def _build(repo: ChainRepo, url: str, tmp_path: Path, **extra: Any) -> list[str]:
    config = tmp_path / "prchain.yaml"
    chains = {"min_chain_code_lines": 0} | extra.pop("chains", {})
    config.write_text(
        yaml.safe_dump(
            {
                "verdicts": {"repos": {REPO: {"test": TEST_COMMAND}}},
                "environment": {"log_dir": str(tmp_path / "logs")},
                "chains": chains,
                **extra,
            }
        )
    )
    common = ["--config", str(config), "--db", url]
    _invoke("mine", "--source", "git", "--name", REPO, str(repo.path), *common)
    _invoke("chains", "build", *common)
    return common


def _stages(url: str) -> list[tuple[int, int | None, str]]:
    """(PR number, lender's PR number, test patch) per stage, in chain order."""
    with session_scope(make_engine(url)) as session:
        numbers = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        rows = session.scalars(select(ChainStage).order_by(ChainStage.chain_id, ChainStage.idx))
        return [(numbers[s.pr_id], numbers.get(s.tests_from or 0), s.gold_test_patch) for s in rows]


def test_the_first_stage_borrows_the_second_stages_tests(
    tally: ChainRepo, sqlite_url: str, tmp_path: Path
) -> None:
    _build(tally, sqlite_url, tmp_path)
    (first, lender, patch), (second, own, second_patch) = _stages(sqlite_url)
    assert (first, lender, second, own) == (1, 2, 2, None)
    base, end = tally.prs[1].base_sha, tally.prs[2].merge_sha
    # B_1's test file brought to #2's merge, and nothing else of the tree
    assert patch == git(tally.path, "diff", base, end, "--", OPS_TESTS) + "\n"
    assert "def test_subtract_refuses_text" in patch and "calc/ops.py" not in patch
    assert second_patch == git(tally.path, "diff", tally.prs[2].base_sha, end, "--", "tests") + "\n"
    # it applies where the stage starts
    work = tmp_path / "at-base"
    git(tally.path, "worktree", "add", "-q", "--detach", str(work), base)
    subprocess.run(["git", "apply", "--check", "-"], cwd=work, input=patch.encode(), check=True)


def test_without_lending_the_stage_has_no_tests(
    tally: ChainRepo, sqlite_url: str, tmp_path: Path
) -> None:
    _build(tally, sqlite_url, tmp_path, chains={"lend_tests": False})
    assert [(number, lender, bool(patch)) for number, lender, patch in _stages(sqlite_url)] == [
        (1, None, False),
        (2, None, True),
    ]


def test_a_query_never_reads_the_lent_tests(
    tally: ChainRepo,
    sqlite_url: str,
    tmp_path: Path,
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
) -> None:
    common = _build(tally, sqlite_url, tmp_path, llm=llm_config.model_dump(mode="json"))
    fake_llm.push(model="query_constructor", content="Extend the calculator.", times=None)
    fake_llm.push(model="overview", content="Grow the calculator.", times=None)
    _invoke("queries", "build", *common)
    asked = [json.dumps(body) for body in fake_llm.requests_for("query_constructor")]
    assert asked and any("Add subtract operation" in text for text in asked)
    for text in asked:
        if "Add subtract operation" in text and "Add multiply operation" not in text:
            assert "test_ops.py" not in text and "refuses_text" not in text


def test_a_lent_test_the_gold_patch_fails_is_the_lenders_unless_it_passed_before() -> None:
    start = {"t::add": "passed"}
    tests = {"t::add": "passed", "t::subtract": "failed", "t::multiply": "failed"}
    gold = [{"t::add": "passed", "t::subtract": "passed", "t::multiply": "failed"}] * 2
    own = classify(start, tests, gold)
    assert own.status == "unusable" and own.gold_failing == ["t::multiply"]
    lent = classify(start, tests, gold, lent=True)
    assert (lent.status, lent.fail_to_pass, lent.pass_to_pass) == (
        "usable",
        ["t::subtract"],
        ["t::add"],
    )
    # a test that passed before the gold code patch and fails after it still refuses the stage
    broken = [run | {"t::add": "failed"} for run in gold]
    assert classify(start, tests, broken, lent=True).gold_failing == ["t::add"]


@pytest.mark.docker
@pytest.mark.slow
def test_tests_verify_requires_only_the_lent_tests_the_stage_passes(
    tally: ChainRepo, sqlite_url: str, tmp_path: Path, base_image: str
) -> None:
    common = _build(tally, sqlite_url, tmp_path)
    _invoke("tests", "verify", *common)
    with session_scope(make_engine(sqlite_url)) as session:
        found = {
            number: (v.status, v.fail_to_pass, v.pass_to_pass)
            for number, v in session.execute(
                select(PullRequest.number, StageVerification)
                .join(ChainStage, ChainStage.id == StageVerification.chain_stage_id)
                .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            )
        }
    assert found[1] == ("usable", [f"{OPS_TESTS}::test_subtract"], [f"{OPS_TESTS}::test_add"])
    assert found[2] == (
        "usable",
        [f"{OPS_TESTS}::test_multiply", f"{OPS_TESTS}::test_subtract_refuses_text"],
        [f"{OPS_TESTS}::test_add", f"{OPS_TESTS}::test_subtract"],
    )


def test_a_lent_module_that_does_not_import_asks_nothing(
    tmp_path: Path, sqlite_url: str, base_image: str
) -> None:
    """#2 also adds `calc/units.py` and its test module: lent to #1's stage, that module does
    not import there (it reads the lender's code). It asks nothing of the stage; before, its
    collection error made the stage "environment broken" and test_subtract was lost with it."""
    repo = make_lending_repo(tmp_path / "tally", units=True)
    common = _build(repo, sqlite_url, tmp_path)
    _invoke("tests", "verify", *common)
    with session_scope(make_engine(sqlite_url)) as session:
        first = session.scalars(
            select(StageVerification)
            .join(ChainStage, ChainStage.id == StageVerification.chain_stage_id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(PullRequest.number == 1)
        ).one()
        assert (first.status, first.reason) == ("usable", None)
        assert first.fail_to_pass == [f"{OPS_TESTS}::test_subtract"]
        assert "tests/test_units.py" in first.test_files  # run, and asked nothing


def test_a_stage_whose_base_commit_cannot_be_read_loses_only_itself(
    tally: ChainRepo, sqlite_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """pmd/pmd's snapshot (held out) lacks the objects of one stage's base commit: `env setup`
    failed whole ("git show -s … fatal: unable to read 4546f33…"), no era of any stage planned."""
    from prchain.setup.ladder import plan_eras

    _build(tally, sqlite_url, tmp_path)
    lost = tally.prs[2].base_sha
    (tally.path / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    with caplog.at_level("WARNING"):
        planned = plan_eras(make_engine(sqlite_url))
    assert [job.base_sha for _repo, job, _era, _n in planned] == [tally.prs[1].base_sha]
    assert f"stage 1:2 (base {lost[:12]}) has no era" in caplog.text


def test_a_lent_test_file_named_by_the_root_error_is_read_as_the_lenders() -> None:
    """tokio #2279 (Rust) was lent #2325's unit tests, inside the crate: they import the
    `batch_semaphore` #2325 adds, the lib's tests do not build, and no test reports. The reason
    names the lent tests, not the environment, when the root error is in one of their files."""
    from prchain.verdicts.verify import _in_files

    lent = "diff --git a/tokio/src/sync/tests/semaphore_batch.rs b/tokio/src/sync/tests/semaphore_batch.rs\n"
    root = "error[E0432]: unresolved import `crate::sync::batch_semaphore` (tokio/src/sync/tests/semaphore_batch.rs:1:124)"
    assert _in_files(root, lent)
    assert not _in_files(root.replace("semaphore_batch.rs", "semaphore_ll.rs"), lent)
    assert not _in_files(root.replace("tokio/src", "other/tokio/src"), lent)
