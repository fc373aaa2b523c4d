"""Java's facts (`prchain.environments.languages`): the JVM languages its room builds."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="java",
    source_suffixes=frozenset({".java", ".kt", ".scala"}),
    test_file_names=r"Tests?\.(java|kt|scala)$",
    setup_agent=("Java", "Maven Central"),
)
