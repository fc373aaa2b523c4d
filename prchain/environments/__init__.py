"""Stage-wise sandboxes that carry the agent's own patch forward (B_t ⊕ Δ_(t-1)).

Use `prchain.environments.factory.open_environment(...)`; the `Environment` protocol is in
`prchain.environments.protocol`.
"""
