"""Test-only fakes and fixtures: a fake GitHub, pytest fixtures, store builders. Not installed."""
