"""Python's facts (`prchain.environments.languages`)."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="python",
    source_suffixes=frozenset({".py", ".pyi", ".pyx", ".pxd"}),
    lock_files=frozenset({"poetry.lock", "uv.lock", "pipfile.lock", "pdm.lock"}),
    setup_agent=("Python", "PyPI"),
)
