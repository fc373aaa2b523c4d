"""The one secret recogniser used by the LLM call log and the trajectory export."""

from prchain.core.secrets import REDACTED, Redactor


def test_known_values_from_the_environment_are_redacted_each_token_of_a_list(monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "first-token-value-123,second-token-value-456")
    redact = Redactor()
    text = redact("a first-token-value-123 b second-token-value-456 c")
    assert text == f"a {REDACTED} b {REDACTED} c" and redact.count == 2


def test_credential_shapes_are_redacted_and_ordinary_words_are_not(monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    redact = Redactor()
    text = redact("ghp_" + "a" * 36 + " token-budget sk-" + "b" * 20)
    assert text == f"{REDACTED} token-budget {REDACTED}" and redact.count == 2
