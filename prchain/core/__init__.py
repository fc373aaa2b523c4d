"""The bottom layer: errors, registries, secret redaction and the one git runner. Imports nothing of ours."""
