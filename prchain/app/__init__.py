"""The composition layer: the one place that reads the whole Config and wires components together."""
