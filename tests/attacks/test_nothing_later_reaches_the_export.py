"""Issue 52, acceptance 2, end to end: a chain of one stage whose era image is built on a later
stage base (as `env setup` builds an era on its latest stage), rolled out by an agent that reads
every place a later commit could hide in (the README, the project's metadata and console scripts,
the whole file system), then exported. Nothing of the later commits may reach the export.

Both PRs land in one era (their manifests are the same), so the era is built on #2's base, which
holds #1's README (the long description), version and console script's code; PR #2 changes the
script again. The agent works on #1 at its base."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import git
from prchain.llm.config import LLMConfig
from tests.support.era_runs import invoke, remove_repo_images

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"seal-export-{uuid.uuid4().hex[:8]}/laterpkg"
MARKS = ("LATERREADME4c1e", "LATERCODE31f7", "LATERCODE2b95", "laterver9e4b")
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "laterpkg"
dynamic = ["version"]
description = "A package."
readme = "README.md"

[project.scripts]
laterpkg-cli = "laterpkg.cli:main"

[tool.setuptools]
packages = ["laterpkg"]

[tool.setuptools.dynamic]
version = {attr = "laterpkg.__version__"}
"""
OPS = "def add(x, y):\n    return x + y\n"
TEST = "from laterpkg.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
LOOK = (  # everything a curious agent reads, with the marks searched for over the whole disk
    "cat README.md; cat /opt/venv/lib/python3*/site-packages/laterpkg*.dist-info/* 2>/dev/null; "
    "ls /opt/venv/bin; pip show laterpkg 2>/dev/null; "
    "grep -rla --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
    + " ".join(f"-e {m[:4]}''{m[4:]}" for m in MARKS)  # split: the command itself holds no mark
    + " / 2>/dev/null; echo looked"
)


def _commit(path: Path, files: dict[str, str], message: str, date: str) -> None:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message, date=date)


def make_repo(path: Path) -> None:
    """A root, then #1 (sub, and a later README, version and console script's code) and #2 (mul,
    more of them). The manifests stay the same, so both stages fall in one era, built on #2's base."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    _commit(
        path,
        {
            "pyproject.toml": PYPROJECT,
            "README.md": "# laterpkg\n",
            "laterpkg/__init__.py": '__version__ = "1.0"\n',
            "laterpkg/cli.py": "def main():\n    print('hello')\n",
            "laterpkg/ops.py": OPS,
            "tests/test_ops.py": TEST,
        },
        "Start",
        "2024-03-01T12:00:00Z",
    )
    _commit(
        path,
        {
            "README.md": "# laterpkg\n\nLATERREADME4c1e: subtraction\n",
            "laterpkg/__init__.py": '__version__ = "1.1+laterver9e4b"\n',
            "laterpkg/cli.py": "def main():\n    print('LATERCODE31f7')\n",
            "laterpkg/ops.py": OPS + "\n\ndef sub(x, y):\n    return x - y\n",
            "tests/test_ops.py": TEST + "\n\ndef test_sub():\n    from laterpkg.ops import sub\n\n"
            "    assert sub(3, 2) == 1\n",
        },
        "Add subtraction (#1)",
        "2024-03-03T12:00:00Z",
    )
    _commit(
        path,
        {
            "laterpkg/cli.py": "def main():\n    print('LATERCODE2b95')\n",
            "laterpkg/ops.py": OPS + "\n\ndef sub(x, y):\n    return x - y\n"
            "\n\ndef mul(x, y):\n    return x * y\n",
        },
        "Add multiplication (#2)",
        "2024-03-05T12:00:00Z",
    )


def _policy(body: dict[str, Any]) -> dict[str, Any]:
    """Look everywhere first, then implement `sub` in its own words and submit."""
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    actions = [
        {"name": "bash", "arguments": {"command": LOOK}},
        {
            "name": "bash",
            "arguments": {
                "command": "printf '\\n\\ndef sub(a, b):\\n    return a + -b\\n' >> laterpkg/ops.py"
            },
        },
        {"name": "submit", "arguments": {"summary": "subtraction added"}},
    ]
    return {"tool_calls": [actions[min(turns, 2)]]}


@pytest.fixture
def own_images(docker_client: Any) -> Iterator[None]:
    yield
    remove_repo_images(docker_client, REPO)


def test_no_later_byte_reaches_the_export_of_an_earlier_stage(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_url: str,
    tmp_path: Path,
    base_image: str,
    own_images: None,
) -> None:
    clone = tmp_path / "laterpkg"
    make_repo(clone)
    config = tmp_path / "prchain.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "llm": llm_config.model_dump(mode="json"),
                "environment": {"log_dir": str(tmp_path / "logs")},
                "chains": {"min_chain_code_lines": 0},
                "eras": {
                    "suites": {"bookworm": "3.11"},
                    "extra_base_packages": [],
                    "test_packages": [],
                    "seed_packages": [],
                    "system_site_packages": True,  # pytest from Debian's python3-pytest
                },
            }
        )
    )
    fake_llm.push(model="query_constructor", content="Add a subtraction helper.", times=None)
    fake_llm.push(model="overview", content="The package gains arithmetic.", times=None)
    fake_llm.push(model="policy", responder=_policy, times=None)
    fake_llm.push(
        model="judge", content=json.dumps({"score": 0.9, "comment": "Acceptable."}), times=None
    )
    common = ["--config", str(config), "--db", sqlite_url]

    def run(*args: str) -> str:
        result = invoke(*args, *common)
        assert result.exit_code == 0, f"prchain {' '.join(args)}:\n{result.output}"
        return result.output

    run("mine", "--source", "git", "--name", REPO, str(clone))
    run("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1")
    assert "1 eras for 2 stages: 1 verified" in run("env", "setup")
    run("queries", "build")
    run("rollout")
    out = tmp_path / "trajectories.jsonl"
    run("export", str(out))

    records = [json.loads(line) for line in out.read_text().splitlines()]
    first = [r for r in records if r["metadata"]["pr_numbers"] == [1]]
    assert len(first) == 1, [r["metadata"]["pr_numbers"] for r in records]
    text = json.dumps(first[0])
    assert "looked" in text  # the agent's search ran and its output was exported
    assert [m for m in MARKS if m in text] == []
