"""Test verdicts per stage: which tests a gold patch turns from failing to passing, and T(p̂)."""
