"""Building: the graph, the chain strategies, and the build that writes chains, stages and links to the store."""
