"""Each room's facts are data the chain side, the clean room and the setup agent read; the code
reading that uses them stays pure (no room's builder, no docker, no store is loaded)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from prchain.chains.reading.patches import is_test_path
from prchain.chains.reading.paths import is_config_path, is_lockfile
from prchain.environments import languages
from prchain.environments.eras.ecosystems import ECOSYSTEMS, _load
from prchain.verdicts import crossing


def test_every_room_has_its_facts_and_every_fact_a_room() -> None:
    _load()
    assert set(ECOSYSTEMS) == set(languages.LANGUAGES)
    for facts in languages.all_facts():
        assert facts.source_suffixes and all(s.startswith(".") for s in facts.source_suffixes)
        assert all(facts.setup_agent), facts.name
    suffixes = [s for f in languages.all_facts() for s in f.source_suffixes]
    assert len(suffixes) == len(set(suffixes)), "a suffix belongs to one language"


def test_the_chain_side_and_the_clean_room_read_the_rooms_facts() -> None:
    for facts in languages.all_facts():
        assert facts.source_suffixes <= crossing.SOURCE_SUFFIXES
        for lock in facts.lock_files:
            assert is_lockfile(f"sub/{lock}") and is_config_path(lock)
    assert languages.language_of("crates/ruff/src/lib.rs") == "rust"
    assert languages.language_of("src/Main.KT") == "java"
    assert languages.language_of("README.md") is None and languages.language_of(".go") is None
    for name in ("go_test.mod", "go.work.sum"):
        assert is_config_path(f"nats/{name}")
    assert is_lockfile("go_test.sum") and not is_lockfile("go_test.mod")


def test_an_unknown_language_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown language 'cobol'; known: python, rust, go"):
        languages.language_facts("cobol")


def test_reading_code_loads_no_room_builder() -> None:
    """`prchain.chains.reading` may not reach the store or git; reading the rooms' facts loads
    nothing of their builders (docker, the era machinery)."""
    code = (
        "import json, sys, prchain.chains.reading.paths as p; p.is_lockfile('Cargo.lock');"
        " print(json.dumps(sorted(m for m in sys.modules if m.startswith("
        "('prchain.environments', 'prchain.store', 'prchain.core.git', 'docker')))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rooms = [f"prchain.environments.languages.{name}" for name in languages.LANGUAGES]
    expected = ["prchain.environments", "prchain.environments.languages", *rooms]
    assert json.loads(run.stdout) == sorted(expected)


def test_a_test_file_is_known_by_its_languages_facts() -> None:
    """The test side of a gold patch comes from each room's `test_file_names`; a name that no
    room's pattern knows is code, unless it is one of the few test files of no room's language."""
    named = {
        "python": "pkg/test_area.py",
        "go": "geom/area_test.go",
        "rust": "src/area_test.rs",
        "c": "tests/../src/area_test.c",
        "node": "src/area.spec.ts",
        "java": "src/main/java/AreaTest.java",
    }
    for name in languages.LANGUAGES:
        facts = languages.language_facts(name)
        assert facts.test_file_names, name
        assert re.search(facts.test_file_names, named[name].rsplit("/", 1)[-1]), name
        assert is_test_path(named[name]), name
    assert not is_test_path("src/area.rs") and not is_test_path("src/Area.java")
    assert is_test_path("spec/area_test.rb") and is_test_path("t/basic.t")


def test_a_language_that_writes_tests_in_its_sources_says_where_they_begin() -> None:
    rust = (
        "pub fn area() -> u32 { 4 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn a() {}\n}\n"
    )
    reader = languages.tests_in_file("src/lib.rs")
    assert reader is not None and reader(rust) == 3
    assert languages.tests_in_file("src/lib.go") is None
    assert languages.tests_in_file("README") is None
