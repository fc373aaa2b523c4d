"""Which changes touch tests or test configuration (what a clean room and the gates leave out)."""

from __future__ import annotations

import pytest

from prchain.chains.reading.patches import changes_test_config, is_test_config_path, is_test_path
from prchain.verdicts.sandbox import byte_sections, section_paths

SETUP_CFG = "[metadata]\nname = geo\n\n[options]\npackages = find:\n"
PYPROJECT = '[project]\nname = "geo"\ndependencies = ["attrs"]\n'


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("conftest.py", True),
        ("src/pkg/conftest.py", True),
        ("pytest.ini", True),
        ("tox.ini", True),
        ("noxfile.py", True),
        ("sitecustomize.py", True),
        ("lib/evil.pth", True),
        ("setup.cfg", False),  # decided by its contents
        ("pyproject.toml", False),
        ("geo/shapes.py", False),
    ],
)
def test_whole_files_of_test_configuration(path: str, expected: bool) -> None:
    assert is_test_config_path(path) is expected


def test_test_paths_include_django_style_modules() -> None:
    assert is_test_path("app/tests.py") and is_test_path("pkg/shapes_tests.py")
    assert not is_test_path("pkg/testing_utils.py") and not is_test_path("src/contest.py")


def test_setup_cfg_counts_only_when_a_test_section_changes() -> None:
    assert not changes_test_config("setup.cfg", SETUP_CFG, SETUP_CFG.replace("geo", "geo2"))
    forced = SETUP_CFG + "\n[tool:pytest]\naddopts = -p geo.plugin\n"
    assert changes_test_config("setup.cfg", SETUP_CFG, forced)
    assert changes_test_config("setup.cfg", forced, forced.replace("geo.plugin", "x"))
    assert changes_test_config("setup.cfg", None, forced)  # a new file with a test section
    assert not changes_test_config("setup.cfg", None, SETUP_CFG)
    assert changes_test_config("setup.cfg", SETUP_CFG, "[broken\n")  # unparsable: counts


def test_pyproject_counts_pytest_coverage_tox_and_plugin_entry_points() -> None:
    assert not changes_test_config("pyproject.toml", PYPROJECT, PYPROJECT.replace("attrs", "six"))
    for extra in (
        '[tool.pytest.ini_options]\naddopts = "-p geo.plugin"\n',
        "[tool.coverage.run]\nbranch = true\n",
        '[project.entry-points.pytest11]\ngeo = "geo.plugin"\n',
    ):
        assert changes_test_config("pyproject.toml", PYPROJECT, PYPROJECT + extra), extra


def test_binary_sections_and_both_names_of_a_rename() -> None:
    patch = (
        b"diff --git a/tests/test_x.py b/geo/x.py\nsimilarity index 90%\n"
        b"rename from tests/test_x.py\nrename to geo/x.py\n"
        b"diff --git a/blob.bin b/blob.bin\nnew file mode 100644\nGIT binary patch\nliteral 3\n"
        b"Kc${NkU|;|M00aO5\n\nliteral 0\nHcmV?d00001\n\n"
    )
    first, second = byte_sections(patch)
    assert first + second == patch
    assert section_paths(first.decode()) == ["geo/x.py", "tests/test_x.py"]
    assert section_paths(second.decode()) == ["blob.bin"]
    assert byte_sections(b"") == []
