"""Reference graph, chain strategies, intent-level queries and task export."""
