"""Stage-wise sandboxes that carry the agent's own patch forward (B_t ⊕ Δ_(t-1))."""
