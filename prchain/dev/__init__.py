"""What `prchain dev` and `make demo` run: a scripted OpenAI-compatible server and a demo repository builder.

Shipped product features (no pytest), unlike the fakes under tests/support.
"""
