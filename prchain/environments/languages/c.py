"""C's and C++'s facts (`prchain.environments.languages`)."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="c",
    source_suffixes=frozenset({".c", ".h", ".cc", ".cpp", ".hpp", ".cxx"}),
    test_file_names=r"_tests?\.(c|cc|cpp)$",
    setup_agent=("C/C++", "Debian's archive (apt)"),
)
