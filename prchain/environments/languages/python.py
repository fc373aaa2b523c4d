"""Python's facts (`prchain.environments.languages`)."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="python",
    source_suffixes=frozenset({".py", ".pyi", ".pyx", ".pxd"}),
    lock_files=frozenset({"poetry.lock", "uv.lock", "pipfile.lock", "pdm.lock"}),
    # `test_x.py`, `x_test.py`, `tests.py`, and pytest's conftest.py
    test_file_names=r"^test_.*\.py$|_tests?\.py$|^tests?\.py$|^conftest\.py$",
    setup_agent=("Python", "PyPI"),
)
