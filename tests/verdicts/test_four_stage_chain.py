"""Acceptance (issue 75, item 5) on a generated history: a chain of four stages, built with the
`hunks` fallback and again with `replay`, every stage entered in a rollout whose scripted agent
writes the gold code patches, and `tasks eval` resolving every stage through the carry-forward.

#1 adds `slugify` and its `SEPARATOR`; #2, #3 and #4 each build on the one before, at the foot of
the module. #5, between #2 and #3 and named by no PR, rewords #1's `SEPARATOR` line: at B_3 and
B_4 that hunk of g_1 does not revert, so stages 3 and 4 are entered by the fallback (by hunks,
the line kept as B_t has it; by replay, B_t itself with the agent's deviation from history, none
for a gold agent), stages 1 and 2 by revert.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.config import LLMConfig
from prchain.store.opener import make_engine
from tests.support.era_runs import (
    gold_resolves_in_tasks_eval,
    gold_rollout,
    mined_to_verified,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.history import History
from tests.support.links import chain_entries

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"four-stage-test-{uuid.uuid4().hex[:8]}/slugs"  # images are this run's own

TEXT_V0 = '''"""Text helpers."""

LIMIT = 40


def words(text):
    return text.split()


def _first(items):
    return items[0]


def _last(items):
    return items[-1]


def _middle(items):
    return items[1:-1]


def count(text):
    return len(words(text))
'''
TEXT_TEST_V0 = """from slugs.text import count


def test_count():
    assert count("a b c") == 3
"""
SLUGIFY_1 = '''

def slugify(text):
    """The words of `text`, lower-cased, joined by the separator."""
    parts = [word.lower() for word in words(text)]
    return SEPARATOR.join(parts)
'''
TEXT_1 = TEXT_V0.replace("LIMIT = 40\n", 'LIMIT = 40\nSEPARATOR = "-"\n') + SLUGIFY_1
SLUG_TEST_1 = """from slugs.text import slugify


def test_slugify_lowers_and_joins():
    assert slugify("Hello  World") == "hello-world"
