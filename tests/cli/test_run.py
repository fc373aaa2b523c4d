"""`prchain run`: the whole job in one command, resumable, each step that cannot run here skipped
with one line, and the funnel per repository and language at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from prchain.app.funnel import NO_TESTS
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.store import opener

EXAMPLES = Path(__file__).parents[2] / "examples"
DOCKER_STEPS = ("env setup", "tests verify", "tasks export --runnable", "tasks eval (gold)")


def _run(repo: Path, url: str, out: Path) -> Result:
    args = ["run", "--source", "git", "--name", "acme/calc", str(repo), "--db", url]
    args += ["--config", str(EXAMPLES / "demo.yaml"), "--out", str(out)]
    return CliRunner().invoke(main, args, catch_exceptions=False)


def _steps(out: Path) -> dict[str, tuple[str, str]]:
    record = json.loads((out / "funnel.json").read_text())
    assert record["format"] == "prchain.funnel/1"
    return {s["step"]: (s["status"], s["detail"]) for s in record["steps"]}


def test_without_an_engine_the_job_runs_what_it_can_and_resumes(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.load_script(EXAMPLES / "demo-llm.yaml")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-engine.sock'}")
    repo = make_chain_repo(tmp_path / "calc").path
    opened: list[str] = []
    make_engine = opener.make_engine
    monkeypatch.setattr(
        opener, "make_engine", lambda url, **kw: (opened.append(url), make_engine(url, **kw))[1]
    )
    first = _run(repo, sqlite_url, tmp_path / "out")
    assert first.exit_code == 0, first.output
    assert opened == [sqlite_url]  # the job's steps and its funnel share one store
    steps = _steps(tmp_path / "out")
    assert steps["mine"] == ("done", "4 new PRs in 1 repositories")
    assert steps["chains build"] == ("done", "1 chains, 1 of them new")
    assert steps["queries build"] == ("done", "3 queries written, 0 there already, 0 failed")
    for name in (*DOCKER_STEPS, "rollout"):
        assert steps[name][0] == "skipped" and "no Docker engine" in steps[name][1], name
    lines = [line for line in first.output.splitlines() if line.startswith("env setup:")]
    assert lines == ["env setup: skipped: no Docker engine answers (`make install` starts one)"]

    record = json.loads((tmp_path / "out" / "funnel.json").read_text())
    (calc,) = record["repositories"]
    counts = [calc[c] for c in ("name", "PRs", "stages", "with tests", "tested")]
    assert counts == ["acme/calc", 4, 3, 1, 0]
    # the chain's other two PRs change no test file: they leave before any environment is asked
    assert calc["losses"] == {"tested: no era environment set up": 1, NO_TESTS: 2}
    assert "acme/calc: lost at tested: no era environment set up: 1" in first.output

    again = _run(repo, sqlite_url, tmp_path / "out")  # a rerun resumes: nothing twice
    assert again.exit_code == 0, again.output
    steps = _steps(tmp_path / "out")
    assert steps["mine"] == ("done", "0 new PRs in 1 repositories")
    assert steps["chains build"] == ("done", "1 chains, 0 of them new")
    assert steps["queries build"] == ("done", "0 queries written, 3 there already, 0 failed")
    assert json.loads((tmp_path / "out" / "funnel.json").read_text())["repositories"] == [calc]


def test_without_a_model_server_the_model_steps_say_so(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-engine.sock'}")
    repo = make_chain_repo(tmp_path / "calc").path
    result = _run(repo, sqlite_url, tmp_path / "out")
    assert result.exit_code == 0, result.output
    status, detail = _steps(tmp_path / "out")["queries build"]
    assert status == "skipped" and "no model server configured for `query_constructor`" in detail


def test_a_repositorys_language_is_its_eras_not_an_unrecognised_base() -> None:
    """vmihailenco/msgpack (held out): a 2015 base before go.mod is stored as `unknown`, its 2020
    era as go; the funnel said `unknown` for the repository."""
    from prchain.app.funnel import _languages

    pairs = [("a/m", "unknown"), ("a/m", "go"), ("b/x", "unknown"), ("c/y", "rust")]
    pairs += [("c/y", "python"), ("c/y", "python"), ("d/z", "java"), ("d/z", "go")]
    assert _languages(pairs) == {"a/m": "go", "b/x": "unknown", "c/y": "python", "d/z": "java"}
