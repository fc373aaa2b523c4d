"""pytest fixtures (loaded by tests/conftest.py as a plugin)."""
