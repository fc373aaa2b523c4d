"""prchain: chains of real pull requests turned into long-horizon agent training data."""

__version__ = "0.1.0"