"""
# #2 splits on commas too: a line inserted in #1's slugify, its return rewritten, a name using it.
TEXT_2 = TEXT_1.replace(
    "    parts = [word.lower() for word in words(text)]\n",
    '    text = text.replace(",", " ")\n    parts = [word.lower() for word in words(text)]\n',
).replace(
    "    return SEPARATOR.join(parts)\n",
    "    return SEPARATOR.join(part for part in parts if part)\n",
) + (
    "\n\ndef slug_words(text):\n"
    "    slug = slugify(text)\n"
    "    return slug.split(SEPARATOR) if slug else []\n"
)
SLUG_TEST_2 = SLUG_TEST_1.replace("import slugify", "import slug_words, slugify") + (
    "\n\ndef test_commas_split_words():\n"
    '    assert slugify("red,green, blue") == "red-green-blue"\n'
    '    assert slug_words("a,b") == ["a", "b"]\n'
)
# #5, outside the chain: #1's separator line reworded (a comment), nothing else.
TEXT_5 = TEXT_2.replace('SEPARATOR = "-"\n', 'SEPARATOR = "-"  # between the words of a slug\n')
# #3 caps the slug at LIMIT, inside #2's return line and slug_words.
TEXT_3 = TEXT_5.replace(
    "    return SEPARATOR.join(part for part in parts if part)\n",
    "    slug = SEPARATOR.join(part for part in parts if part)\n"
    "    return slug[:LIMIT].rstrip(SEPARATOR)\n",
).replace("    slug = slugify(text)\n", "    slug = slugify(text)[:LIMIT]\n")
SLUG_TEST_3 = SLUG_TEST_2 + (
    "\n\ndef test_long_slugs_are_capped():\n"
    '    slug = slugify("word " * 30)\n'
    '    assert len(slug) <= 40 and not slug.endswith("-")\n'
)
# #4 gives slug_words a limit of its own and a title slug, both on #3's cap.
TEXT_4 = (
    TEXT_3.replace("def slug_words(text):\n", "def slug_words(text, most=None):\n")
    .replace(
        "    slug = slugify(text)[:LIMIT]\n", "    slug = slugify(text)[:LIMIT].strip(SEPARATOR)\n"
    )
    .replace(
        "    return slug.split(SEPARATOR) if slug else []\n",
        "    found = slug.split(SEPARATOR) if slug else []\n"
        "    return found[:most] if most is not None else found\n",
    )
) + (
    "\n\ndef title_slug(title):\n"
    "    found = slug_words(title, most=5)\n"
    "    return SEPARATOR.join(found)[:LIMIT]\n"
)
SLUG_TEST_4 = SLUG_TEST_3.replace(
    "import slug_words, slugify", "import slug_words, slugify, title_slug"
) + (
    "\n\ndef test_title_slugs_keep_five_words():\n"
    '    assert title_slug("One two three four five six") == "one-two-three-four-five"\n'
    '    assert slug_words("a b c", most=2) == ["a", "b"]\n'
)


def make_slugs(path: Path) -> History:
    repo = History(path)
    repo.commit(
        "Initial commit",
        {
            "README.md": "# slugs\n",
            "slugs/__init__.py": "",
            "slugs/text.py": TEXT_V0,
            "tests/test_text.py": TEXT_TEST_V0,
        },
    )
    repo.pr(1, "Add slugify", {"slugs/text.py": TEXT_1, "tests/test_slug.py": SLUG_TEST_1})
    repo.pr(
        2,
        "Split slugs on commas",
        {"slugs/text.py": TEXT_2, "tests/test_slug.py": SLUG_TEST_2},
        body="Based on #1: slugify splits on commas as well, and slug_words reads a slug back.",
    )
    repo.pr(5, "Say what the separator is for", {"slugs/text.py": TEXT_5})
    repo.pr(
        3,
        "Cap slugs at the limit",
        {"slugs/text.py": TEXT_3, "tests/test_slug.py": SLUG_TEST_3},
        body="Based on #2: long slugs are cut at LIMIT, slug_words too.",
    )
    repo.pr(
        4,
        "Add title slugs",
        {"slugs/text.py": TEXT_4, "tests/test_slug.py": SLUG_TEST_4},
        body="Based on #3: a title's slug keeps its first five words, under the cap.",
    )
    return repo


@pytest.fixture(scope="module", params=["hunks", "replay"])
def slugs(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    docker_client: Any,
    base_image: str,
) -> Iterator[tuple[list[str], str, Path, str]]:
    """Mined, built with the fallback (`hunks`, `replay`), its era set up and its stages
    verified (once each)."""
    work = tmp_path_factory.mktemp("four-stages")
    repo = make_slugs(work / "slugs")
    eras = {"suites": {"bookworm": "3.11"}, "extra_base_packages": [], "test_packages": []}
    eras |= {"seed_packages": [], "system_site_packages": True}  # the demo's offline eras
    config = write_config(work, eras, entry_fallback=request.param)
    try:
        common, url = mined_to_verified(work, config, REPO, repo.path)
        yield common, url, work, request.param
    finally:
        remove_repo_images(docker_client, REPO)


def test_four_stages_are_entered_and_every_gold_stage_resolves(
    slugs: tuple[list[str], str, Path, str], fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    common, url, work, fallback = slugs
    entries = chain_entries(make_engine(url))
    assert entries == {(1, 2, 3, 4): ("revert", "revert", fallback, fallback)}, entries
    verdicts = verdicts_by_pr(url)
    assert {n: v.status for n, v in verdicts.items()} == dict.fromkeys((1, 2, 3, 4), "usable"), {
        n: v.reason for n, v in verdicts.items()
    }
    assert verdicts[4].fail_to_pass == ["tests/test_slug.py::test_title_slugs_keep_five_words"]

    stages = gold_rollout(common, url, llm_config, fake_llm)
    assert stages == [(1, True, []), (2, True, []), (3, True, []), (4, True, [])], stages
    out = gold_resolves_in_tasks_eval(common, work)
    assert "4 of 4 stages resolved; 1 of 1 chain resolved throughout" in out, out
