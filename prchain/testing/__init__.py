"""Local stand-ins for the outside world, for tests, benchmarks and offline demos.

Fake GitHub and OpenAI-compatible servers listen on 127.0.0.1 and speak real HTTP, so the real
PyGithub and openai clients are exercised; the repository builder makes real git history.
"""
