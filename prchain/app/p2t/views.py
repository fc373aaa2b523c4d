"""What the CLI shows of P2T's stored results (graph drawings, curated stages against plain
rollouts), handed on from prchain.p2t because the CLI may reach the library only through the app
layer."""

from __future__ import annotations

from prchain.p2t.draw import draw_text, draw_tree
from prchain.p2t.stats import compare

__all__ = ["compare", "draw_text", "draw_tree"]
